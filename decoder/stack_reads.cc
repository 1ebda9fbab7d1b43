#include "decoder/stack_reads.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <vector>

namespace cmc::decoder {
namespace {

using code::Access;
using code::bit;
using code::Flow;
using code::Graph;
using code::Stack;
using code::Step;
using Floor = std::optional<std::int64_t>;

constexpr std::int64_t kEnd = StackBytes::kEnd;
constexpr std::int64_t kWord = 8;
// Rounds of the forward analysis over the graph before it gives up (an
// address moved down in a loop without end).
constexpr std::size_t kMaxVisits = code::kMaxInstructions * 8;

Floor lower(Floor a, Floor b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return std::min(*a, *b);
}

// What holds an address derived from rsp before an instruction: rsp's
// offset from start, and for each register and stack word (by its offset)
// that may hold such an address, the lowest offset it may point at.
struct Facts {
  std::int64_t offset = 0;
  std::array<Floor, code::kRegisters> registers{};
  std::map<std::int64_t, std::int64_t> slots;
  // A call has returned on every path here.
  bool called = false;
  bool operator==(const Facts &) const = default;

  [[nodiscard]] Floor lowest() const {
    Floor floor;
    for (const Floor &reg : registers)
      floor = lower(floor, reg);
    for (const auto &[slot, value] : slots)
      floor = lower(floor, value);
    return floor;
  }
  [[nodiscard]] Floor of(int reg) const {
    if (reg < 0)
      return std::nullopt;
    return reg == code::kRsp ? Floor{offset}
                             : registers[static_cast<std::size_t>(reg)];
  }
  // Forgets the words a write of [from, from + size) changes.
  void overwrite(std::int64_t from, std::int64_t size) {
    std::erase_if(slots, [&](const auto &slot) {
      return slot.first < from + size && slot.first + kWord > from;
    });
  }
};

// Merges from into into; false when rsp's offsets disagree.
bool join(Facts &into, const Facts &from) {
  if (into.offset != from.offset)
    return false;
  for (std::size_t r = 0; r < into.registers.size(); ++r)
    into.registers[r] = lower(into.registers[r], from.registers[r]);
  for (const auto &[slot, value] : from.slots) {
    const auto [found, added] = into.slots.emplace(slot, value);
    if (!added)
      found->second = std::min(found->second, value);
  }
  into.called = into.called && from.called;
  return true;
}

bool through_rsp(const Access &access) {
  return access.base == code::kRsp && access.index < 0;
}

// The lowest address derived from rsp the instruction's result may hold:
// from a register it reads the value of, an address it computes, a word
// it loads.
Floor source(const Step &step, const Facts &facts) {
  Floor floor;
  for (int r = 0; r < code::kRegisters; ++r) {
    if ((step.value_reads & bit(r)) == 0 || !facts.of(r))
      continue;
    const std::int64_t displacement =
        step.lea && step.lea->base == r ? step.lea->displacement : 0;
    floor = lower(floor,
                  r == code::kRsp
                      ? *facts.of(r) + displacement
                      : *facts.of(r) + std::min<std::int64_t>(displacement, 0));
  }
  for (const Access &load : step.loads) {
    if (load.size != kWord)
      continue; // too small to hold an address
    if (through_rsp(load)) {
      const auto slot = facts.slots.find(facts.offset + load.displacement);
      if (slot != facts.slots.end())
        floor = lower(floor, slot->second);
    } else if (facts.of(load.base) || facts.of(load.index)) {
      for (const auto &[slot, value] : facts.slots)
        floor = lower(floor, value);
    }
  }
  if (step.reads_top) {
    const auto slot = facts.slots.find(facts.offset);
    if (slot != facts.slots.end())
      floor = lower(floor, slot->second);
  }
  return floor;
}

bool is_push(const Step &step) {
  return step.flow != Flow::kCall && step.stack == Stack::kMove &&
         step.stack_delta == -kWord;
}

// The facts after the instruction; none where rsp moves in a way the
// analysis does not follow.
std::optional<Facts> transfer(const Step &step, const Facts &facts) {
  const Floor floor = source(step, facts);
  Facts out = facts;
  for (const Access &store : step.stores) {
    if (!through_rsp(store))
      continue;
    const std::int64_t at = facts.offset + store.displacement;
    out.overwrite(at, std::max<std::int64_t>(store.size, 1));
    if (floor && store.size == kWord)
      out.slots[at] = *floor;
  }
  if (is_push(step) || step.flow == Flow::kCall)
    out.overwrite(facts.offset - kWord, kWord);
  if (is_push(step) && floor)
    out.slots[facts.offset - kWord] = *floor;
  for (int r = 0; r < code::kRegisters; ++r) {
    auto &reg = out.registers[static_cast<std::size_t>(r)];
    if (r == code::kRsp || (step.writes & bit(r)) == 0)
      continue;
    if (floor)
      reg = lower(reg, floor);
    else if ((step.kills & bit(r)) != 0)
      reg.reset();
  }
  if (step.flow == Flow::kSyscall)
    for (const int r : {code::kRax, code::kRcx, code::kR11})
      out.registers[static_cast<std::size_t>(r)].reset();
  if (step.flow == Flow::kReturn)
    return out;
  if (step.flow == Flow::kCall) {
    out.called = true;
    return out;
  }
  if (step.stack == Stack::kUnknown)
    return std::nullopt;
  out.offset += step.stack_delta;
  return out;
}

// The facts before every instruction reachable from start; none when the
// analysis gives up.
std::optional<std::map<std::uint64_t, Facts>>
forward(const Graph &graph, std::uint64_t start, bool after_call) {
  std::map<std::uint64_t, Facts> facts;
  facts[start].called = after_call;
  std::vector<std::uint64_t> work{start};
  for (std::size_t visits = 0; !work.empty(); ++visits) {
    if (visits > kMaxVisits)
      return std::nullopt;
    const std::uint64_t address = work.back();
    work.pop_back();
    const Step &step = graph.at(address);
    const auto out = transfer(step, facts.at(address));
    if (!out)
      return std::nullopt;
    for (const std::uint64_t next : code::successors(step)) {
      const auto [found, added] = facts.emplace(next, *out);
      if (added) {
        work.push_back(next);
        continue;
      }
      Facts joined = found->second;
      if (!join(joined, *out))
        return std::nullopt;
      if (!(joined == found->second)) {
        found->second = std::move(joined);
        work.push_back(next);
      }
    }
  }
  return facts;
}

// What one instruction reads of the stack (gen) and surely writes (kill).
struct Effects {
  StackBytes gen;
  StackBytes kill;
  bool unknown = false;
  std::optional<std::uint64_t> reach;
  std::uint64_t reach_above = 0;

