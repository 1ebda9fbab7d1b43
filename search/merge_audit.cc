#include "search/merge_audit.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "util/escape.h"

namespace cmc::search {
namespace {

constexpr std::size_t kMaxValueBytes = 16;

// The bytes of piece name in state, if it has that piece.
std::optional<std::span<const std::byte>>
piece_bytes(const decoder::CanonicalState &state, const std::string &name) {
  const auto piece = std::find_if(
      state.pieces.begin(), state.pieces.end(),
      [&](const decoder::StatePiece &p) { return p.name == name; });
  if (piece == state.pieces.end() ||
      piece->offset + piece->size > state.bytes.size())
    return std::nullopt;
  return std::span(state.bytes).subspan(piece->offset, piece->size);
}

std::string quoted(std::span<const std::byte> bytes) {
  return fmt::format(
      "'{}'", encode_escapes(std::string_view(
                  reinterpret_cast<const char *>(bytes.data()), bytes.size())));
}

} // namespace

std::string describe_difference(const decoder::CanonicalState &a,
                                const decoder::CanonicalState &b,
                                const decoder::Location &at) {
  const auto in_a = piece_bytes(a, at.piece);
  const auto in_b = piece_bytes(b, at.piece);
  if (!in_a || !in_b)
    return fmt::format("{} in one state only", at.piece);
  const std::size_t end = std::min(in_a->size(), in_b->size());
  if (at.offset >= end)
    return fmt::format("{} ({} vs {} bytes)", at.describe(), in_a->size(),
                       in_b->size());
  std::size_t length = 0;
  while (at.offset + length < end && length < kMaxValueBytes &&
         (*in_a)[at.offset + length] != (*in_b)[at.offset + length])
    ++length;
  length = std::max<std::size_t>(length, 1);
  return fmt::format("{} {} vs {}", at.describe(),
                     quoted(in_a->subspan(at.offset, length)),
                     quoted(in_b->subspan(at.offset, length)));
}

Result<std::string>
name_lossy_merge(executor::Executor &executor,
                 std::span<const executor::PathStep> kept,
                 std::span<const executor::PathStep> merged) {
  Result<executor::Observation> first = executor.run(kept);
  if (!first)
    return first.error();
  Result<executor::Observation> second = executor.run(merged);
  if (!second)
    return second.error();
  if (first->fault || second->fault)
    return std::string("not seen again: a replay of the paths failed");
  if (first->images.empty() || second->images.empty() ||
      !first->process_after || !second->process_after)
    return std::string("no byte named: the executor kept no image");
  if (*first->process_after == *second->process_after)
    return std::string("not seen again: on another run both paths reached "
                       "the same process (bytes outside the regions that "
                       "differ between runs?)");
  // Bytes that differ between two runs of one path (volatile) are not
  // what the abstraction lost: a third run tells them.
  Result<executor::Observation> again = executor.run(kept);
  if (!again)
    return again.error();
  std::vector<decoder::Location> volatile_bytes;
  if (!again->fault && !again->images.empty())
    volatile_bytes =
        decoder::differences(first->images.back(), again->images.back());
  const std::vector<decoder::Location> differing =
      decoder::differences(first->images.back(), second->images.back());
  for (const decoder::Location &location : differing)
    if (std::find(volatile_bytes.begin(), volatile_bytes.end(), location) ==
        volatile_bytes.end())
      return describe_difference(first->images.back(), second->images.back(),
                                 location);
  if (!differing.empty())
    return fmt::format("only in bytes that differ between two runs of one "
                       "path too, such as {}",
                       differing.front().describe());
  return std::string("in what cmc adds to the state: the virtual clock, "
                     "timers, clients or files");
}

} // namespace cmc::search
