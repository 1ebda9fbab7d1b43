#include "decoder/state_changes.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "decoder/named_state.h"

namespace cmc::decoder {

namespace {

// Equal bytes between two changed ones that still make one run.
constexpr std::size_t kRunGap = 3;
// The most bytes of text around a change shown.
constexpr std::size_t kMostText = 48;

// The lines of a description in the order they print.
struct Lines {
  std::string_view program;           // the file of the program's sections
  std::vector<std::string> main;      // the program's globals
  std::vector<std::string> process;   // chunks, descriptors, mappings
  std::vector<std::string> libraries; // the libraries' globals, .got.plt
  std::vector<std::string> stacks;    // a summary per stack
  std::vector<std::string> registers; // a summary per thread
};

bool starts(std::string_view name, std::string_view prefix) {
  return name.starts_with(prefix);
}

// "heap chunk 3" of "heap chunk 3 (32 B)".
std::string_view short_name(std::string_view piece) {
  if (chunk_number(piece) != 0)
    return piece.substr(0, piece.find(" ("));
  return piece;
}

// The two states with the piece of each compared.
struct Pair {
  const NamedState &before;
  const NamedState &after;
  const StatePiece &a;
  const StatePiece &b;
};

// The data object holding offset, as an index to tell runs apart.
const Symbol *symbol_of(const Pair &pair, std::size_t offset) {
  std::size_t into = 0;
  return NamedState::symbol_at(pair.b, offset, into);
}

// "cells+0" in a section with data objects, else "+0x10" or "+8" after
// the piece's name; the line's text before the values.
std::string place(const Pair &pair, std::size_t offset) {
  std::size_t into = 0;
  if (const auto *symbol = NamedState::symbol_at(pair.b, offset, into))
    return fmt::format("{}: {}+{}", pair.b.name, symbol->name, into);
  if (chunk_number(pair.b.name) != 0)
    return fmt::format("{}+{}:", short_name(pair.b.name), offset);
  return fmt::format("{}+{:#x}:", pair.b.name, offset);
}

// Whether the bytes [begin, end) of both sides are text or NUL, some text.
bool text_like(std::span<const std::byte> a, std::span<const std::byte> b,
               std::size_t begin, std::size_t end) {
  bool any = false;
  for (std::size_t i = begin; i < end; ++i)
    for (const auto byte : {a[i], b[i]}) {
      if (!printable(byte) && byte != std::byte{0})
        return false;
      any = any || printable(byte);
    }
  return any;
}

// [begin, end) widened to the text around it on either side, inside
// [low, high).
std::pair<std::size_t, std::size_t>
text_around(std::span<const std::byte> a, std::span<const std::byte> b,
            std::size_t begin, std::size_t end, std::size_t low,
            std::size_t high) {
  const auto text = [&](std::size_t i) {
    return printable(a[i]) || printable(b[i]);
  };
  while (begin > low && end - begin < kMostText && text(begin - 1))
    --begin;
  while (end < high && end - begin < kMostText && text(end))
    ++end;
  return {begin, end};
}

// The text of bytes up to their first NUL.
std::string text_of(std::span<const std::byte> bytes) {
  const auto nul = std::find(bytes.begin(), bytes.end(), std::byte{0});
  return quoted(bytes.first(static_cast<std::size_t>(nul - bytes.begin())));
}

// One line for the changed bytes [begin, end) of the pair.
std::string run_line(const Pair &pair, std::size_t begin, std::size_t end) {
  const auto a = pair.before.bytes(pair.a);
  const auto b = pair.after.bytes(pair.b);
  if (text_like(a, b, begin, end)) {
    std::size_t low = 0;
    std::size_t high = std::min(a.size(), b.size());
    std::size_t into = 0;
    if (const auto *symbol = NamedState::symbol_at(pair.b, begin, into)) {
      low = begin - into;
      high = std::min(high, low + symbol->size);
    }
    const auto [from, to] = text_around(a, b, begin, end, low, high);
    // A lone character is as likely a number that happens to print.
    if (to - from >= 2)
      return fmt::format("{} {} -> {}", place(pair, from),
                         text_of(a.subspan(from, to - from)),
                         text_of(b.subspan(from, to - from)));
  }
  return fmt::format("{} {} -> {}", place(pair, begin),
                     hex_bytes(a.subspan(begin, end - begin)),
                     hex_bytes(b.subspan(begin, end - begin)));
}

// "pointer to chunk 2", with "(freed)" when the chunk is gone in other
// and "(new)" when other has no such chunk (new_note).
std::string pointer_text(const NamedState &state, const WordValue &value,
                         const NamedState &other, const char *gone_note) {
  if (!value.pointer())
    return state.target_text(value);
  std::string text = "pointer to " + state.target_text(value);
  if (value.kind == WordValue::Kind::kChunk && value.value != 0 &&
      other.chunk_at(value.value) == nullptr)
    text += gone_note;
  return text;
}

// The changed bytes that are no pointer, grouped in runs inside one data
// object.
void byte_runs(const Pair &pair, const std::vector<std::size_t> &changed,
               std::vector<std::string> &out) {
  std::size_t i = 0;
  while (i < changed.size()) {
    std::size_t j = i + 1;
    const Symbol *symbol = symbol_of(pair, changed[i]);
    while (j < changed.size() && changed[j] - changed[j - 1] <= kRunGap + 1 &&
           symbol_of(pair, changed[j]) == symbol)
      ++j;
    out.push_back(run_line(pair, changed[i], changed[j - 1] + 1));
    i = j;
  }
}

// The lines of the bytes two versions of a piece differ in.
void diff_piece(const Pair &pair, std::vector<std::string> &out) {
  const auto a = pair.before.bytes(pair.a);
  const auto b = pair.after.bytes(pair.b);
  const std::size_t size = std::min(a.size(), b.size());
  std::vector<std::size_t> changed;
  for (std::size_t word = 0; word < size; word += 8) {
    if (word + 8 <= size && (pair.before.is_pointer(pair.a, word) ||
                             pair.after.is_pointer(pair.b, word))) {
      const auto was = pair.before.word(pair.a, word);
      const auto now = pair.after.word(pair.b, word);
      if (!was.same(now))
        out.push_back(
            fmt::format("{} {} -> {}", place(pair, word),
                        pointer_text(pair.before, was, pair.after, " (freed)"),
                        pointer_text(pair.after, now, pair.before, " (new)")));
      continue;
    }
    for (std::size_t i = word; i < std::min(size, word + 8); ++i)
      if (a[i] != b[i])
        changed.push_back(i);
  }
  byte_runs(pair, changed, out);
  if (a.size() != b.size())
    out.push_back(
        fmt::format("{}: {} -> {} bytes", pair.b.name, a.size(), b.size()));
}

// A descriptor piece's words (descriptor_bytes in canonical_state.cc):
// flags, position, client, the number of watch words, the watches, then
// the kind as text.
std::uint64_t fd_word(const NamedState &state, const StatePiece &piece,
                      std::size_t index) {
  std::uint64_t value = 0;
  if ((index + 1) * 8 <= piece.size)
    std::memcpy(&value, state.bytes(piece).data() + index * 8, 8);
  return value;
}

std::string fd_kind(const NamedState &state, const StatePiece &piece) {
  const std::size_t at = (4 + fd_word(state, piece, 3)) * 8;
  if (at > piece.size)
    return "?";
  const auto bytes = state.bytes(piece).subspan(at);
  std::string kind(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  const auto client = static_cast<std::int64_t>(fd_word(state, piece, 2));
  if (client == -2)
    kind += " (listening)";
  else if (client >= 0)
    kind += fmt::format(" (client {})", client + 1);
  return kind;
}

void diff_fd(const Pair &pair, std::vector<std::string> &out) {
  const auto kind_was = fd_kind(pair.before, pair.a);
  const auto kind_now = fd_kind(pair.after, pair.b);
  if (kind_was != kind_now) {
    out.push_back(fmt::format("{} reopened: {} (was {})", pair.b.name, kind_now,
                              kind_was));
    return;
  }
  const auto word = [&](std::size_t i) {
    return std::pair(fd_word(pair.before, pair.a, i),
                     fd_word(pair.after, pair.b, i));
  };
  if (const auto [was, now] = word(0); was != now)
    out.push_back(fmt::format("{} flags {:o} -> {:o}", pair.b.name, was, now));
  if (const auto [was, now] = word(1); was != now)
    out.push_back(fmt::format("{} position {} -> {}", pair.b.name, was, now));
  // The watch words: from the count's word to the kind.
  const auto watches = [](const NamedState &state, const StatePiece &piece) {
    const auto bytes = state.bytes(piece);
    const std::size_t end =
        std::min(bytes.size(), (4 + fd_word(state, piece, 3)) * 8);
    return bytes.subspan(std::min<std::size_t>(24, end),
                         end - std::min<std::size_t>(24, end));
  };
  if (!std::ranges::equal(watches(pair.before, pair.a),
                          watches(pair.after, pair.b)))
    out.push_back(fmt::format("{} watches {} -> {} descriptors", pair.b.name,
                              fd_word(pair.before, pair.a, 3) / 3,
                              fd_word(pair.after, pair.b, 3) / 3));
}

// "registers of thread 1: rax, rcx".
std::string register_line(const Pair &pair) {
  const auto a = pair.before.bytes(pair.a);
  const auto b = pair.after.bytes(pair.b);
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i + 8 <= std::min(a.size(), b.size()); i += 8)
    if (!std::equal(a.begin() + static_cast<long>(i),
                    a.begin() + static_cast<long>(i + 8),
                    b.begin() + static_cast<long>(i)) &&
        i / 8 < register_names().size())
      names.push_back(register_names()[i / 8]);
  if (names.empty())
    return "";
  return fmt::format("{}: {}", pair.b.name, fmt::join(names, ", "));
}

std::string stack_line(const Pair &pair) {
  std::vector<std::string> lines;
  diff_piece(pair, lines);
  if (lines.empty())
    return "";
  const auto a = pair.before.bytes(pair.a);
  const auto b = pair.after.bytes(pair.b);
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    bytes += a[i] != b[i] ? 1 : 0;
  if (a.size() != b.size())
    return fmt::format("{}: {} -> {} bytes", pair.b.name, a.size(), b.size());
  return fmt::format("{}: {} byte{} changed", pair.b.name, bytes,
                     bytes == 1 ? "" : "s");
}

// The mappings one state has and the other not.
void diff_mappings(const NamedState &before, const NamedState &after,
                   std::vector<std::string> &out) {
  const auto names = [](const NamedState &state) {
    std::set<std::string> set;
    if (const auto *piece = state.piece("mappings")) {
      const auto bytes = state.bytes(*piece);
      std::string_view text(reinterpret_cast<const char *>(bytes.data()),
                            bytes.size());
      for (std::size_t at = 0; at < text.size();) {
        const auto end = std::min(text.find('\0', at), text.size());
        set.emplace(text.substr(at, end - at));
        at = end + 1;
      }
    }
    return set;
  };
  const auto was = names(before);
  const auto now = names(after);
  for (const auto &name : now)
    if (!was.contains(name))
      out.push_back("mapped: " + name);
  for (const auto &name : was)
    if (!now.contains(name))
      out.push_back("unmapped: " + name);
}

// The file a section piece is of: "kv" of ".bss of kv".
std::string_view file_of(std::string_view piece) {
  const auto of = piece.find(" of ");
  return of == std::string_view::npos ? piece : piece.substr(of + 4);
}

// The program's file: that of its first section with data objects (the
// lowest mapped).
std::string_view program_of(const NamedState &state) {
  for (const auto &piece : state.pieces())
    if (piece.symbols)
      return file_of(piece.name);
  return {};
}

// A piece both states have, by its kind. The program's own globals come
// first; its table of library functions (.got.plt, written as ld.so
// binds them) with the libraries'.
void diff_root(const Pair &pair, Lines &lines) {
  const std::string_view name = pair.b.name;
  if (name == "mappings")
    diff_mappings(pair.before, pair.after, lines.process);
  else if (starts(name, "registers of"))
    lines.registers.push_back(register_line(pair));
  else if (starts(name, "stack of"))
    lines.stacks.push_back(stack_line(pair));
  else if (starts(name, "fd "))
    diff_fd(pair, lines.process);
  else if (pair.b.symbols && file_of(name) == lines.program &&
           !starts(name, ".got"))
    diff_piece(pair, lines.main);
  else
    diff_piece(pair, lines.libraries);
}

// A piece only one state has.
std::string alone_line(const NamedState &state, const StatePiece &piece,
                       bool added) {
  if (starts(piece.name, "fd "))
    return fmt::format("{} {}: {}", piece.name, added ? "opened" : "closed",
                       fd_kind(state, piece));
  if (chunk_number(piece.name) != 0)
    return fmt::format("{} {}: {}", piece.name, added ? "allocated" : "freed",
                       state.preview(piece, 0, piece.size));
  return fmt::format("{} {}", piece.name, added ? "added" : "gone");
}

// The pieces that are no heap chunk, in the order after has them.
void diff_roots(const NamedState &before, const NamedState &after,
                Lines &lines) {
  for (const auto &piece : before.pieces())
    if (chunk_number(piece.name) == 0 && after.piece(piece.name) == nullptr)
      lines.process.push_back(alone_line(before, piece, false));
  for (const auto &piece : after.pieces()) {
    if (chunk_number(piece.name) != 0)
      continue;
    const auto *was = before.piece(piece.name);
    if (was == nullptr)
      lines.process.push_back(alone_line(after, piece, true));
    else
      diff_root(Pair{before, after, *was, piece}, lines);
  }
}

// The same chunk in the other state: by address when known, else by name.
const StatePiece *same_chunk(const NamedState &other, const StatePiece &chunk) {
  if (chunk.address != 0) {
    const auto *found = other.chunk_at(chunk.address);
    return found != nullptr && found->size == chunk.size ? found : nullptr;
  }
  return other.piece(chunk.name);
}

void diff_chunks(const NamedState &before, const NamedState &after,
                 Lines &lines) {
  for (const auto &piece : before.pieces())
    if (chunk_number(piece.name) != 0 && same_chunk(after, piece) == nullptr)
      lines.process.push_back(alone_line(before, piece, false));
  for (const auto &piece : after.pieces()) {
    if (chunk_number(piece.name) == 0)
      continue;
    const auto *was = same_chunk(before, piece);
    if (was == nullptr)
      lines.process.push_back(alone_line(after, piece, true));
    else
      diff_piece(Pair{before, after, *was, piece}, lines.process);
  }
}

// At most max_lines of lines, the last saying how many more there were.
std::vector<std::string> capped(std::vector<std::string> lines,
                                std::size_t max_lines, const char *what) {
  if (lines.size() <= max_lines || max_lines == 0)
    return lines;
  const std::size_t more = lines.size() - (max_lines - 1);
  lines.resize(max_lines - 1);
  lines.push_back(fmt::format("and {} more {}", more, what));
  return lines;
}

// Whether the value of bytes [begin, end) of piece is not all zero.
bool live(const NamedState &state, const StatePiece &piece, std::size_t begin,
          std::size_t end) {
  const auto bytes = state.bytes(piece);
  for (std::size_t i = begin; i < std::min(end, bytes.size()); ++i)
    if (bytes[i] != std::byte{0})
      return true;
  for (std::size_t word = begin / 8 * 8; word < end; word += 8)
    if (state.is_pointer(piece, word))
      return true;
  return false;
}

// "cmc_state = 01 00", "cells = &chunk 1".
std::string global_line(const NamedState &state, const StatePiece &piece,
                        const Symbol &symbol, std::size_t begin,
                        std::size_t end) {
  bool pointer = false;
  for (std::size_t word = begin / 8 * 8; word < end; word += 8)
    pointer = pointer || state.is_pointer(piece, word);
  if (end - begin <= 8 && !pointer)
    return fmt::format(
        "{} = {}", symbol.name,
        hex_bytes(state.bytes(piece).subspan(begin, end - begin)));
  return fmt::format("{} = {}", symbol.name, state.preview(piece, begin, end));
}

// The live globals of a section, as lines, or counted.
void piece_globals(const NamedState &state, const StatePiece &piece,
                   std::vector<std::string> *lines, std::size_t &count) {
  const auto &symbols = *piece.symbols;
  auto symbol = std::lower_bound(
      symbols.begin(), symbols.end(), piece.link_address,
      [](const Symbol &s, std::uint64_t address) { return s.value < address; });
  for (; symbol != symbols.end() &&
         symbol->value < piece.link_address + piece.size;
       ++symbol) {
    const std::size_t begin = symbol->value - piece.link_address;
    const std::size_t end =
        std::min<std::size_t>(begin + symbol->size, piece.size);
    if (!live(state, piece, begin, end))
      continue;
    ++count;
    if (lines != nullptr)
      lines->push_back(global_line(state, piece, *symbol, begin, end));
  }
}

// The program's live globals (the file of the first section, the lowest
// mapped) as lines, the libraries' counted.
void globals(const NamedState &state, std::vector<std::string> &lines,
             std::vector<std::string> &libraries) {
  std::string_view program;
  std::vector<std::pair<std::string_view, std::size_t>> counts;
  for (const auto &piece : state.pieces()) {
    if (!piece.symbols)
      continue;
    const auto file = file_of(piece.name);
    if (program.empty())
      program = file;
    std::size_t count = 0;
    piece_globals(state, piece, file == program ? &lines : nullptr, count);
    if (file != program && count != 0) {
      if (counts.empty() || counts.back().first != file)
        counts.emplace_back(file, 0);
      counts.back().second += count;
    }
  }
  for (const auto &[file, count] : counts)
    libraries.push_back(fmt::format("{} live global{} in {}", count,
                                    count == 1 ? "" : "s", file));
}

} // namespace

std::vector<std::string> describe_changes(const CanonicalState &before,
                                          const CanonicalState &after,
                                          std::size_t max_lines) {
  const NamedState was(before);
  const NamedState now(after);
  Lines lines;
  lines.program = program_of(now);
  diff_roots(was, now, lines);
  diff_chunks(was, now, lines);
  std::vector<std::string> all = std::move(lines.main);
  for (auto *more : {&lines.process, &lines.libraries})
    all.insert(all.end(), std::make_move_iterator(more->begin()),
               std::make_move_iterator(more->end()));
  for (auto &line : lines.stacks)
    if (!line.empty())
      all.push_back(std::move(line));
  if (all.empty())
    for (auto &line : lines.registers)
      if (!line.empty())
        all.push_back(std::move(line));
  return capped(std::move(all), max_lines, "changes");
}

std::vector<std::string> describe_state(const CanonicalState &state,
                                        std::size_t max_lines) {
  const NamedState named(state);
  std::vector<std::string> lines;
  std::vector<std::string> libraries;
  globals(named, lines, libraries);
  for (const auto &piece : named.pieces())
    if (chunk_number(piece.name) != 0)
      lines.push_back(fmt::format("{}: {}", piece.name,
                                  named.preview(piece, 0, piece.size)));
  for (const auto &piece : named.pieces())
    if (starts(piece.name, "fd "))
      lines.push_back(fmt::format("{}: {}", piece.name, fd_kind(named, piece)));
  lines.insert(lines.end(), libraries.begin(), libraries.end());
  return capped(std::move(lines), max_lines, "lines");
}

} // namespace cmc::decoder
