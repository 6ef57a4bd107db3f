// Starts the real `reins serve` binary on a free port for end-to-end tests, and stops
// it with a signal. Its stdout's first line gives the port; stderr (the JSON logs) goes
// to a file the test can read.
#pragma once

#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace reins::testing {

class ServerProcess {
 public:
  // `args` follow `reins serve --listen 127.0.0.1:0`. `in_child` runs in the child
  // before exec (to lower its resource limits, say).
  explicit ServerProcess(std::vector<std::string> args, std::function<void()> in_child = nullptr) {
    log_path_ = "/tmp/reins-serve-" + std::to_string(getpid()) + "-" + std::to_string(counter_++) + ".log";
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(log, STDERR_FILENO);
      close(out[0]);
      if (in_child) in_child();
      std::vector<std::string> argv = {REINS_BINARY, "serve", "--listen", "127.0.0.1:0"};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<char*> raw;
      for (std::string& a : argv) raw.push_back(a.data());
      raw.push_back(nullptr);
      execv(REINS_BINARY, raw.data());
      _exit(127);
    }
    close(out[1]);
    FILE* f = fdopen(out[0], "r");
    char line[1024];
    if (f != nullptr && fgets(line, sizeof line, f) != nullptr) {
      first_line_ = line;
      size_t at = first_line_.find("http://127.0.0.1:");
      if (at != std::string::npos) port_ = std::stoi(first_line_.substr(at + 17));
    }
    stdout_ = f;
  }

  ~ServerProcess() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_ != nullptr) fclose(stdout_);
    unlink(log_path_.c_str());
  }

  int port() const { return port_; }
  int pid() const { return pid_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& first_line() const { return first_line_; }

  void Signal(int sig) { kill(pid_, sig); }
  // Waits for the process to exit; its exit code, or -1 on a signal / timeout.
  int Wait(int timeout_ms = 10000) {
    for (int waited = 0; waited < timeout_ms; waited += 10) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      usleep(10000);
    }
    return -1;
  }
  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  static inline int counter_ = 0;
  pid_t pid_ = -1;
  int port_ = 0;
  bool exited_ = false;
  FILE* stdout_ = nullptr;
  std::string first_line_;
  std::string log_path_;
};

}  // namespace reins::testing
