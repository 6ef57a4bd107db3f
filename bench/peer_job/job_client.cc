#include "peer_job/job_client.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/http_client.h"

namespace reins::peer_job {
namespace {

using SteadyClock = std::chrono::steady_clock;

// One blocking exchange on a fresh io_context (the driver's control calls).
Result<HttpResponse> SendNow(HttpRequest request) {
  boost::asio::io_context io;
  HttpClient client;
  Result<HttpResponse> response = Unavailable("not sent");
  auto send = [&]() -> Task<void> { response = co_await client.Send(std::move(request)); };
  boost::asio::co_spawn(io, send(), boost::asio::detached);
  io.run();
  return response;
}

HttpRequest Post(std::string url, std::string body) {
  HttpRequest r;
  r.url = std::move(url);
  r.body = std::move(body);
  r.timeouts.first_byte_ms = r.timeouts.total_ms = 600000;
  return r;
}

// One turn as a person runs it: a new session (its id in `*session_id`) that begins
// with the turn (POST /v1/sessions with its first turn), or, `created_first`, a new
// session and then the turn in it (two requests). "" when it went as the job says,
// else what went wrong.
Task<std::string> OneTurn(HttpClient& client, const std::string& server, bool created_first, std::string* session_id) {
  // (Requests named before they are sent: GCC 12 mishandles temporaries in a co_await.)
  const Json input = {{"speaker", "user"}, {"say", kQuestion}};
  Json turn_result;
  if (created_first) {
    HttpRequest create = Post(server + "/v1/sessions", "{}");
    Result<HttpResponse> session = co_await client.Send(std::move(create));
    if (!session.ok() || session->status != 201) {
      co_return "POST /v1/sessions: " + (session.ok() ? session->body : session.status().message());
    }
    *session_id = Json::parse(session->body).value("session_id", "");
    HttpRequest ask = Post(server + "/v1/sessions/" + *session_id + "/turns", input.dump());
    Result<HttpResponse> turn = co_await client.Send(std::move(ask));
    if (!turn.ok() || turn->status != 200) {
      co_return "POST .../turns: " + (turn.ok() ? turn->body : turn.status().message());
    }
    turn_result = Json::parse(turn->body, nullptr, false);
  } else {
    const Json body = {{"turn", input}};
    HttpRequest begin = Post(server + "/v1/sessions", body.dump());
    Result<HttpResponse> begun = co_await client.Send(std::move(begin));
    if (!begun.ok() || begun->status != 201) {
      co_return "POST /v1/sessions with its turn: " + (begun.ok() ? begun->body : begun.status().message());
    }
    Json answer = Json::parse(begun->body, nullptr, false);
    *session_id = answer.is_object() ? answer.value("session_id", "") : "";
    if (answer.is_object() && answer.contains("turn")) turn_result = std::move(answer["turn"]);
  }
  const std::string reply = turn_result.is_object() ? turn_result.value("reply", "") : "";
  if (reply != kAnswer) co_return "the reply was \"" + reply + "\", not \"" + kAnswer + "\"";
  co_return "";
}

}  // namespace

Mock::Mock(int threads) : process_({REINS_JOB_MOCK, "--port", "0", "--threads", std::to_string(threads)}, {}, "listening ") {}

Json Mock::Stats() const {
  HttpRequest r;
  r.method = "GET";
  r.url = url() + "/__stats";
  Result<HttpResponse> response = SendNow(r);
  return response.ok() ? Json::parse(response->body, nullptr, false) : Json::object();
}

double Mock::RequestsSince(const Json& before) const {
  return static_cast<double>(Stats().value("completions", 0L) - before.value("completions", 0L));
}

void Mock::SetDelay(int ms) const { (void)SendNow(Post(url() + "/__delay", std::to_string(ms))); }

bool JobClient::RunConcurrent(int n, int width, int threads) {
  threads = std::max(1, std::min(threads, width));
  std::atomic<int> next = 0;
  std::mutex mutex;  // guards error_ and answered_ across the threads
  auto run = [&](int share) {
    boost::asio::io_context io;
    HttpClient::Options options;
    options.max_idle_per_origin = static_cast<size_t>(share);
    HttpClient client(options);
    auto worker = [&]() -> Task<void> {
      while (next++ < n) {
        std::string id;
        std::string failed = co_await OneTurn(client, server_, created_first_, &id);
        std::lock_guard lock(mutex);
        if (!error_.empty()) co_return;
        if (failed.empty()) {
          answered_.push_back(std::move(id));
        } else {
          error_ = std::move(failed);
          co_return;
        }
      }
    };
    for (int w = 0; w < share; ++w) boost::asio::co_spawn(io, worker(), boost::asio::detached);
    io.run();
  };
  std::vector<std::thread> senders;
  for (int t = 1; t < threads; ++t) senders.emplace_back(run, width / threads + (t < width % threads ? 1 : 0));
  run(width / threads + (width % threads > 0 ? 1 : 0));
  for (std::thread& sender : senders) sender.join();
  return error_.empty();
}

bool JobClient::RunPaced(int n, int over_ms, std::vector<Paced>* turns) {
  boost::asio::io_context io;
  HttpClient::Options options;
  options.max_idle_per_origin = static_cast<size_t>(n);
  HttpClient client(options);
  turns->clear();
  const auto start = SteadyClock::now();
  auto turn = [&](int i) -> Task<void> {
    boost::asio::steady_timer timer(io, start + std::chrono::microseconds(int64_t{over_ms} * 1000 * i / n));
    co_await timer.async_wait(boost::asio::use_awaitable);
    const auto began = SteadyClock::now();
    std::string id;
    std::string failed = co_await OneTurn(client, server_, created_first_, &id);
    if (!failed.empty()) {
      if (error_.empty()) error_ = failed;
      co_return;
    }
    using Ms = std::chrono::duration<double, std::milli>;
    turns->push_back({Ms(began - start).count(), Ms(SteadyClock::now() - began).count()});
  };
  for (int i = 0; i < n; ++i) boost::asio::co_spawn(io, turn(i), boost::asio::detached);
  io.run();
  return error_.empty();
}

int JobClient::CountMissing(const std::vector<std::string>& sessions) {
  int missing = 0;
  for (const std::string& id : sessions) {
    HttpRequest r;
    r.method = "GET";
    r.url = server_ + "/v1/sessions/" + id;
    Result<HttpResponse> response = SendNow(r);
    const bool there = response.ok() && response->status == 200 &&
                       Json::parse(response->body, nullptr, false).value("turns", 0) == 1;
    if (!there) ++missing;
  }
  return missing;
}

}  // namespace reins::peer_job
