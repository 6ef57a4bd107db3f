#include "peer_job/child_process.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

namespace reins::peer_job {

Json ChildProcess::ReadJsonLine() {
  for (std::string line = ReadLine(); !line.empty(); line = ReadLine()) {
    Json j = Json::parse(line, nullptr, false);
    if (j.is_object()) return j;
  }
  return Json{{"error", "the process ended without a result line"}};
}

CpuUse ChildProcess::Cpu() const {
  std::ifstream in("/proc/" + std::to_string(pid()) + "/stat");
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
