// StdioProcess: an MCP server as a child process speaking line-delimited JSON on its
// stdin/stdout (stderr is free-form logging). Spawned with posix_spawnp (safe in a
// threaded process), pipes on Asio descriptors so reads never block a thread. Shutdown
// follows the MCP spec: close stdin, wait, SIGTERM, wait, SIGKILL; the child is always
// reaped, so no zombie outlives the process object.
#pragma once

#include <sys/types.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "reins/async.h"
#include "reins/status.h"

namespace reins {

class StdioProcess {
 public:
  using LineFn = std::function<void(const std::string& line)>;

  // Starts `command` (argv; the first entry is looked up on PATH) with the parent's
  // environment plus `env`.
  static Result<std::unique_ptr<StdioProcess>> Spawn(boost::asio::any_io_executor executor,
                                                     const std::vector<std::string>& command,
                                                     const std::map<std::string, std::string>& env);
  ~StdioProcess();  // kills and reaps the child if Shutdown was not awaited

  // Queues one message; a newline is added. Writes happen in order.
  void WriteLine(std::string line);
  // Reads stdout and stderr until stdout closes (the child exited or closed it).
  Task<void> ReadUntilClosed(LineFn on_stdout, LineFn on_stderr);
  // Close stdin, wait up to `grace_ms`, SIGTERM, wait again, SIGKILL. Returns the
  // exit status as waitpid reports it (-1 when unknown).
  Task<int> Shutdown(int grace_ms);

  pid_t pid() const { return pid_; }
  bool exited() const { return exited_; }
  int exit_status() const { return status_; }
  // "exited with status 1" / "killed by signal 9"
  std::string DescribeExit() const;

 private:
  StdioProcess(boost::asio::any_io_executor executor, pid_t pid, int in_fd, int out_fd, int err_fd);
  Task<void> DrainWrites();
  Task<void> ReadStderr(LineFn on_stderr);
  bool Reap(bool block);  // true when the child is gone

  boost::asio::any_io_executor executor_;
  pid_t pid_;
  boost::asio::posix::stream_descriptor in_, out_, err_;
  std::deque<std::string> queue_;
  bool writing_ = false;
  bool exited_ = false;
  int status_ = -1;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace reins
