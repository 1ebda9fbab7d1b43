// cmc check of servers of several processes: demo fork_kv serves each
// connection in a child process and keeps its cells in a file, so a check
// that did not follow the child, or read the files, would see no state
// change at all.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/integration/json_report.h"
#include "tests/integration/run_cmc.h"

namespace cmc::testing {
namespace {

class Processes : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(reap_leftovers().empty()) << "a target outlived cmc";
  }
};

std::vector<std::string> fork_kv_check(const std::string &binary) {
  return {"check",      "-q",
          "--json",     "-",
          "--property", plugin("list_sticky"),
          "-m",         "SET a\\nGET\\n",
          "-m",         "SET b\\nGET\\n",
          "--",         demo(binary),
          "7000"};
}

// The child per connection holds the seed's table: the file after
// [SET a, SET b] and [SET b, SET a] is the same.
TEST_F(Processes, AChildPerConnectionGivesTheSeedsTable) {
  const Outcome run = run_cmc(fork_kv_check("fork_kv"));
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  EXPECT_EQ(json["complete"], true);
  EXPECT_EQ(json["distinct_states"], 4);
  EXPECT_EQ(json["dedup_merges"], 5);
  EXPECT_EQ(json["transitions"], 8);
}

// The bug build's child clears cell b in the file at SET a: found in the
// replies, with the shortest counterexample.
TEST_F(Processes, AChildThatLosesACellInTheFileIsFound) {
  const Outcome run = run_cmc(fork_kv_check("fork_kv_bug"));
  ASSERT_EQ(run.status, 1) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "violated");
  EXPECT_EQ(json["counterexample"],
            nlohmann::json::parse(R"([{"send": "SET b\nGET\n"},
                                      {"send": "SET a\nGET\n"}])"));
  EXPECT_EQ(json["violation"],
            "list-sticky: step 2: cell b, listed after step 1, is gone");
}

// Replayed, the counterexample fails the same way: the child is started
// again at the connection and serves both steps.
TEST_F(Processes, TheCounterexampleReplays) {
  const Outcome run = run_cmc({"replay", "--property", plugin("list_sticky"),
                               "--steps", "SET b\\nGET\\n", "SET a\\nGET\\n",
                               "--", demo("fork_kv_bug"), "7000"});
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_NE(run.out.find("cell b, listed after step 1, is gone"),
            std::string::npos)
      << run.out;
}

// Debian's servers of several processes (labelled debian: see
// tests/integration/CMakeLists.txt), each skipped when its package is
// missing.
// A directory of nobody's (mode 0700), removed with the object.
class NobodysDirectory {
public:
  NobodysDirectory()
      : path_(std::filesystem::temp_directory_path() /
              ("cmc-nobody-" + std::to_string(getpid()))) {
    std::filesystem::create_directory(path_);
    if (chown(path_.c_str(), kNobody, kNobody) != 0 ||
        chmod(path_.c_str(), 0700) != 0)
      ADD_FAILURE() << "cannot give " << path_ << " to nobody";
  }
  NobodysDirectory(const NobodysDirectory &) = delete;
  NobodysDirectory &operator=(const NobodysDirectory &) = delete;
  ~NobodysDirectory() { std::filesystem::remove_all(path_); }
  [[nodiscard]] std::string path() const { return path_.string(); }

private:
  static constexpr uid_t kNobody = 65534;
  std::filesystem::path path_;
};

// A server that starts as exim4 does: a child dropped to nobody opens the
// log in nobody's directory and passes it over a socketpair, then the
// parent waits for a second child by its pid while the first is a zombie.
// Before, the copy of the --writable directory was root's (the child could
// not open the log) and a wait for a child by pid was let run (the pid is
// the target's namespace's), so the parent blocked where cmc did not hold
// it.
TEST_F(Processes, AChildThatDropsPrivilegesAndAWaitByPidAreFollowed) {
  const NobodysDirectory directory;
  const Outcome run =
      run_cmc({"check", "-q", "--json", "-", "--max-depth", "2", "--writable",
               directory.path(), "-m", "a\\n", "-m", "b\\n", "--",
               target("privsep"), directory.path(), "7000"});
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = run.json();
  EXPECT_EQ(json["verdict"], "holds");
  // The log is the state: each order of the messages a state of its own.
  EXPECT_EQ(json["distinct_states"], 7);
  EXPECT_EQ(json["transitions"], 6);
  // The run's copy is the run's: the directory itself is untouched.
  EXPECT_FALSE(std::filesystem::exists(directory.path() + "/log"));
}

