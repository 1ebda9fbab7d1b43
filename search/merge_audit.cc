#include "search/merge_audit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <vector>

#include "util/escape.h"

namespace cmc::search {
namespace {

constexpr std::size_t kMaxValueBytes = 16;
// Runs of differing bytes a lossy merge names, at most.
constexpr std::size_t kMaxRunsNamed = 8;

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

namespace {

// A run of differing bytes from a location: its text and how many bytes of
// the piece it covers (the whole piece when it is in one state only).
struct Run {
  std::string text;
  std::size_t length = 0;
};

Run difference_run(const decoder::CanonicalState &a,
                   const decoder::CanonicalState &b,
                   const decoder::Location &at) {
  const auto in_a = piece_bytes(a, at.piece);
  const auto in_b = piece_bytes(b, at.piece);
  if (!in_a || !in_b)
    return {fmt::format("{} in one state only", at.piece), SIZE_MAX};
  const std::size_t end = std::min(in_a->size(), in_b->size());
  if (at.offset >= end)
    return {fmt::format("{} ({} vs {} bytes)", at.describe(), in_a->size(),
                        in_b->size()),
            SIZE_MAX};
  std::size_t length = 0;
  while (at.offset + length < end && length < kMaxValueBytes &&
         (*in_a)[at.offset + length] != (*in_b)[at.offset + length])
    ++length;
  length = std::max<std::size_t>(length, 1);
  return {fmt::format("{} {} vs {}", at.describe(),
                      quoted(in_a->subspan(at.offset, length)),
                      quoted(in_b->subspan(at.offset, length))),
          length};
}

} // namespace

std::string describe_difference(const decoder::CanonicalState &a,
                                const decoder::CanonicalState &b,
                                const decoder::Location &at) {
  return difference_run(a, b, at).text;
}

namespace {

// The first location of each run of differing bytes, in order.
std::vector<const decoder::Location *>
run_starts(const decoder::CanonicalState &a, const decoder::CanonicalState &b,
           std::span<const decoder::Location> locations) {
  std::vector<const decoder::Location *> starts;
  std::size_t covered = 0;
  for (const decoder::Location &at : locations) {
    if (!starts.empty() && at.piece == starts.back()->piece &&
        at.offset - starts.back()->offset < covered)
      continue;
    starts.push_back(&at);
    covered = difference_run(a, b, at).length;
  }
  return starts;
}

} // namespace

std::string describe_runs(const decoder::CanonicalState &a,
                          const decoder::CanonicalState &b,
                          std::span<const decoder::Location> locations) {
  const auto starts = run_starts(a, b, locations);
  std::vector<std::string> runs;
  for (std::size_t i = 0; i < std::min(starts.size(), kMaxRunsNamed); ++i)
    runs.push_back(difference_run(a, b, *starts[i]).text);
  std::string text = fmt::format("{}", fmt::join(runs, "; "));
  if (starts.size() > kMaxRunsNamed)
    text += fmt::format("; and {} more", starts.size() - kMaxRunsNamed);
  return text;
}

Result<MergeDifference>
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
    return MergeDifference{
        std::string("not seen again: a replay of the paths failed"), {}};
  if (first->images.empty() || second->images.empty() ||
      !first->process_after || !second->process_after)
    return MergeDifference{
        std::string("no byte named: the executor kept no image"), {}};
  if (*first->process_after == *second->process_after)
    return MergeDifference{
        std::string("not seen again: on another run both paths reached "
                    "the same process (bytes outside the regions that "
                    "differ between runs?)"),
        {}};
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
  std::vector<decoder::Location> lost;
  std::copy_if(differing.begin(), differing.end(), std::back_inserter(lost),
               [&](const decoder::Location &location) {
                 return std::find(volatile_bytes.begin(), volatile_bytes.end(),
                                  location) == volatile_bytes.end();
               });
  const decoder::CanonicalState &a = first->images.back();
  const decoder::CanonicalState &b = second->images.back();
  if (!lost.empty()) {
    MergeDifference difference{describe_runs(a, b, lost), {}};
    for (const decoder::Location *at : run_starts(a, b, lost))
      difference.places.push_back(at->describe());
    return difference;
  }
  if (!differing.empty())
    return MergeDifference{
        fmt::format("only in bytes that differ between two runs of one "
                    "path too, such as {}",
                    differing.front().describe()),
        {}};
  return MergeDifference{
      std::string("in what cmc adds to the state: the virtual clock, "
                  "timers, clients or files"),
      {}};
}

} // namespace cmc::search
