#include "app/explore_command.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <editline/readline.h>

#include "app/explorer.h"

namespace cmc::app {
namespace {

volatile std::sig_atomic_t interrupted = 0;

extern "C" void on_interrupt(int /*signal*/) { interrupted = 1; }

// Ctrl-C at the prompt abandons the line; the target is in a process
// group of its own and never sees it.
void catch_interrupts() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr); // no SA_RESTART: readline returns
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
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

std::optional<std::string> read_terminal(const char *prompt) {
  while (true) {
    interrupted = 0;
    char *line = readline(prompt);
    if (line == nullptr) {
      if (interrupted != 0) {
        std::fputs("\n", stdout);
        continue;
      }
      std::fputs("\n", stdout);
      return std::nullopt;
    }
    std::string text(line);
    std::free(line);
    if (text.find_first_not_of(" \t") != std::string::npos)
      add_history(text.c_str());
    return text;
  }
}

std::optional<std::string> read_stream(const char * /*prompt*/) {
  std::string line;
  if (!std::getline(std::cin, line))
    return std::nullopt;
  return line;
}

} // namespace

void add_explore_options(CLI::App &explore, TargetOptions &options) {
  add_target_options(explore, options);
}

int run_explore(const TargetOptions &options) {
  const bool terminal = isatty(STDIN_FILENO) != 0;
  ReadLine read_line = read_stream;
  if (terminal) {
    catch_interrupts();
    rl_attempted_completion_function = complete;
    client_names = options.clients;
    for (const std::string &name : client_names)
      client_prefixes.push_back(name + ":");
    read_line = read_terminal;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Explorer explorer(options, read_line);
  while (true) {
    const auto line = read_line("(cmc) ");
    if (!line || !explorer.execute(*line))
      return 0;
    std::fflush(stdout);
  }
}

} // namespace cmc::app