class ProcessesDebian : public Processes {};

// A file of the test's own with text in it, removed with the object.
class ConfigFile {
public:
  ConfigFile(const std::string &name, const std::string &text)
      : path_(std::filesystem::temp_directory_path() /
              ("cmc-" + std::to_string(getpid()) + "-" + name)) {
    std::ofstream(path_) << text;
  }
  ConfigFile(const ConfigFile &) = delete;
  ConfigFile &operator=(const ConfigFile &) = delete;
  ~ConfigFile() { std::filesystem::remove(path_); }
  [[nodiscard]] std::string path() const { return path_.string(); }

private:
  std::filesystem::path path_;
};

// mini_httpd serves each connection in a child process: it gives a
// verdict where it stopped at its first fork before.
TEST_F(ProcessesDebian, MiniHttpdWithAChildPerConnectionHolds) {
  if (!std::filesystem::exists("/usr/sbin/mini_httpd"))
    GTEST_SKIP() << "mini_httpd is not installed (apt-get install mini-httpd)";
  const ConfigFile page("index.html", "hi\n");
  const std::string get =
      "GET /" + std::filesystem::path(page.path()).filename().string() +
      R"( HTTP/1.0\r\n\r\n)";
  const Outcome run =
      run_cmc({"check",
               "-q",
               "--json",
               "-",
               "--max-depth",
               "2",
               "-m",
               get,
               "-m",
               R"(GET /missing HTTP/1.0\r\n\r\n)",
               "--forbid-response",
               "HTTP/1.[01] 5",
               "--",
               "/usr/sbin/mini_httpd",
               "-D",
               "-p",
               "8080",
               "-h",
               "127.0.0.1",
               "-d",
               std::filesystem::path(page.path()).parent_path().string()});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_EQ(run.json()["verdict"], "holds");
}

// nginx serving "hi" at / and 404 elsewhere, its master process on (one
// worker process) or off (the master serves). Its files (pid file, temp
// directories) go to the run's working directory, its prefix.
ConfigFile nginx_config(bool master_process) {
  return {master_process ? "nginx-master.conf" : "nginx-single.conf",
          std::string("daemon off; master_process ") +
              (master_process ? "on" : "off") +
              "; worker_processes 1; error_log stderr; pid nginx.pid;\n"
              "events { worker_connections 16; }\n"
              "http { access_log off; client_body_temp_path tmp;\n"
              "  proxy_temp_path tmp; fastcgi_temp_path tmp;\n"
              "  uwsgi_temp_path tmp; scgi_temp_path tmp;\n"
              "  server { listen 127.0.0.1:8080;\n"
              "    location = / { return 200 \"hi\\n\"; }\n"
              "    location / { return 404; } } }\n"};
}

Outcome check_nginx(const ConfigFile &config, const std::string &forbidden,
                    const std::string &depth) {
  return run_cmc({"check", "-q", "--json", "-", "--max-depth", depth, "-m",
                  R"(GET / HTTP/1.0\r\n\r\n)", "-m",
                  R"(GET /missing HTTP/1.0\r\n\r\n)", "--forbid-response",
                  forbidden, "--", "/usr/sbin/nginx", "-p", ".", "-c",
                  config.path()});
}

// With its master process, nginx's worker serves the clients: the same
// violation and counterexample as when the master serves them itself.
TEST_F(ProcessesDebian, NginxWithItsMasterProcessFindsTheSameViolation) {
  if (!std::filesystem::exists("/usr/sbin/nginx"))
    GTEST_SKIP() << "nginx is not installed (apt-get install nginx-light)";
  const ConfigFile single = nginx_config(false);
  const ConfigFile master = nginx_config(true);
  const Outcome alone = check_nginx(single, "HTTP/1.[01] 404", "2");
  const Outcome served = check_nginx(master, "HTTP/1.[01] 404", "2");
  ASSERT_EQ(alone.status, 1) << alone.err;
  ASSERT_EQ(served.status, 1) << served.err;
  const auto expected =
      nlohmann::json::parse(R"([{"send": "GET /missing HTTP/1.0\r\n\r\n",
           "closed_by_server": [0]}])");
  EXPECT_EQ(alone.json()["counterexample"], expected);
  EXPECT_EQ(served.json()["counterexample"], expected);
  EXPECT_EQ(served.json()["violation"], alone.json()["violation"]);
}

