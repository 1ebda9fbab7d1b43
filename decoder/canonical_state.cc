#include "decoder/canonical_state.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <optional>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "decoder/canonical_bytes.h"
#include "decoder/glibc_heap.h"
#include "decoder/liveness.h"

namespace cmc::decoder {

namespace {

// A pointer's replacement, or bit == 0 for a plain word.
struct Token {
  std::uint64_t value = 0;
  TokenBit bit{};
};

// In a token's value: the pointer was stored mangled (PTR_MANGLE).
constexpr std::uint64_t kMangled = std::uint64_t{1} << 63;

// What the state calls each segment: its role where the kernel chose its
// address. The heaps of thread arenas are "heap of arena N" (N on
// main_arena's list), the other anonymous segments numbered in address
// order without them; mmapped chunks have no name (pointers into them are
// chunk pointers). Stacks are named by their thread already.
std::vector<std::string> segment_names(const ProcessImage &image,
                                       const GlibcHeap *heap) {
  std::vector<std::string> names;
  names.reserve(image.memory.size());
  for (const auto &segment : image.memory)
    names.push_back(segment.name);
  if (heap == nullptr)
    return names;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (heap->chunk_segments[i] &&
        image.memory[i].kind == MemoryKind::kAnonymous)
      names[i].clear();
  for (const auto &arena_heap : heap->arena_heaps)
    names[arena_heap.segment] =
        arena_heap.heaps == 1
            ? fmt::format("heap of arena {}", arena_heap.arena)
            : fmt::format("heap {} of arena {}", arena_heap.heap,
                          arena_heap.arena);
  std::size_t anonymous = 0;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (!heap->chunk_segments[i] &&
        image.memory[i].kind == MemoryKind::kAnonymous)
      names[i] = fmt::format("anonymous {}", ++anonymous);
  return names;
}

// Every named mapping a pointer may point into; a pointer into one is
// hashed as (its index in name order, offset), and the "mappings" piece
// holds the names in that order: neither depends on where the kernel put
// the mappings relative to each other.
class Mappings {
public:
  Mappings(const ProcessImage &image, const std::vector<std::string> &names) {
    for (std::size_t i = 0; i < image.memory.size(); ++i)
      if (!names[i].empty())
        ranges_.push_back(
            Range{image.memory[i].address,
                  image.memory[i].address + image.memory[i].bytes.size(),
                  &names[i], 0, false});
    for (const auto &range : image.mapped)
      ranges_.push_back(
          Range{range.start, range.end, &range.name, 0, range.from_end});
    std::sort(ranges_.begin(), ranges_.end(),
              [](const Range &a, const Range &b) {
                return std::tie(*a.name, a.start) < std::tie(*b.name, b.start);
              });
    for (std::size_t i = 0; i < ranges_.size(); ++i)
      ranges_[i].index = i;
    names_ = names_in_order();
    std::sort(ranges_.begin(), ranges_.end(),
              [](const Range &a, const Range &b) {
                // An empty range (a stack with no dead part) before the
                // one that starts where it does: token() takes the last.
                return std::tie(a.start, a.end) < std::tie(b.start, b.end);
              });
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
    // A pointer to the end of a mapping (l_map_end of ld.so's link_map)
    // is the mapping's, when no other mapping starts there.
    if (found == ranges_.begin() || value > (--found)->end)
      return {};
    const auto offset =
        found->from_end ? found->end - value : value - found->start;
    return Token{std::uint64_t{found->index} << 40 | offset, kMappingPointer};
  }

  [[nodiscard]] const std::vector<std::byte> &names() const { return names_; }

private:
  [[nodiscard]] std::vector<std::byte> names_in_order() const {
    std::vector<std::byte> bytes;
    for (const auto &range : ranges_) {
      const auto at = bytes.size();
      bytes.resize(at + range.name->size() + 1);
      std::memcpy(bytes.data() + at, range.name->data(), range.name->size());
    }
    return bytes;
  }

