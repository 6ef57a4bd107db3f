// The processes of a peer-job run: a child started with its own environment, its
// stdout read line by line (and stdin written), its CPU and memory read from /proc.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "peer_job/peer_job.h"
#include "reins/json.h"
#include "support/child_process.h"

namespace reins::peer_job {

// The tests' child process (tests/support/child_process.h), stopped gently (SIGTERM,
// then SIGKILL after 5 s), with what a measurement reads of it.
class ChildProcess : public testing::ChildProcess {
 public:
  // Runs argv[0] (a path) with `env` added. With `port_prefix` not empty, waits for a
  // stdout line holding it followed by the port the child listens on. With `log` not
  // empty, the child's stderr goes to that file.
  ChildProcess(std::vector<std::string> argv, const std::map<std::string, std::string>& env,
               const std::string& port_prefix, const std::string& log = "")
      : testing::ChildProcess(std::move(argv), {.env = env, .port_prefix = port_prefix, .log = log, .stop_gently = true}) {}

  Json ReadJsonLine();  // the next line that parses as a JSON object
  CpuUse Cpu() const;   // every thread (/proc/PID/stat)
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
