#include "app/cli/explore_command.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <editline/readline.h>

#include "app/cli/explorer.h"
#include "app/cli/interrupts.h"
#include "app/cli/target_setup.h"
#include "tracer/process/watchdog.h"
#include "util/user_error.h"

namespace cmc::app {
namespace {

volatile std::sig_atomic_t interrupted = 0;

extern "C" void on_interrupt(int /*signal*/) { interrupted = 1; }

// The SIGINT that ends a read at the prompt (AtPrompt); the target is in
// a process group of its own and never sees the terminal's.
void catch_interrupts() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr); // no SA_RESTART: the read fails
}

// What Tab offers: the commands at the start of a line, the clients after
// `disconnect ` and `NAME:` after `send `.
const std::vector<std::string> *candidates = nullptr;
std::vector<std::string> client_names;
std::vector<std::string> client_prefixes;

char *candidate_generator(const char *text, int state) {
  static std::size_t next = 0;
  if (state == 0)
    next = 0;
  while (next < candidates->size()) {
    const std::string &word = (*candidates)[next++];
    if (word.rfind(text, 0) == 0)
      return strdup(word.c_str());
  }
  return nullptr;
}

char **complete(const char *text, int start, int /*end*/) {
  rl_attempted_completion_over = 1;
  const std::string before(rl_line_buffer, static_cast<std::size_t>(start));
  rl_completion_append_character = ' ';
  if (start == 0) {
    candidates = &Explorer::commands();
  } else if (before == "disconnect ") {
    candidates = &client_names;
  } else if (before == "send ") {
    candidates = &client_prefixes;
    rl_completion_append_character = '\0'; // the text follows the colon
  } else {
    return nullptr;
  }
  return rl_completion_matches(text, candidate_generator);
}

// Ctrl-C abandons the line; after SIGTERM or SIGHUP there is none.
std::optional<std::string> read_terminal(const char *prompt) {
  while (true) {
    interrupted = 0;
    char *line = nullptr;
    {
      const AtPrompt waiting(true);
      line = readline(prompt);
    }
    if (line == nullptr) {
      std::fputs("\n", stdout);
      if (interrupted != 0 && !tracer::Watchdog::instance().interrupted())
        continue;
      return std::nullopt;
    }
    std::string text(line);
    std::free(line);
    if (text.find_first_not_of(" \t") != std::string::npos)
      add_history(text.c_str());
    return text;
  }
}

// Without a terminal Ctrl-C interrupts, as in the other commands.
std::optional<std::string> read_stream(const char * /*prompt*/) {
  interrupted = 0;
  std::string line;
  bool read = false;
  {
    const AtPrompt waiting(false);
    read = static_cast<bool>(std::getline(std::cin, line));
  }
  if (interrupted != 0)
    tracer::Watchdog::instance().interrupt();
  if (!read)
    return std::nullopt;
  return line;
}

} // namespace

void add_explore_options(CLI::App &explore, TargetOptions &options,
                         TraceOptions &trace) {
  add_target_options(explore, options);
  add_trace_options(explore, trace);
}

int run_explore(const TargetOptions &options, const TraceOptions &trace) {
  const bool terminal = isatty(STDIN_FILENO) != 0;
  ReadLine read_line = read_stream;
  catch_interrupts();
  if (terminal) {
    rl_attempted_completion_function = complete;
    client_names = options.clients;
    for (const std::string &name : client_names)
      client_prefixes.push_back(name + ":");
    read_line = read_terminal;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Explorer explorer(options, trace, read_line);
  while (true) {
    const auto line = read_line("(cmc) ");
    if (tracer::Watchdog::instance().interrupted())
      cannot_check("interrupted");
    if (!line || !explorer.execute(*line))
      return 0;
    std::fflush(stdout);
  }
}

} // namespace cmc::app
