// The two ends of the peer job seen from the driver: JobClient plays the person (it
// starts a session with one turn over HTTP, and checks the reply), Mock
// runs reins_job_mock and reads its counters.
#pragma once

#include <string>
#include <vector>

#include "peer_job/child_process.h"
#include "reins/json.h"

namespace reins::peer_job {

inline constexpr const char* kQuestion = "What is the weather in Paris?";
inline constexpr const char* kAnswer = "It is sunny in Paris.";

class Mock {
 public:
  explicit Mock(int threads = 1);  // the mock's threads (reins_job_mock --threads)
  std::string url() const { return "http://127.0.0.1:" + std::to_string(process_.port()); }
  Json Stats() const;
  // Chat completions the mock answered since `before` (a Stats() result).
  double RequestsSince(const Json& before) const;
  void SetDelay(int ms) const;
  int pid() const { return process_.pid(); }

 private:
  ChildProcess process_;
};

class JobClient {
 public:
  // `created_first`: each session is created by a request of its own before its turn
  // (POST /v1/sessions, then POST .../turns), not begun by the turn (POST /v1/sessions
  // with its `turn`).
  explicit JobClient(std::string server_url, bool created_first = false)
      : server_(std::move(server_url)), created_first_(created_first) {}

  // `n` turns, one after another.
  bool RunSequential(int n) { return RunConcurrent(n, 1); }
  // `n` turns, `width` of them in flight at once, sent from `threads` threads (each with
  // its own loop and connections; a share of the width each), so that on many cores the
  // client is not what bounds the server's turns/s.
  bool RunConcurrent(int n, int width, int threads = 1);
  // A paced turn: when it started, in ms after the first, and its time in ms (session
  // and turn).
  struct Paced {
    double started_ms;
    double took_ms;
  };
  // `n` turns started evenly over `over_ms`; each one's Paced, in the order they ended.
  bool RunPaced(int n, int over_ms, std::vector<Paced>* turns);
  const std::string& error() const { return error_; }
  // The sessions whose turn the server answered as the job says (acknowledged).
  const std::vector<std::string>& answered() const { return answered_; }
  // How many of `sessions` the server does not have with exactly one turn.
  int CountMissing(const std::vector<std::string>& sessions);

 private:
  std::string server_;
  bool created_first_;
  std::string error_;
  std::vector<std::string> answered_;
};

}  // namespace reins::peer_job
