#include "app/cli/interrupts.h"

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>

#include "tracer/process/watchdog.h"

namespace cmc::app {
namespace {

std::mutex prompt_mutex;
std::condition_variable prompt_left;
bool at_prompt = false;
bool editing = false;
pthread_t prompt_thread;

sigset_t signals(bool all) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  if (all) {
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
  }
  return set;
}

void on_signal(int signal) {
  std::unique_lock lock(prompt_mutex);
  if (signal != SIGINT || !at_prompt || !editing)
    tracer::Watchdog::instance().interrupt();
  // A signal sent to one thread goes to that thread: its read fails with
  // EINTR. Sent again until the prompt is left: one that came between
  // AtPrompt and the read itself was handled before the read began.
  while (at_prompt) {
    const pthread_t reader = prompt_thread;
    pthread_kill(reader, SIGINT);
    if (editing && signal == SIGINT)
      break; // readline drops the line and goes on reading
    prompt_left.wait_for(lock, std::chrono::milliseconds(50));
  }
}

} // namespace

void handle_interrupts() {
  static const sigset_t set = signals(true);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([] {
    int signal = 0;
    while (sigwait(&set, &signal) == 0)
      on_signal(signal);
  }).detach();
}

AtPrompt::AtPrompt(bool line_editing) {
  const std::lock_guard lock(prompt_mutex);
  at_prompt = true;
  editing = line_editing;
  prompt_thread = pthread_self();
  const sigset_t set = signals(false);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

AtPrompt::~AtPrompt() {
  {
    const std::lock_guard lock(prompt_mutex);
    const sigset_t set = signals(false);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    at_prompt = false;
  }
  prompt_left.notify_all();
}

} // namespace cmc::app