  struct Range {
    std::uint64_t start;
    std::uint64_t end;
    const std::string *name;
    std::size_t index; // in name order
    bool from_end;
  };
  std::vector<Range> ranges_;
  std::vector<std::byte> names_;
  std::uint64_t lowest_ = 0;
  std::uint64_t highest_ = 0;
};

std::span<const std::byte> bytes_of(const user_regs_struct &registers) {
  return {reinterpret_cast<const std::byte *>(&registers), sizeof(registers)};
}

// Makes each pointer resolve() knows a token.
template <typename Resolve>
void tokenize(PieceBytes piece, const Resolve &resolve) {
  for (std::size_t i = 0; i < piece.words(); ++i) {
    const std::uint64_t word = piece.word(i);
    if (word == 0)
      continue;
    if (const auto token = resolve(word); token.bit != 0)
      piece.set_token(i, token.value, token.bit);
  }
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

// Zeroes malloc's own state inside a root segment's piece.
void blank_bookkeeping(const GlibcHeap *heap, std::size_t segment_index,
                       const MemorySegment &segment, PieceBytes piece) {
  if (heap == nullptr)
    return;
  for (const auto &span : heap->bookkeeping)
    if (span.segment == segment_index)
      std::memset(piece.data + (span.address - segment.address), 0, span.size);
}

// Zeroes the PLT slots (ProcessImage::plt_slots) inside a segment's piece:
// a slot ld.so has bound and one it has not count the same.
void blank_plt_slots(std::span<const std::uint64_t> slots,
                     const MemorySegment &segment, PieceBytes piece) {
  const std::uint64_t end = segment.address + segment.bytes.size();
  for (auto slot =
           std::lower_bound(slots.begin(), slots.end(), segment.address);
       slot != slots.end() && *slot + 8 <= end; ++slot)
    std::memset(piece.data + (*slot - segment.address), 0, 8);
}

// The pieces every state has: the mapping names, then the roots (memory
// segments that hold no heap chunks, each thread's registers, the
// descriptors), each pointer resolve() knows made a token; with
// addresses, each segment's address hashed with it (its pointers are not
// tokens).
template <typename Resolve>
void write_roots(const ProcessImage &image,
                 const std::vector<std::string> &names,
                 const Mappings &mappings, const GlibcHeap *heap,
                 bool addresses, CanonicalBytes &out, const Resolve &resolve) {
  out.add_named("mappings", 0, mappings.names());
  for (std::size_t i = 0; i < image.memory.size(); ++i) {
    const auto &segment = image.memory[i];
    if (heap != nullptr && heap->chunk_segments[i])
      continue;
    auto piece =
        out.add_named(names[i], addresses ? segment.address : 0, segment.bytes);
    if (segment.symbols)
      out.name_symbols(segment.symbols, segment.link_address);
    blank_bookkeeping(heap, i, segment, piece);
    blank_plt_slots(image.plt_slots, segment, piece);
    tokenize(piece, resolve);
    out.mark_thread_ids(piece, segment.address);
  }
  for (std::size_t i = 0; i < image.threads.size(); ++i) {
    const user_regs_struct live =
        without_dead(image.threads[i].registers, image.threads[i].dead);
    auto piece = out.add_named(fmt::format("registers of thread {}", i + 1), 0,
                               bytes_of(live));
    tokenize(piece, resolve);
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

// The chunk whose user bytes (or their end) hold value, if any; chunks
// by address.
const HeapChunk *chunk_at(const std::vector<HeapChunk> &chunks,
                          std::uint64_t value) {
  auto found = std::upper_bound(
      chunks.begin(), chunks.end(), value,
      [](std::uint64_t v, const HeapChunk &c) { return v < c.user_begin(); });
  if (found == chunks.begin() || value > (--found)->user_end())
    return nullptr;
  return &*found;
}

// The in-use chunks numbered in the order a breadth-first walk from the
// roots reaches them: a word that points anywhere into a chunk's user
// bytes (interior pointers too) numbers the chunk when first seen.
class ChunkNumbering {
public:
  explicit ChunkNumbering(const GlibcHeap &heap)
      : chunks_(heap.in_use), free_(heap.free_list),
        numbers_(chunks_.size(), 0) {
    for (const auto *list : {&chunks_, &free_})
      if (!list->empty()) {
        lowest_ = std::min(lowest_, list->front().user_begin());
        highest_ = std::max(highest_, list->back().user_end() + 1);
      }
    order_.reserve(chunks_.size());
  }

  // (number << 40 | offset) for a pointer into an in-use chunk's user
  // bytes; 0 for one into a free chunk: what a dangling pointer pointed
  // at is no state, and the program may not use it.
  [[nodiscard]] Token token(std::uint64_t value) {
    if (value - lowest_ >= highest_ - lowest_)
      return {};
    const auto *chunk = chunk_at(chunks_, value);
    if (chunk == nullptr)
      return chunk_at(free_, value) != nullptr ? Token{0, kChunkPointer}
                                               : Token{};
    const auto index = static_cast<std::size_t>(chunk - chunks_.data());
    if (numbers_[index] == 0) {
      order_.push_back(index);
      numbers_[index] = static_cast<std::uint32_t>(order_.size());
    }
    return Token{std::uint64_t{numbers_[index]} << 40 |
                     (value - chunk->user_begin()),
                 kChunkPointer};
  }

  [[nodiscard]] std::size_t numbered() const { return order_.size(); }
  // The chunk numbered number (from 1); numbers grow while the walk runs.
  [[nodiscard]] const HeapChunk &chunk(std::size_t number) const {
    return chunks_[order_[number - 1]];
  }

private:
  const std::vector<HeapChunk> &chunks_;
  const std::vector<HeapChunk> &free_;
  std::vector<std::uint32_t> numbers_; // 0: not reached
  std::vector<std::size_t> order_;     // chunk index by number - 1
  std::uint64_t lowest_ = ~std::uint64_t{0};
  std::uint64_t highest_ = 0;
};

// "glibc", and the thread arenas hashed as read and why.
std::string allocator_text(const GlibcHeap &heap) {
  if (heap.other_arenas == 0)
    return "glibc";
  return fmt::format("glibc ({} thread arena{} hashed as read: {})",
                     heap.other_arenas, heap.other_arenas == 1 ? "" : "s",
                     heap.not_walked);
}

// resolve() for the pointers of the state: into a chunk (numbering), else
// into a named mapping, stored as they are or mangled by the pointer guard.
template <typename Pointer>
auto resolver(const ProcessImage &image, const Pointer &pointer) {
  return [&pointer, guard = pointer_guard(image)](std::uint64_t value) {
    auto token = pointer(value);
    if (token.bit != 0 || !guard)
      return token;
    token = pointer(demangled(value, *guard));
    if (token.bit != 0)
      token.value |= kMangled;
    return token;
  };
}

// --dedup raw: every byte as read, each segment with its address.
void write_raw(const ProcessImage &image, CanonicalBytes &out) {
  const auto names = segment_names(image, nullptr);
  const Mappings mappings(image, names);
  write_roots(image, names, mappings, nullptr, true, out,
              [](std::uint64_t) { return Token{}; });
}

// No glibc arena to walk (no malloc yet, another allocator): the heap's
// memory is hashed as it is, its pointers included, but pointers into the
// named mappings are (mapping, offset) as in a walked state, so that a
// program's first malloc changes only what it wrote.
void write_unwalked(const ProcessImage &image, CanonicalBytes &out) {
  const auto names = segment_names(image, nullptr);
  const Mappings mappings(image, names);
  const auto pointer = [&](std::uint64_t value) {
    return mappings.token(value);
  };
  write_roots(image, names, mappings, nullptr, false, out,
              resolver(image, pointer));
}

// The roots, then each reached chunk in number order (its user bytes,
// pointers as tokens); returns the summary.
HeapSummary write_canonical(const ProcessImage &image, const GlibcHeap &heap,
                            CanonicalBytes &out) {
  const auto names = segment_names(image, &heap);
  const Mappings mappings(image, names);
  ChunkNumbering numbering(heap);
  const auto pointer = [&](std::uint64_t value) {
    const auto chunk = numbering.token(value);
    return chunk.bit != 0 ? chunk : mappings.token(value);
  };
  const auto resolve = resolver(image, pointer);
  write_roots(image, names, mappings, &heap, false, out, resolve);
  for (std::size_t number = 1; number <= numbering.numbered(); ++number) {
    const auto &chunk = numbering.chunk(number);
    const auto &segment = image.memory[chunk.segment];
    const auto bytes = std::span(segment.bytes)
                           .subspan(chunk.user_begin() - segment.address,
                                    chunk.user_end() - chunk.user_begin());
    auto piece = out.add_chunk(number, bytes, chunk.user_begin());
    tokenize(piece, resolve);
    out.mark_thread_ids(piece, chunk.user_begin());
  }
  HeapSummary summary;
  summary.allocator = allocator_text(heap);
  summary.arenas = heap.arenas;
  summary.canonical = true;
  summary.chunks = numbering.numbered();
  summary.free_chunks = heap.free_chunks;
  summary.garbage_chunks = heap.in_use.size() - summary.chunks;
  for (const auto &chunk : heap.in_use)
    summary.garbage_bytes += chunk.size;
  for (std::size_t number = 1; number <= numbering.numbered(); ++number)
    summary.garbage_bytes -= numbering.chunk(number).size;
  return summary;
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
    write_raw(image, out);
  } else if (const auto heap = walk_glibc_heap(image); heap.ok()) {
    state.heap = write_canonical(image, *heap, out);
  } else {
    state.heap.allocator = fmt::format("raw bytes ({})", heap.error().message);
    write_unwalked(image, out);
  }
  out.apply_mask(options.mask);
  state.fingerprint = fingerprint_of(bytes);
  state.bytes_hashed = bytes.size();
  if (options.keep_bytes)
    state.pieces = out.take_pieces();
  return state;
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
