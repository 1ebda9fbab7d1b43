#include "decoder/named_state.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "decoder/canonical_bytes.h"
#include "util/escape.h"

namespace cmc::decoder {

namespace {

// In a token's value (canonical_state.cc): the pointer was stored mangled;
// the number of the chunk or mapping above the offset's 40 bits.
constexpr std::uint64_t kMangled = std::uint64_t{1} << 63;
constexpr unsigned kNumberShift = 40;
constexpr std::uint64_t kOffsetMask = (std::uint64_t{1} << kNumberShift) - 1;
constexpr std::uint8_t kPointerBits = kChunkPointer | kMappingPointer;

// The names of the "mappings" piece, in index order.
std::vector<std::string_view> mapping_names(std::span<const std::byte> bytes) {
  std::vector<std::string_view> names;
  const std::string_view text(reinterpret_cast<const char *>(bytes.data()),
                              bytes.size());
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = std::min(text.find('\0', at), text.size());
    names.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return names;
}

} // namespace

bool WordValue::same(const WordValue &other) const {
  if (kind != other.kind || mangled != other.mangled || offset != other.offset)
    return false;
  switch (kind) {
  case Kind::kPlain:
    return value == other.value;
  case Kind::kChunk:
    return value != 0 && other.value != 0 ? value == other.value
                                          : number == other.number;
  case Kind::kMapping:
    return mapping == other.mapping;
  case Kind::kFreed:
    return true;
  }
  return false;
}

std::size_t chunk_number(std::string_view piece) {
  constexpr std::string_view kChunk = "heap chunk ";
  if (!piece.starts_with(kChunk))
    return 0;
  std::size_t number = 0;
  const auto *begin = piece.data() + kChunk.size();
  std::from_chars(begin, piece.data() + piece.size(), number);
  return number;
}

bool printable(std::byte byte) {
  const auto value = std::to_integer<unsigned>(byte);
  return value >= 0x20 && value < 0x7f;
}

std::string quoted(std::span<const std::byte> bytes) {
  return fmt::format("\"{}\"", encode_escapes(std::string_view(
                                   reinterpret_cast<const char *>(bytes.data()),
                                   bytes.size())));
}

std::string hex_bytes(std::span<const std::byte> bytes, std::size_t max) {
  std::string text;
  for (std::size_t i = 0; i < std::min(bytes.size(), max); ++i)
    text += fmt::format("{}{:02x}", i == 0 ? "" : " ",
                        std::to_integer<unsigned>(bytes[i]));
  if (bytes.size() > max)
    text += fmt::format(" ... ({} bytes)", bytes.size());
  return text;
}

NamedState::NamedState(const CanonicalState &state) : state_(state) {
  for (const auto &piece : state.pieces) {
    by_name_.emplace(piece.name, &piece);
    if (const auto number = chunk_number(piece.name); number != 0) {
      if (chunks_.size() < number)
        chunks_.resize(number, nullptr);
      chunks_[number - 1] = &piece;
      if (piece.address != 0)
        by_address_.emplace(piece.address, &piece);
    }
  }
  if (const auto *names = piece("mappings"))
    mappings_ = mapping_names(bytes(*names));
}

std::span<const std::byte> NamedState::bytes(const StatePiece &piece) const {
  return std::span(state_.bytes).subspan(piece.offset, piece.size);
}

const StatePiece *NamedState::piece(std::string_view name) const {
  const auto found = by_name_.find(name);
  return found == by_name_.end() ? nullptr : found->second;
}

const StatePiece *NamedState::chunk_at(std::uint64_t address) const {
  const auto found = by_address_.find(address);
  return found == by_address_.end() ? nullptr : found->second;
}

std::uint8_t NamedState::nibble(const StatePiece &piece,
                                std::size_t word) const {
  const auto byte = std::to_integer<std::uint8_t>(
      state_.bytes[piece.offset + piece.size + word / 2]);
  return static_cast<std::uint8_t>(byte >> (word % 2 * 4) & 0xf);
}

bool NamedState::is_pointer(const StatePiece &piece, std::size_t offset) const {
  return offset + 8 <= piece.size &&
         (nibble(piece, offset / 8) & kPointerBits) != 0;
}

WordValue NamedState::word(const StatePiece &piece, std::size_t offset) const {
  std::uint64_t raw = 0;
  std::memcpy(&raw, state_.bytes.data() + piece.offset + offset, sizeof(raw));
  WordValue value;
  const auto bits = nibble(piece, offset / 8);
  if ((bits & kPointerBits) == 0) {
    value.value = raw;
    return value;
  }
  value.mangled = (raw & kMangled) != 0;
  const auto number =
      static_cast<std::size_t>((raw & ~kMangled) >> kNumberShift);
  value.offset = raw & kOffsetMask;
  if ((bits & kChunkPointer) != 0) {
    value.kind =
        number == 0 ? WordValue::Kind::kFreed : WordValue::Kind::kChunk;
    value.number = number;
    if (number != 0 && number <= chunks_.size() &&
        chunks_[number - 1] != nullptr)
      value.value = chunks_[number - 1]->address;
    return value;
  }
  value.kind = WordValue::Kind::kMapping;
  if (number < mappings_.size())
    value.mapping = mappings_[number];
  return value;
}

std::string NamedState::target_text(const WordValue &value) const {
  const auto plus = [](std::uint64_t offset) {
    return offset == 0 ? std::string() : fmt::format("+{}", offset);
  };
  const std::string mangled = value.mangled ? " (mangled)" : "";
  switch (value.kind) {
  case WordValue::Kind::kPlain:
    return value.value == 0 ? "null" : fmt::format("{:#x}", value.value);
  case WordValue::Kind::kFreed:
    return "a freed chunk" + mangled;
  case WordValue::Kind::kChunk:
    return fmt::format("chunk {}{}{}", value.number, plus(value.offset),
                       mangled);
  case WordValue::Kind::kMapping:
    break;
  }
  if (const auto *target = piece(value.mapping);
      target != nullptr && target->symbols) {
    std::size_t into = 0;
    if (const auto *symbol = symbol_at(*target, value.offset, into))
      return fmt::format("{}{}{}", symbol->name, plus(into), mangled);
  }
  return fmt::format("{}+{:#x}{}", value.mapping, value.offset, mangled);
}

const Symbol *NamedState::symbol_at(const StatePiece &piece, std::size_t offset,
                                    std::size_t &into) {
  if (!piece.symbols)
    return nullptr;
  const std::uint64_t address = piece.link_address + offset;
  const auto &symbols = *piece.symbols;
  auto found = std::upper_bound(
      symbols.begin(), symbols.end(), address,
      [](std::uint64_t a, const Symbol &symbol) { return a < symbol.value; });
  if (found == symbols.begin())
    return nullptr;
  --found;
  if (address >= found->value + found->size)
    return nullptr;
  into = address - found->value;
  return &*found;
}

std::string NamedState::preview_item(const StatePiece &piece, std::size_t &pos,
                                     std::size_t end) const {
  const auto data = bytes(piece);
  const std::size_t word_end = std::min(end, (pos / 8 + 1) * 8);
  if (pos % 8 == 0 && is_pointer(piece, pos) && pos + 8 <= end) {
    const auto value = word(piece, pos);
    pos += 8;
    return "&" + target_text(value);
  }
  std::size_t stop = pos;
  const auto plain = [&](std::size_t i) {
    return !(i % 8 == 0 && is_pointer(piece, i));
  };
  if (printable(data[pos])) {
    while (stop < end && printable(data[stop]) && (stop == pos || plain(stop)))
      ++stop;
    auto text = quoted(data.subspan(pos, stop - pos));
    pos = stop;
    return text;
  }
  if (data[pos] == std::byte{0}) {
    while (stop < end && data[stop] == std::byte{0} &&
           (stop == pos || plain(stop)))
      ++stop;
    pos = stop;
    return "0";
  }
  while (stop < word_end && !printable(data[stop]) &&
         data[stop] != std::byte{0})
    ++stop;
  auto text = hex_bytes(data.subspan(pos, stop - pos));
  pos = stop;
  return text;
}

std::string NamedState::preview(const StatePiece &piece, std::size_t begin,
                                std::size_t end, std::size_t max_items) const {
  end = std::min(end, piece.size);
  std::vector<std::string> items;
  std::size_t pos = begin;
  while (pos < end && items.size() <= max_items)
    items.push_back(preview_item(piece, pos, end));
  if (items.size() > max_items || pos < end) {
    items.resize(std::min(items.size(), max_items));
    items.emplace_back("...");
  }
  return fmt::format("{}", fmt::join(items, " "));
}

} // namespace cmc::decoder
