#include "peer_job/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

namespace reins::peer_job {

ChildProcess::ChildProcess(std::vector<std::string> argv, const std::map<std::string, std::string>& env,
                           const std::string& port_prefix, const std::string& log) {
  int out[2], in[2];
  if (pipe(out) != 0 || pipe(in) != 0) return;
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(in[0], STDIN_FILENO);
    if (!log.empty()) dup2(open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600), STDERR_FILENO);
    close(out[0]);
    close(in[1]);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
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
  if (port_prefix.empty()) return;
  for (std::string line = ReadLine(); !line.empty(); line = ReadLine()) {
    if (size_t at = line.find(port_prefix); at != std::string::npos) {
      port_ = std::stoi(line.substr(at + port_prefix.size()));
      return;
    }
  }
}

ChildProcess::~ChildProcess() {
  if (in_ != nullptr) fclose(in_);
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    for (int waited = 0; waited < 5000; waited += 10) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      usleep(10000);
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
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

Json ChildProcess::ReadJsonLine() {
  for (std::string line = ReadLine(); !line.empty(); line = ReadLine()) {
    Json j = Json::parse(line, nullptr, false);
    if (j.is_object()) return j;
  }
  return Json{{"error", "the process ended without a result line"}};
}

void ChildProcess::WriteLine(const std::string& line) {
  std::fputs((line + "\n").c_str(), in_);
  std::fflush(in_);
}

CpuUse ChildProcess::Cpu() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // the name may hold spaces
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stol(field);
    if (i == 15) {
      stime = std::stol(field);
      break;
    }
  }
  const auto tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  return {static_cast<double>(utime) / tick, static_cast<double>(stime) / tick};
}


long StatusKiB(int pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(line.find(':') + 1));
  }
  return -1;
}

RssSampler::RssSampler(int pid) : pid_(pid) {
  thread_ = std::thread([this] {
    while (!stop_) {
      peak_ = std::max(peak_.load(), StatusKiB(pid_, "VmRSS:"));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
}

RssSampler::~RssSampler() { Stop(); }

long RssSampler::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  return peak_;
}

std::vector<std::string> Split(const std::string& text, char by) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, by);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

}  // namespace reins::peer_job