// Every run of nginx's master and worker reaches the same states: the
// worker's pid (which seeds its random()) is the same in every run, so a
// check of it holds with the states found without the master, run after
// run (before, now and then a worker got pid 4, and the check stopped
// with "nondeterminism").
TEST_F(ProcessesDebian, NginxWithItsMasterProcessHoldsAlikeInEveryRun) {
  if (!std::filesystem::exists("/usr/sbin/nginx"))
    GTEST_SKIP() << "nginx is not installed (apt-get install nginx-light)";
  const ConfigFile single = nginx_config(false);
  const ConfigFile master = nginx_config(true);
  const Outcome alone = check_nginx(single, "HTTP/1.[01] 5", "3");
  ASSERT_EQ(alone.status, 0) << alone.err;
  for (int run = 0; run < 3; ++run) {
    const Outcome served = check_nginx(master, "HTTP/1.[01] 5", "3");
    ASSERT_EQ(served.status, 0) << served.err;
    const auto json = served.json();
    EXPECT_EQ(json["verdict"], "holds");
    EXPECT_EQ(json["distinct_states"], alone.json()["distinct_states"]);
    EXPECT_EQ(json["transitions"], alone.json()["transitions"]);
    EXPECT_EQ(json["dedup_merges"], alone.json()["dedup_merges"]);
  }
}

// vsftpd serves a connection in a process that leaves the process group
// (setsid) and starts one to check the login and one to serve it: each is
// followed, and anonymous USER, PASS, PWD get their replies.
ConfigFile vsftpd_config() {
  std::filesystem::create_directories("/var/run/vsftpd/empty");
  return {"vsftpd.conf",
          "listen=YES\nlisten_ipv6=NO\nlisten_address=127.0.0.1\n"
          "listen_port=2121\nanonymous_enable=YES\n"
          "anon_root=/var/run/vsftpd/empty\nlocal_enable=NO\n"
          "seccomp_sandbox=NO\nisolate=NO\nisolate_network=NO\n"
          "background=NO\nsecure_chroot_dir=/var/run/vsftpd/empty\n"
          "pasv_enable=NO\n"};
}

Outcome check_vsftpd(const ConfigFile &config, const std::string &forbidden) {
  return run_cmc({"check", "-q", "--json", "-", "--max-depth", "3", "-m",
                  R"(USER anonymous\r\n)", "-m", R"(PASS x\r\n)", "-m",
                  R"(PWD\r\n)", "--forbid-response", forbidden, "--",
                  "/usr/sbin/vsftpd", config.path()});
}

TEST_F(ProcessesDebian, VsftpdLeavingItsProcessGroupIsFollowed) {
  if (!std::filesystem::exists("/usr/sbin/vsftpd"))
    GTEST_SKIP() << "vsftpd is not installed (apt-get install vsftpd)";
  const ConfigFile config = vsftpd_config();
  // The login served by the processes of the connection's session.
  const Outcome login = check_vsftpd(config, "230 Login successful");
  ASSERT_EQ(login.status, 1) << login.out << login.err;
  EXPECT_EQ(login.json()["counterexample"],
            nlohmann::json::parse(R"([{"send": "USER anonymous\r\n"},
                                      {"send": "PASS x\r\n"}])"));
  // No "500 OOPS" (vsftpd's fatal errors) in any order of the three, with
  // the same states in a second run.
  const Outcome first = check_vsftpd(config, "OOPS");
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  EXPECT_EQ(first.json()["verdict"], "holds");
  const Outcome second = check_vsftpd(config, "OOPS");
  ASSERT_EQ(second.status, 0) << second.out << second.err;
  EXPECT_EQ(second.json()["distinct_states"], first.json()["distinct_states"]);
  EXPECT_EQ(second.json()["transitions"], first.json()["transitions"]);
}

} // namespace
} // namespace cmc::testing
