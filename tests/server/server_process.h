// Starts the real `reins serve` binary on a free port for end-to-end tests, and stops
// it with a signal. Its stdout's first line gives the port; stderr (the JSON logs) goes
// to a file the test can read.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "support/child_process.h"

namespace reins::testing {

class ServerProcess {
 public:
  // `args` follow `reins serve --listen 127.0.0.1:0`. `in_child` runs in the child
  // before exec (to lower its resource limits, say).
  explicit ServerProcess(std::vector<std::string> args, std::function<void()> in_child = nullptr)
      : log_path_("/tmp/reins-serve-" + std::to_string(getpid()) + "-" + std::to_string(counter_++) + ".log"),
        process_(Argv(std::move(args)), {.port_prefix = "http://127.0.0.1:", .log = log_path_, .in_child = in_child}) {}
  ~ServerProcess() { std::remove(log_path_.c_str()); }  // after process_ is stopped

  int port() const { return process_.port(); }
  int pid() const { return process_.pid(); }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  const std::string& first_line() const { return process_.first_line(); }

  void Signal(int sig) { process_.Signal(sig); }
  // Waits for the process to exit; its exit code, or -1 on a signal / timeout.
  int Wait(int timeout_ms = 10000) { return process_.Wait(timeout_ms); }
  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  static std::vector<std::string> Argv(std::vector<std::string> args) {
    std::vector<std::string> argv = {REINS_BINARY, "serve", "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  static inline int counter_ = 0;
  std::string log_path_;  // before process_: the child's stderr opens it
  ChildProcess process_;
};

}  // namespace reins::testing