  void from(Floor floor) {
    if (floor)
      gen.add(*floor, kEnd);
  }
  void reach_to(std::int64_t displacement) {
    reach = std::max(
        reach.value_or(0),
        static_cast<std::uint64_t>(std::max<std::int64_t>(-displacement, 0)));
    reach_above = std::max(
        reach_above,
        static_cast<std::uint64_t>(std::max<std::int64_t>(displacement, 0)));
  }
};

void add_loads(const Step &step, const Facts &facts, Effects &effects) {
  for (const Access &load : step.loads) {
    if (through_rsp(load)) {
      const std::int64_t at = facts.offset + load.displacement;
      effects.gen.add(at, load.size == 0 ? kEnd : at + load.size);
    } else if (load.base == code::kRsp || load.index == code::kRsp) {
      effects.unknown = true;
    } else if (facts.of(load.base) || facts.of(load.index)) {
      const Floor floor = lower(facts.of(load.base), facts.of(load.index));
      effects.from(*floor + std::min<std::int64_t>(load.displacement, 0));
    } else if (load.base >= 0 || load.index >= 0 || load.segment) {
      effects.reach_to(load.displacement);
    }
  }
  if (step.reads_top)
    effects.gen.add(facts.offset, facts.offset + kWord);
}

void add_stores(const Step &step, const Facts &facts, Effects &effects) {
  const Floor floor = source(step, facts);
  for (const Access &store : step.stores) {
    if (through_rsp(store)) {
      const std::int64_t at = facts.offset + store.displacement;
      effects.kill.add(at, at + store.size);
    } else {
      // An address derived from rsp kept where the analysis does not
      // follow it.
      effects.from(floor);
    }
  }
  if (is_push(step) || step.flow == Flow::kCall)
    effects.kill.add(facts.offset - kWord, facts.offset);
}

Effects effects_of(const Step &step, const Facts &facts,
                   std::optional<std::int64_t> return_slot) {
  Effects effects;
  add_loads(step, facts, effects);
  add_stores(step, facts, effects);
  if (step.flow == Flow::kCall) {
    // What the callee may read: the frame's addresses it can reach, and
    // its stack arguments, unless a call since the start means they were
    // written since.
    effects.from(facts.lowest());
    if (!facts.called)
      effects.gen.add(facts.offset, return_slot.value_or(kEnd));
    effects.reach_to(0);
  } else if (step.flow == Flow::kSyscall) {
    // A system call may read the stack as it is: rt_sigreturn reads the
    // signal frame above rsp.
    effects.gen.add(facts.offset, kEnd);
    if (std::any_of(code::kArguments.begin(), code::kArguments.end(),
                    [&](int r) { return facts.of(r).has_value(); }))
      effects.from(facts.lowest());
    effects.reach_to(0);
  }
  return effects;
}

} // namespace

StackReads stack_reads(const Graph &graph, std::uint64_t start, bool after_call,
                       std::optional<std::int64_t> return_slot) {
  StackReads reads;
  const auto facts = forward(graph, start, after_call);
  if (!facts)
    return reads;
  std::map<std::uint64_t, Effects> effects;
  for (const auto &[address, before] : *facts) {
    auto found = effects
                     .emplace(address, effects_of(graph.at(address), before,
                                                  return_slot))
                     .first;
    if (found->second.unknown)
      return reads;
    if (found->second.reach)
      reads.reach = std::max(reads.reach.value_or(0), *found->second.reach);
    reads.reach_above = std::max(reads.reach_above, found->second.reach_above);
  }
  // Backward to a fixpoint: the bytes live before each instruction,
  // visited from the last address (most code flows forward).
  std::vector<std::uint64_t> backward;
  backward.reserve(effects.size());
  for (const auto &at : effects)
    backward.push_back(at.first);
  std::reverse(backward.begin(), backward.end());
  std::map<std::uint64_t, StackBytes> live;
  for (bool changed = true; changed;) {
    changed = false;
    for (const std::uint64_t address : backward) {
      const Effects &effect = effects.at(address);
      StackBytes in;
      for (const std::uint64_t next : code::successors(graph.at(address)))
        if (const auto found = live.find(next); found != live.end())
          in.add(found->second);
      for (const auto &[from, to] : effect.kill.spans())
        in.remove(from, to);
      in.add(effect.gen);
      StackBytes &before = live[address];
      if (!(in == before)) {
        before = std::move(in);
        changed = true;
      }
    }
  }
  reads.live = live[start];
  return reads;
}

} // namespace cmc::decoder
