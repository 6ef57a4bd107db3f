#include "support/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace reins::testing {

ChildProcess::ChildProcess(std::vector<std::string> argv, Options options) : stop_gently_(options.stop_gently) {
  int out[2], in[2];
  if (pipe(out) != 0 || pipe(in) != 0) return;
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(in[0], STDIN_FILENO);
    if (!options.log.empty()) dup2(open(options.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), STDERR_FILENO);
    close(out[0]);
    close(in[1]);
    for (const auto& [name, value] : options.env) setenv(name.c_str(), value.c_str(), 1);
    if (options.in_child) options.in_child();
    std::vector<char*> raw;
    for (std::string& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    std::perror(raw[0]);
    _exit(127);
  }
  close(out[1]);
  close(in[0]);
  out_ = fdopen(out[0], "r");
  in_ = fdopen(in[1], "w");
  if (options.port_prefix.empty()) return;
  for (std::string line = ReadLine(); !line.empty(); line = ReadLine()) {
    if (first_line_.empty()) first_line_ = line;
    if (size_t at = line.find(options.port_prefix); at != std::string::npos) {
      port_ = std::stoi(line.substr(at + options.port_prefix.size()));
      return;
    }
  }
}

ChildProcess::~ChildProcess() {
  if (in_ != nullptr) fclose(in_);
  if (stop_gently_) {
    Signal(SIGTERM);
    Wait(5000);
  }
  if (pid_ > 0 && !exited_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_ != nullptr) fclose(out_);
}

std::string ChildProcess::ReadLine() {
  std::string line;
  char buffer[4096];
  while (out_ != nullptr && fgets(buffer, sizeof buffer, out_) != nullptr) {
    line += buffer;
    if (!line.empty() && line.back() == '\n') break;
  }
  return line;
}

void ChildProcess::WriteLine(const std::string& line) {
  std::fputs((line + "\n").c_str(), in_);
  std::fflush(in_);
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0 && !exited_) kill(pid_, sig);
}

int ChildProcess::Wait(int timeout_ms) {
  for (int waited = 0; pid_ > 0 && !exited_ && waited < timeout_ms; waited += 10) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    usleep(10000);
  }
  return -1;
}

}  // namespace reins::testing
