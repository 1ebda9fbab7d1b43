#include "tracer/process/backtrace.h"

#include <elfutils/libdwfl.h>
#include <libunwind-ptrace.h>

#include <string_view>

#include <fmt/format.h>

#include "tracer/process/ptrace_unsafe.h"

namespace cmc::tracer {
namespace {

// libdwfl keeps a pointer to its callbacks for the life of the Dwfl.
char *debuginfo_path = nullptr;
const Dwfl_Callbacks kProcCallbacks{
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = &debuginfo_path,
};

std::string dwfl_message() { return dwfl_errmsg(-1); }

// The registers unwind_from_entry starts from; one unwind at a time per
// thread, and a Backtracer is used by one thread.
struct EntryRegisters {
  unw_word_t ip = 0;
  unw_word_t sp = 0;
};
thread_local EntryRegisters entry_registers;

int access_entry_reg(unw_addr_space_t space, unw_regnum_t reg,
                     unw_word_t *value, int write, void *arg) {
  if (write == 0 && reg == UNW_X86_64_RIP) {
    *value = entry_registers.ip;
    return 0;
  }
  if (write == 0 && reg == UNW_X86_64_RSP) {
    *value = entry_registers.sp;
    return 0;
  }
  return _UPT_access_reg(space, reg, value, write, arg);
}

unw_accessors_t entry_accessors() {
  unw_accessors_t accessors = _UPT_accessors;
  accessors.access_reg = access_entry_reg;
  return accessors;
}

// The source file and line of address in module, if it has line tables.
void add_source(Dwfl_Module *module, Dwarf_Addr address,
                executor::Frame &frame) {
  Dwfl_Line *line = dwfl_module_getsrc(module, address);
  if (line == nullptr)
    return;
  int number = 0;
  const char *file =
      dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr);
  if (file == nullptr || number <= 0)
    return;
  frame.file = file;
  frame.line = number;
}

} // namespace

void Backtracer::DwflCloser::operator()(Dwfl *dwfl) const { dwfl_end(dwfl); }

void Backtracer::AddressSpaceCloser::operator()(unw_addr_space *space) const {
  unw_destroy_addr_space(space);
}

void Backtracer::UptCloser::operator()(void *info) const { _UPT_destroy(info); }

Backtracer::Backtracer(pid_t pid, std::unique_ptr<Dwfl, DwflCloser> dwfl)
    : pid_(pid), dwfl_(std::move(dwfl)) {}

Result<Backtracer> Backtracer::attach(pid_t pid) {
  // libunwind learns of a pid that is not ours only when a read fails in
  // the middle of a walk: check first that ptrace reaches its registers.
  if (auto regs = sys::registers(pid); !regs)
    return regs.error().after(
        fmt::format("cannot unwind pid {}: it is not a stopped tracee: ", pid));
  std::unique_ptr<Dwfl, DwflCloser> dwfl(dwfl_begin(&kProcCallbacks));
  if (!dwfl)
    return Error{fmt::format("dwfl_begin: {}", dwfl_message())};
  Backtracer tracer(pid, std::move(dwfl));
  if (auto reported = tracer.report_modules(); !reported)
    return reported.error();
  tracer.space_.reset(unw_create_addr_space(&_UPT_accessors, 0));
  if (!tracer.space_)
    return Error{"unw_create_addr_space failed"};
  // Unwind tables stay cached between stops; report_modules flushes them.
  unw_set_caching_policy(tracer.space_.get(), UNW_CACHE_GLOBAL);
  static unw_accessors_t accessors = entry_accessors();
  tracer.entry_space_.reset(unw_create_addr_space(&accessors, 0));
  if (!tracer.entry_space_)
    return Error{"unw_create_addr_space failed"};
  tracer.upt_.reset(_UPT_create(pid));
  if (!tracer.upt_)
    return Error{fmt::format("_UPT_create({}) failed", pid)};
  return tracer;
}

Result<void> Backtracer::report_modules() {
  dwfl_report_begin(dwfl_.get());
  const int rc = dwfl_linux_proc_report(dwfl_.get(), pid_);
  // Positive: an errno value (of its read of /proc/PID/maps); negative: a
  // libdwfl error.
  std::string why;
  if (rc < 0)
    why = dwfl_message();
  if (dwfl_report_end(dwfl_.get(), nullptr, nullptr) != 0 && why.empty() &&
      rc == 0)
    why = dwfl_message();
  if (rc > 0)
    return proc_error(fmt::format("cannot read the mappings of pid {}", pid_),
                      rc);
  if (!why.empty())
    return Error{
        fmt::format("cannot read the mappings of pid {}: {}", pid_, why)};
  if (space_)
    unw_flush_cache(space_.get(), 0, 0);
  return {};
}

executor::Frame Backtracer::symbolize(std::uint64_t pc, bool exact) {
  executor::Frame frame{.pc = pc};
  const Dwarf_Addr address = exact || pc == 0 ? pc : pc - 1;
  Dwfl_Module *module = dwfl_addrmodule(dwfl_.get(), address);
  if (module == nullptr && !refreshed_) {
    refreshed_ = true;
    if (report_modules())
      module = dwfl_addrmodule(dwfl_.get(), address);
  }
  if (module == nullptr)
    return frame;
  if (const char *name = dwfl_module_info(module, nullptr, nullptr, nullptr,
                                          nullptr, nullptr, nullptr, nullptr))
    frame.module = name;
  GElf_Off offset = 0;
  GElf_Sym symbol{};
  if (const char *name = dwfl_module_addrinfo(module, address, &offset, &symbol,
                                              nullptr, nullptr, nullptr)) {
    frame.function = name;
    frame.offset = offset + (pc - address);
  }
  add_source(module, address, frame);
  return frame;
}

Result<std::vector<executor::Frame>>
Backtracer::unwind_from_entry(std::uint64_t pc, std::uint64_t stack_pointer,
                              std::size_t max_frames) {
  std::vector<executor::Frame> frames{symbolize(pc, true)};
  unw_word_t return_address = 0;
  if (_UPT_accessors.access_mem(entry_space_.get(), stack_pointer,
                                &return_address, 0, upt_.get()) != 0 ||
      return_address == 0)
    return frames;
  entry_registers = {return_address, stack_pointer + 8};
  auto callers = walk(entry_space_.get(), max_frames - 1, false);
  if (callers)
    frames.insert(frames.end(), callers->begin(), callers->end());
  return frames;
}

Result<std::vector<executor::Frame>>
Backtracer::unwind(std::size_t max_frames) {
  return walk(space_.get(), max_frames, true);
}

Result<std::vector<executor::Frame>> Backtracer::walk(unw_addr_space *space,
                                                      std::size_t max_frames,
                                                      bool exact_first) {
  unw_cursor_t cursor;
  if (const int rc = unw_init_remote(&cursor, space, upt_.get()); rc != 0)
    return Error{fmt::format("cannot unwind pid {}: unw_init_remote: {}", pid_,
                             unw_strerror(rc))};
  refreshed_ = false;
  std::vector<executor::Frame> frames;
  // The first pc is where the target stopped, and so is the pc of a frame
  // a signal interrupted; every other pc is a return address.
  bool exact = exact_first;
  while (frames.size() < max_frames) {
    unw_word_t pc = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &pc) != 0 || pc == 0)
      break;
    frames.push_back(symbolize(pc, exact));
    exact = unw_is_signal_frame(&cursor) > 0;
    if (unw_step(&cursor) <= 0)
      break;
  }
  if (frames.empty())
    return Error{fmt::format("cannot unwind pid {}: no readable pc", pid_)};
  return frames;
}

} // namespace cmc::tracer
