// A child process for end-to-end tests and the benches: argv[0] (a path) run with `env`
// added, its stdout read line by line and its stdin written, its stderr to a file; with
// a port prefix, the constructor waits for the stdout line that names the port the
// child listens on ("http://127.0.0.1:" and the port). It is stopped when destroyed:
// SIGKILL, or with `stop_gently` SIGTERM first and SIGKILL after 5 s.
// (tests/server/server_process.h starts `reins serve` with it; bench/peer_job's
// ChildProcess adds what a measurement reads.)
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace reins::testing {

class ChildProcess {
 public:
  struct Options {
    std::map<std::string, std::string> env;
    std::string port_prefix;         // "": do not wait for a port
    std::string log;                 // the file stderr goes to; "": this process's stderr
    std::function<void()> in_child;  // runs in the child before exec (to lower its limits, say)
    bool stop_gently = false;
  };
  ChildProcess(std::vector<std::string> argv, Options options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const { return pid_; }
  int port() const { return port_; }            // 0 when no line named it
  const std::string& first_line() const { return first_line_; }  // of stdout, when a port was awaited
  std::string ReadLine();  // "" at the end of its output
  void WriteLine(const std::string& line);
  void Signal(int sig);
  // Waits for the child to exit: its exit code, or -1 on a signal or after `timeout_ms`.
  int Wait(int timeout_ms = 10000);

 private:
  int pid_ = -1;
  int port_ = 0;
  bool exited_ = false;
  bool stop_gently_ = false;
  std::string first_line_;
  FILE* out_ = nullptr;
  FILE* in_ = nullptr;
};

}  // namespace reins::testing
