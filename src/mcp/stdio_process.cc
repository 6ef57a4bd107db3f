#include "mcp/stdio_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <utility>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

extern char** environ;

namespace reins {
namespace {

Task<void> SleepMs(int ms) {
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
  timer.expires_after(std::chrono::milliseconds(ms));
  co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
}

// A server's line longer than this is dropped whole: a server that never ends its line
// must not grow our memory without bound.
constexpr size_t kMaxLineBytes = size_t{16} << 20;

// Reads lines from `d` until EOF or an error; each without its newline.
Task<void> ReadLines(boost::asio::posix::stream_descriptor& d, const StdioProcess::LineFn& on_line,
                     std::shared_ptr<bool> alive) {
  boost::asio::streambuf buffer(kMaxLineBytes);
  bool skipping = false;  // inside a line that was too long, until its newline
  while (true) {
    auto [ec, n] = co_await boost::asio::async_read_until(d, buffer, '\n', boost::asio::as_tuple(boost::asio::use_awaitable));
    if (!*alive) co_return;
    if (ec == boost::asio::error::not_found) {  // the buffer is full and holds no newline
      buffer.consume(buffer.size());
      skipping = true;
      continue;
    }
    if (n > 0) {
      std::string line(boost::asio::buffers_begin(buffer.data()), boost::asio::buffers_begin(buffer.data()) + static_cast<long>(n) - 1);
      buffer.consume(n);
      if (std::exchange(skipping, false)) continue;  // the end of the dropped line
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (on_line) on_line(line);
      continue;
    }
    if (ec) co_return;
  }
}

}  // namespace

Result<std::unique_ptr<StdioProcess>> StdioProcess::Spawn(boost::asio::any_io_executor executor,
                                                          const std::vector<std::string>& command,
                                                          const std::map<std::string, std::string>& env) {
  if (command.empty()) return InvalidArgument("MCP server command is empty");
  // A server that exits while we write to it must give us EPIPE, not kill us.
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return Unavailable(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    return Unavailable(std::string("pipe: ") + std::strerror(errno));
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    return Unavailable(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);

  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : env) merged[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : merged) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = command;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(in[1]), close(out[0]), close(err[0]);
    return Unavailable("cannot start MCP server '" + command[0] + "': " + std::strerror(rc));
  }
  return std::unique_ptr<StdioProcess>(new StdioProcess(std::move(executor), pid, in[1], out[0], err[0]));
}

StdioProcess::StdioProcess(boost::asio::any_io_executor executor, pid_t pid, int in_fd, int out_fd, int err_fd)
    : executor_(executor), pid_(pid), in_(executor, in_fd), out_(executor, out_fd), err_(executor, err_fd) {}

StdioProcess::~StdioProcess() {
  *alive_ = false;
  boost::system::error_code ignored;
  in_.close(ignored);
  out_.close(ignored);
  err_.close(ignored);
  if (!Reap(false)) {
    kill(pid_, SIGKILL);
    Reap(true);
  }
}

bool StdioProcess::Reap(bool block) {
  if (exited_) return true;
  int status = 0;
  pid_t r = waitpid(pid_, &status, block ? 0 : WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    exited_ = true;
    status_ = r == pid_ ? status : -1;
  }
  return exited_;
}

std::string StdioProcess::DescribeExit() const {
  if (!exited_ || status_ < 0) return "exited";
  if (WIFEXITED(status_)) return "exited with status " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return "was killed by signal " + std::to_string(WTERMSIG(status_));
  return "exited";
}

void StdioProcess::WriteLine(std::string line) {
  line += '\n';
  queue_.push_back(std::move(line));
  if (writing_) return;
  writing_ = true;
  boost::asio::co_spawn(executor_, DrainWrites(), boost::asio::detached);
}

Task<void> StdioProcess::DrainWrites() {
  auto alive = alive_;
  while (*alive && !queue_.empty()) {
    std::string next = std::move(queue_.front());
    queue_.pop_front();
    auto [ec, n] = co_await boost::asio::async_write(in_, boost::asio::buffer(next), boost::asio::as_tuple(boost::asio::use_awaitable));
    if (!*alive) co_return;
    if (ec) {
      queue_.clear();  // the child closed its stdin: it is going away
      break;
    }
  }
  writing_ = false;
}

Task<void> StdioProcess::ReadStderr(LineFn on_stderr) {
  co_await ReadLines(err_, on_stderr, alive_);
}

Task<void> StdioProcess::ReadUntilClosed(LineFn on_stdout, LineFn on_stderr) {
  boost::asio::co_spawn(executor_, ReadStderr(std::move(on_stderr)), boost::asio::detached);
  auto alive = alive_;
  co_await ReadLines(out_, on_stdout, alive);
  if (!*alive) co_return;
  // stdout closed: the child is exiting. Give it a moment, then make sure.
  for (int i = 0; i < 50 && *alive && !Reap(false); ++i) co_await SleepMs(10);
  if (!*alive) co_return;
  if (!Reap(false)) {
    kill(pid_, SIGKILL);
    Reap(true);
  }
}

Task<int> StdioProcess::Shutdown(int grace_ms) {
  auto alive = alive_;
  boost::system::error_code ignored;
  in_.close(ignored);
  for (int waited = 0; waited < grace_ms && *alive && !Reap(false); waited += 10) co_await SleepMs(10);
  if (!*alive) co_return -1;
  if (!Reap(false)) {
    kill(pid_, SIGTERM);
    for (int waited = 0; waited < grace_ms && *alive && !Reap(false); waited += 10) co_await SleepMs(10);
    if (!*alive) co_return -1;
  }
  if (!Reap(false)) {
    kill(pid_, SIGKILL);
    Reap(true);
  }
  out_.close(ignored);
  err_.close(ignored);
  co_return status_;
}

}  // namespace reins
