#pragma once

namespace cmc::app {

// Ctrl-C, SIGTERM and SIGHUP are taken by one thread: they kill every
// target at once (tracer::Watchdog::interrupt()), and the command then ends
// with "interrupted" (exit 3). Call before any other thread starts: the
// signals stay blocked in every thread but that one.
void handle_interrupts();

// While one lives, the calling thread waits for a line at a prompt, in a
// read that a SIGINT handler of its own (installed without SA_RESTART)
// makes fail. Ctrl-C then only abandons the line when line_editing (a
// terminal); SIGTERM, SIGHUP, and Ctrl-C without a terminal, kill every
// target as elsewhere and wake the read the same way.
class AtPrompt {
public:
  explicit AtPrompt(bool line_editing);
  AtPrompt(const AtPrompt &) = delete;
  AtPrompt &operator=(const AtPrompt &) = delete;
  AtPrompt(AtPrompt &&) = delete;
  AtPrompt &operator=(AtPrompt &&) = delete;
  ~AtPrompt();
};

} // namespace cmc::app
