#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "decoder/elf_file.h"
#include "decoder/proc_maps.h"
#include "decoder/process_image.h"
#include "tracer/capture/descriptor_capture.h"
#include "tracer/capture/thread_liveness.h"
#include "tracer/process/tracee.h"
#include "util/result.h"

namespace cmc::tracer {

// What cmc knows of a quiescent target beyond what /proc shows.
struct CaptureContext {
  // Its threads in order of creation, with their registers.
  std::vector<ThreadRegisters> threads;
  SocketOwners sockets;
  std::string workdir; // the run's working directory (RunFiles::workdir)
};

// Reads a quiescent target into a decoder::ProcessImage: every writable
// mapping (a file's split and named by ELF section, a thread's stack from
// its stack pointer on, less the dead part of its red zone), the read-only
// mappings as ranges, the threads' registers (the dead ones marked) and
// the descriptors. Pages of anonymous memory the kernel
// never backed are zero without being read (reading would fault them in).
// Keeps the sections of each ELF file it met for later captures: one per
// worker.
class ProcessCapture {
public:
  [[nodiscard]] Result<decoder::ProcessImage>
  capture(const Tracee &tracee, const CaptureContext &context);

  // The writable sections, loads and PLT slots of a mapped file, read on
  // its first capture; no sections when it is not an ELF file cmc can open.
  struct FileLayout {
    std::string name; // the file's base name
    std::vector<decoder::Symbol> sections;
    std::vector<decoder::LoadSegment> loads;
    std::vector<std::uint64_t> jump_slots; // link-time (ElfFile::jump_slots)
    // Its data objects, for naming the sections' bytes.
    std::shared_ptr<const std::vector<decoder::Symbol>> objects;
  };
  [[nodiscard]] const FileLayout &layout_of(const decoder::Mapping &mapping);

private:
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, FileLayout>
      files_;
  ThreadLiveness liveness_;
};

// The base name of a mapped file's path, without " (deleted)".
[[nodiscard]] std::string mapped_file_name(std::string_view path);

} // namespace cmc::tracer
