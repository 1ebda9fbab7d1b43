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
  // offsetof(struct pthread, tid) in glibc 2.36 for x86-64; a thread's
  // fs_base points at its struct pthread. Checked: the id must be there.
  constexpr std::uint64_t kTidOffset = 0x2d0;
  for (std::size_t i = 0; i < image.threads.size(); ++i)
    thread_ids_.push_back(
        ThreadId{image.threads[i].registers.fs_base + kTidOffset,
                 image.threads[i].id, static_cast<std::uint32_t>(i + 1)});
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
                                     std::span<const std::byte> bytes,
                                     std::uint64_t address) {
  const auto name =
      names_ ? fmt::format("heap chunk {} ({} B)", number, bytes.size())
             : std::string();
  auto piece = append(kChunkPiece, bytes.size(), name, 0, bytes);
  if (names_)
    pieces_.back().address = address;
  return piece;
}

void CanonicalBytes::name_symbols(
    std::shared_ptr<const std::vector<Symbol>> symbols,
    std::uint64_t link_address) {
  if (!names_ || pieces_.empty())
    return;
  pieces_.back().symbols = std::move(symbols);
  pieces_.back().link_address = link_address;
}

void CanonicalBytes::mark_thread_ids(PieceBytes piece,
                                     std::uint64_t address) const {
  for (const ThreadId &thread : thread_ids_) {
    if (thread.address < address ||
        thread.address + sizeof(thread.id) > address + piece.size ||
        thread.address % sizeof(thread.id) != 0)
      continue;
    const std::size_t offset = thread.address - address;
    std::uint32_t value = 0;
    std::memcpy(&value, piece.data + offset, sizeof(value));
    if (value != thread.id)
      continue;
    std::memcpy(piece.data + offset, &thread.number, sizeof(thread.number));
    const std::size_t index = offset / 8;
    piece.tokens[index / 2] |= static_cast<std::uint8_t>(
        (offset % 8 == 0 ? kLowThread : kHighThread) << (index % 2 * 4));
  }
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

} // namespace cmc::decoder
