// The processes of a peer-job run: a child started with its own environment, its
// stdout read line by line (and stdin written), its CPU and memory read from /proc.
#pragma once

#include <atomic>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "peer_job/peer_job.h"
#include "reins/json.h"

namespace reins::peer_job {

class ChildProcess {
 public:
  // Runs argv[0] (a path) with `env` added. With `port_prefix` not empty, waits for a
  // stdout line holding it followed by the port the child listens on. With `log` not
  // empty, the child's stderr goes to that file.
  ChildProcess(std::vector<std::string> argv, const std::map<std::string, std::string>& env,
               const std::string& port_prefix, const std::string& log = "");
  ~ChildProcess();  // SIGTERM, then SIGKILL after 5 s
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const { return pid_; }
  int port() const { return port_; }
  std::string ReadLine();  // "" at end of output
  Json ReadJsonLine();     // the next line that parses as a JSON object
  void WriteLine(const std::string& line);
  CpuUse Cpu() const;  // every thread (/proc/PID/stat)

 private:
  int pid_ = -1;
  int port_ = 0;
  FILE* out_ = nullptr;
  FILE* in_ = nullptr;
};

// Samples a process's VmRSS every 10 ms until Stop(), which returns the largest.
class RssSampler {
 public:
  explicit RssSampler(int pid);
  ~RssSampler();
  long Stop();

 private:
  int pid_;
  std::atomic<bool> stop_{false};
  std::atomic<long> peak_{0};
  std::thread thread_;
};

long StatusKiB(int pid, const char* field);
std::vector<std::string> Split(const std::string& text, char by);

}  // namespace reins::peer_job
