#include "decoder/canonical_state.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "decoder/canonical_bytes.h"

namespace cmc::decoder {

namespace {

// A pointer's replacement, or bit == 0 for a plain word.
struct Token {
  std::uint64_t value = 0;
  TokenBit bit{};
};

// Every mapping a pointer may point into, by address; a pointer into one is
// hashed as (its index here, offset), and the "mappings" piece holds the
// names in this order.
class Mappings {
public:
  explicit Mappings(const ProcessImage &image) {
    for (const auto &segment : image.memory)
      ranges_.push_back(Range{segment.address,
                              segment.address + segment.bytes.size(),
                              &segment.name});
    for (const auto &range : image.mapped)
      ranges_.push_back(Range{range.start, range.end, &range.name});
    std::sort(ranges_.begin(), ranges_.end(),
              [](const Range &a, const Range &b) { return a.start < b.start; });
    if (!ranges_.empty()) {
      lowest_ = ranges_.front().start;
      highest_ = std::max_element(ranges_.begin(), ranges_.end(),
                                  [](const Range &a, const Range &b) {
                                    return a.end < b.end;
                                  })
                     ->end;
    }
  }

  [[nodiscard]] Token token(std::uint64_t value) const {
    if (value - lowest_ >= highest_ - lowest_)
      return {};
    auto found = std::upper_bound(
        ranges_.begin(), ranges_.end(), value,
        [](std::uint64_t v, const Range &r) { return v < r.start; });
    if (found == ranges_.begin() || value >= (--found)->end)
      return {};
    const auto index = static_cast<std::uint64_t>(found - ranges_.begin());
    return Token{index << 40 | (value - found->start), kMappingPointer};
  }

