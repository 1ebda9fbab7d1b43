#include "decoder/canonical_bytes.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "util/check.h"

namespace cmc::decoder {

namespace {

// Piece kinds in the header; a chunk's header holds its usable size where
// a named piece's holds its name's length.
constexpr std::uint64_t kNamedPiece = 1;
constexpr std::uint64_t kChunkPiece = 2;

void put_word(std::vector<std::byte> &out, std::uint64_t value) {
  const auto at = out.size();
  out.resize(at + sizeof(value));
  std::memcpy(out.data() + at, &value, sizeof(value));
}

} // namespace

std::uint64_t PieceBytes::word(std::size_t index) const {
  std::uint64_t value = 0;
  std::memcpy(&value, data + index * 8, sizeof(value));
  return value;
}

void PieceBytes::set_token(std::size_t index, std::uint64_t token,
                           TokenBit bit) {
  std::memcpy(data + index * 8, &token, sizeof(token));
  tokens[index / 2] |= static_cast<std::uint8_t>(bit << (index % 2 * 4));
}

void PieceBytes::clear_tokens(std::size_t index) {
  tokens[index / 2] &= static_cast<std::uint8_t>(0xf0 >> (index % 2 * 4));
}

CanonicalBytes::CanonicalBytes(std::vector<std::byte> &out,
                               const ProcessImage &image, bool names)
    : out_(out), names_(names) {
  out_.clear();
  for (std::size_t i = 0; i < image.threads.size(); ++i)
    thread_ids_.emplace_back(image.threads[i].id,
                             static_cast<std::uint32_t>(i + 1));
  if (image.pid != 0 &&
      std::none_of(thread_ids_.begin(), thread_ids_.end(),
                   [&](const auto &t) { return t.first == image.pid; }))
    thread_ids_.emplace_back(image.pid, 1);
  std::sort(thread_ids_.begin(), thread_ids_.end());
  if (!thread_ids_.empty()) {
    lowest_id_ = thread_ids_.front().first;
    highest_id_ = thread_ids_.back().first;
  }
}

PieceBytes CanonicalBytes::append(std::uint64_t kind, std::uint64_t header,
                                  std::string_view name, std::uint64_t extra,
                                  std::span<const std::byte> bytes) {
  put_word(out_, kind);
  put_word(out_, header);
  if (kind == kNamedPiece) {
    const auto at = out_.size();
    out_.resize(at + name.size());
    std::memcpy(out_.data() + at, name.data(), name.size());
  }
  put_word(out_, extra);
  put_word(out_, bytes.size());
  const auto data = out_.size();
  const auto map = token_map_size(bytes.size());
  out_.resize(data + bytes.size() + map);
  if (!bytes.empty())
    std::memcpy(out_.data() + data, bytes.data(), bytes.size());
  std::memset(out_.data() + data + bytes.size(), 0, map);
  if (names_)
    pieces_.push_back(StatePiece{std::string(name), data, bytes.size()});
  return PieceBytes{
      out_.data() + data,
      reinterpret_cast<std::uint8_t *>(out_.data() + data + bytes.size()),
      bytes.size()};
}

PieceBytes CanonicalBytes::add_named(std::string_view name, std::uint64_t extra,
                                     std::span<const std::byte> bytes) {
  return append(kNamedPiece, name.size(), name, extra, bytes);
}

PieceBytes CanonicalBytes::add_chunk(std::size_t number,
                                     std::span<const std::byte> bytes) {
  const auto name =
      names_ ? fmt::format("heap chunk {} ({} B)", number, bytes.size())
             : std::string();
  return append(kChunkPiece, bytes.size(), name, 0, bytes);
}

void CanonicalBytes::mark_thread_ids(PieceBytes piece,
                                     std::size_t index) const {
  const auto nibble = piece.tokens[index / 2] >> (index % 2 * 4) & 0xf;
  if ((nibble & (kChunkPointer | kMappingPointer)) != 0)
    return;
  for (int half = 0; half < 2; ++half) {
    std::uint32_t value = 0;
    auto *at = piece.data + index * 8 + half * 4;
    std::memcpy(&value, at, sizeof(value));
    if (value - lowest_id_ > highest_id_ - lowest_id_)
      continue;
    const auto found = std::lower_bound(thread_ids_.begin(), thread_ids_.end(),
                                        std::pair{value, 0U});
    if (found == thread_ids_.end() || found->first != value)
      continue;
    std::memcpy(at, &found->second, sizeof(found->second));
    piece.tokens[index / 2] |= static_cast<std::uint8_t>(
        (half == 0 ? kLowThread : kHighThread) << (index % 2 * 4));
  }
}

void CanonicalBytes::mark_thread_ids(PieceBytes piece) const {
  if (thread_ids_.empty())
    return;
  for (std::size_t i = 0; i < piece.words(); ++i)
    mark_thread_ids(piece, i);
}

void CanonicalBytes::apply_mask(std::span<const Location> mask) {
  if (mask.empty())
    return;
  CMC_CHECK(names_, "a mask needs the pieces' names");
  std::unordered_map<std::string_view, const StatePiece *> by_name;
  for (const auto &piece : pieces_)
    by_name.emplace(piece.name, &piece);
  for (const auto &location : mask) {
    const auto found = by_name.find(location.piece);
    if (found == by_name.end() || location.offset >= found->second->size)
      continue;
    const auto &piece = *found->second;
    auto *data = out_.data() + piece.offset;
    PieceBytes bytes{data, reinterpret_cast<std::uint8_t *>(data + piece.size),
                     piece.size};
    data[location.offset] = std::byte{0};
    bytes.clear_tokens(location.offset / 8);
  }
}

std::span<const std::string_view> register_names() {
  static constexpr std::array<std::string_view, 27> kNames = {
      "r15",     "r14",      "r13", "r12", "rbp",    "rbx", "r11",
      "r10",     "r9",       "r8",  "rax", "rcx",    "rdx", "rsi",
      "rdi",     "orig_rax", "rip", "cs",  "eflags", "rsp", "ss",
      "fs_base", "gs_base",  "ds",  "es",  "fs",     "gs"};
  static_assert(kNames.size() * 8 == sizeof(user_regs_struct));
  return kNames;
}

} // namespace cmc::decoder