  [[nodiscard]] std::vector<std::byte> names() const {
    std::vector<std::byte> bytes;
    for (const auto &range : ranges_) {
      const auto at = bytes.size();
      bytes.resize(at + range.name->size() + 1);
      std::memcpy(bytes.data() + at, range.name->data(), range.name->size());
    }
    return bytes;
  }

private:
  struct Range {
    std::uint64_t start;
    std::uint64_t end;
    const std::string *name;
  };
  std::vector<Range> ranges_;
  std::uint64_t lowest_ = 0;
  std::uint64_t highest_ = 0;
};

std::span<const std::byte> bytes_of(const user_regs_struct &registers) {
  return {reinterpret_cast<const std::byte *>(&registers), sizeof(registers)};
}

template <typename Resolve>
void tokenize(PieceBytes piece, const Resolve &resolve) {
  for (std::size_t i = 0; i < piece.words(); ++i)
    if (const auto token = resolve(piece.word(i)); token.bit != 0)
      piece.set_token(i, token.value, token.bit);
}

// A descriptor as a piece: flags, position, client at 0, 8, 16, then the
// number of watches and each watch's (fd, events, data), then the kind.
std::vector<std::byte> descriptor_bytes(const DescriptorImage &descriptor) {
  std::vector<std::uint64_t> words = {
      descriptor.flags, descriptor.position,
      static_cast<std::uint64_t>(descriptor.client), descriptor.watches.size()};
  words.insert(words.end(), descriptor.watches.begin(),
               descriptor.watches.end());
  std::vector<std::byte> bytes(words.size() * 8 + descriptor.kind.size());
  std::memcpy(bytes.data(), words.data(), words.size() * 8);
  std::memcpy(bytes.data() + words.size() * 8, descriptor.kind.data(),
              descriptor.kind.size());
  return bytes;
}

// Index of the first watch's data word in a descriptor piece.
constexpr std::size_t kFirstWatchData = 4 + 2;

// The pieces every state has: the mapping names, then the roots (memory
// segments other than those skip() takes, each thread's registers, the
// descriptors), each word a pointer resolve() knows made a token.
template <typename Skip, typename Resolve>
void write_roots(const ProcessImage &image, const Mappings &mappings, bool raw,
                 CanonicalBytes &out, const Skip &skip,
                 const Resolve &resolve) {
  const auto names = mappings.names();
  out.add_named("mappings", 0, names);
  for (std::size_t i = 0; i < image.memory.size(); ++i) {
    const auto &segment = image.memory[i];
    if (skip(i))
      continue;
    auto piece =
        out.add_named(segment.name, raw ? segment.address : 0, segment.bytes);
    tokenize(piece, resolve);
    out.mark_thread_ids(piece);
  }
  for (std::size_t i = 0; i < image.threads.size(); ++i) {
    auto piece = out.add_named(fmt::format("registers of thread {}", i + 1), 0,
                               bytes_of(image.threads[i].registers));
    tokenize(piece, resolve);
    out.mark_thread_ids(piece);
  }
  for (const auto &descriptor : image.descriptors) {
    const auto bytes = descriptor_bytes(descriptor);
    auto piece = out.add_named(fmt::format("fd {}", descriptor.fd), 0, bytes);
    for (std::size_t w = kFirstWatchData; w < 4 + descriptor.watches.size();
         w += 3)
      if (const auto token = resolve(piece.word(w)); token.bit != 0)
        piece.set_token(w, token.value, token.bit);
  }
}

void write_raw(const ProcessImage &image, CanonicalBytes &out) {
  const Mappings mappings(image);
  write_roots(
      image, mappings, true, out, [](std::size_t) { return false; },
      [](std::uint64_t) { return Token{}; });
}

} // namespace

CanonicalState canonicalize(const ProcessImage &image,
                            const CanonicalOptions &options) {
  CanonicalState state;
  const bool names = options.keep_bytes || !options.mask.empty();
  thread_local std::vector<std::byte> scratch;
  auto &bytes = options.keep_bytes ? state.bytes : scratch;
  CanonicalBytes out(bytes, image, names);
  if (options.heap == HeapModel::kRaw) {
    state.heap.allocator = "raw bytes (--dedup raw)";
  } else {
    state.heap.allocator =
        "raw bytes (canonical glibc heap walk not built yet)";
  }
  write_raw(image, out);
  out.apply_mask(options.mask);
  state.fingerprint = fingerprint_of(bytes);
  state.bytes_hashed = bytes.size();
  if (options.keep_bytes)
    state.pieces = out.take_pieces();
  return state;
}

std::string Location::describe() const {
  if (piece.starts_with("registers of thread") && offset % 8 == 0 &&
      offset / 8 < register_names().size())
    return fmt::format("{}+{}", piece, register_names()[offset / 8]);
  if (piece.starts_with("fd ") && offset < 24 && offset % 8 == 0) {
    static constexpr std::string_view kFields[] = {"flags", "position",
                                                   "client"};
    return fmt::format("{} {}", piece, kFields[offset / 8]);
  }
  if (piece.starts_with("heap chunk") || piece.starts_with("stack of") ||
      piece.starts_with("registers of") || piece.starts_with("fd "))
    return fmt::format("{}+{}", piece, offset);
  return fmt::format("{}+{:#x}", piece, offset);
}

namespace {

std::uint8_t token_nibble(const CanonicalState &state, const StatePiece &piece,
                          std::size_t offset) {
  const auto index = offset / 8;
  const auto byte = std::to_integer<std::uint8_t>(
      state.bytes[piece.offset + piece.size + index / 2]);
  return static_cast<std::uint8_t>(byte >> (index % 2 * 4) & 0xf);
}

// Each byte of the common part of two pieces that differs; a word whose
// bytes are equal but whose tokens differ (a pointer in one, the same
// value as plain data in the other) is its first byte.
void differing_bytes(const CanonicalState &a, const StatePiece &pa,
                     const CanonicalState &b, const StatePiece &pb,
                     std::vector<Location> &found) {
  const auto size = std::min(pa.size, pb.size);
  for (std::size_t word = 0; word < size; word += 8) {
    const auto end = std::min(size, word + 8);
    const auto first = found.size();
    for (std::size_t i = word; i < end; ++i)
      if (a.bytes[pa.offset + i] != b.bytes[pb.offset + i])
        found.push_back(Location{pa.name, i});
    if (found.size() == first && end - word == 8 &&
        token_nibble(a, pa, word) != token_nibble(b, pb, word))
      found.push_back(Location{pa.name, word});
  }
  if (pa.size != pb.size)
    found.push_back(Location{pa.name, size});
}

} // namespace

std::vector<Location> differences(const CanonicalState &a,
                                  const CanonicalState &b) {
  std::unordered_map<std::string_view, const StatePiece *> in_b;
  for (const auto &piece : b.pieces)
    in_b.emplace(piece.name, &piece);
  std::vector<Location> found;
  for (const auto &piece : a.pieces) {
    const auto other = in_b.find(piece.name);
    if (other == in_b.end()) {
      found.push_back(Location{piece.name, 0});
      continue;
    }
    differing_bytes(a, piece, b, *other->second, found);
    in_b.erase(other);
  }
  for (const auto &piece : b.pieces)
    if (in_b.contains(piece.name))
      found.push_back(Location{piece.name, 0});
  return found;
}

} // namespace cmc::decoder
