// What governed streaming costs (docs/PERFORMANCE.md, "Governed streaming"): the real
// `reins serve` with an example agent (its rails on), its model a mock upstream (OpenAI
// wire format) that writes the answer one token every --pace-ms. The model first queues
// the agent's deferred write, so each reply also waits for its outbox rows (I12). For
// each N, N sessions each stream one turn at once, and for every sentence the client
// receives it reports how long after the model wrote that sentence's last token the
// sentence arrived: the latency the governor adds (rails, SSE, loopback), p50, p99 and
// max; and the time from the model's first token to the first sentence the person got.
//
//   build-release/bench/reins_stream_bench [--pace-ms 30] [--sentences 3] [--lockstep | --spread-ms T] [--threads 1] [--store URL] [--agent FILE] [--tool NAME] [N ...]
//
// N defaults to 1 1000; the agent to examples/care-chat/agent.yaml with its
// submit_prayer_request (`--tool none`: no write); the store to a SQLite file. The mock
// stamps each token with the monotonic clock as it writes it: the first token of the
// answer and the last one of every sentence carry the time, so the client measures from
// the same clock.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "net/http_client.h"
#include "net/open_files.h"
#include "net/sse.h"
#include "peer_job/child_process.h"
#include "reins/json.h"
#include "server/server_process.h"
#include "support/mock_payloads.h"
#include "support/mock_upstream.h"

namespace {

using namespace reins;

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One OpenAI chunk per token; "{now_us}" is stamped by the mock as it writes the chunk.
std::string TokenChunk(const std::string& token) {
  Json chunk = {{"id", "chatcmpl-bench"}, {"object", "chat.completion.chunk"}, {"created", 1}, {"model", "m"},
                {"choices", Json::array({{{"index", 0}, {"delta", {{"content", token}}}, {"finish_reason", nullptr}}})}};
  return "data: " + chunk.dump() + "\n\n";
}

// `sentences` sentences of ten tokens (three: a voice reply): each sentence's first token
// and last token carry the time they were written.
std::vector<std::string> PacedAnswer(int sentences) {
  std::vector<std::string> events;
  Json role = {{"id", "chatcmpl-bench"}, {"object", "chat.completion.chunk"}, {"created", 1}, {"model", "m"},
               {"choices", Json::array({{{"index", 0}, {"delta", {{"role", "assistant"}}}, {"finish_reason", nullptr}}})}};
  events.push_back("data: " + role.dump() + "\n\n");
  const char* words[] = {"is", "when", "the", "model", "began", "this", "sentence", "and"};
  // A sentence is whole once what follows its stop is known: its last token carries the
  // space after it (the last sentence, the line break the reply ends with).
  for (int s = 0; s < sentences; ++s) {
    events.push_back(TokenChunk("At {now_us}"));
    for (const char* w : words) events.push_back(TokenChunk(std::string(" ") + w));
    events.push_back(TokenChunk(s + 1 < sentences ? " ended {now_us}. " : " ended {now_us}.\n"));
  }
  Json finish = {{"id", "chatcmpl-bench"}, {"object", "chat.completion.chunk"}, {"created", 1}, {"model", "m"},
                 {"choices", Json::array({{{"index", 0}, {"delta", Json::object()}, {"finish_reason", "stop"}}})}};
  events.push_back("data: " + finish.dump() + "\n\n");
  events.push_back("data: [DONE]\n\n");
  return events;
}

// The CPU seconds process `pid` used so far (/proc/PID/stat utime + stime).
double CpuSecondsOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after "pid (comm) "
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The mock's time stamps in a sentence: the runs of six digits or more. A scan, not a
// regex: the client reads a thousand streams on one thread, and its own delay is in
// every figure.
std::vector<int64_t> Stamps(std::string_view text) {
  std::vector<int64_t> stamps;
  for (size_t i = 0; i < text.size();) {
    size_t end = i;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end - i >= 6) {
      int64_t v = 0;
      std::from_chars(text.data() + i, text.data() + end, v);
      stamps.push_back(v);
    }
    i = end == i ? i + 1 : end;
  }
  return stamps;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// The example agent with its model pointed at the mock.
std::string AgentFor(const std::string& agent, const std::string& base_url) {
  std::ifstream in(agent);
  std::stringstream text;
  text << in.rdbuf();
  const std::string model = "  provider: openai\n  model: m\n  api_key: sk-bench\n  base_url: \"" + base_url +
                            "\"\n  max_retries: 0\n  timeout_ms: 600000\n";
  std::string yaml = std::regex_replace(text.str(), std::regex("  provider: scripted[^\n]*\n"), model);
  // Next to the original: the paths it names (a system_prompt_file) stay right.
  const std::string path = agent.substr(0, agent.rfind('/') + 1) + ".stream-bench-" + std::to_string(getpid()) + ".yaml";
  std::ofstream(path) << yaml;
  return path;
}

struct Options {
  int pace_ms = 30;
  // Streams start spread over one token's time, as independent people's would; with
  // --lockstep they start at once, so every token of every stream arrives in one burst
  // (the worst case: each burst queues behind itself).
  bool lockstep = false;
  // --spread-ms T: streams start evenly over T ms instead (arrivals at a steady rate, as
  // in a service that has been running a while; with replies about as long as T, about
  // N streams are under way at once at the end of it).
  int spread_ms = -1;
  int sentences = 3;
  std::string agent = "examples/care-chat/agent.yaml";
  std::string tool = "submit_prayer_request";
  int threads = 1;  // `reins serve --threads`
  // `reins serve --store`; empty: a SQLite file (WAL) in a scratch directory, so that each
  // turn's commit and the log's checkpoints are paid as in a deployment.
  std::string store;
};

struct Stream {
  std::vector<double> added_ms;        // per sentence: arrival minus its last token's stamp
  double first_sentence_ms = -1;       // first delta's arrival minus the answer's first token
  bool ok = false;
};

void Run(int n, const Options& o) {
  testing::MockUpstream upstream;
  // A request whose conversation ends with the person's words gets the tool call; one
  // that ends with the tool's result, the paced answer.
  const std::string args = o.tool == "submit_prayer_request" ? R"({"request":"for my mother"})" : "{}";
  const std::vector<std::string> call = testing::OpenAIStream({"", {{"call_1", o.tool, args}}}, 0);
  const std::vector<std::string> answer = PacedAnswer(o.sentences);
  upstream.Respond([&](const testing::RecordedRequest& request) {
    const Json body = Json::parse(request.body, nullptr, false);
    const bool after_tool = body.is_object() && !body["messages"].empty() && body["messages"].back().value("role", "") == "tool";
    if (o.tool != "none" && !after_tool) return testing::MockUpstream::Sse(call);
    testing::MockReply paced = testing::MockUpstream::Sse(answer);
    paced.chunk_delay_ms = o.pace_ms;
    paced.stamp_now = true;
    return paced;
  });
  const std::string agent = AgentFor(o.agent, upstream.base_url() + "/v1");
  char scratch[] = "/tmp/reins-stream-bench-XXXXXX";
  const bool file_store = o.store.empty() && mkdtemp(scratch) != nullptr;
  std::string store = o.store;
  if (file_store) store.append("sqlite:").append(scratch).append("/sessions.db");
  if (store.empty()) {
    std::cerr << "cannot make a scratch directory for the store; these figures use sqlite::memory:\n";
    store = "sqlite::memory:";
  }
  testing::ServerProcess server({"--config", agent, "--store", store, "--rate", "1000000000", "--burst", "1000000000",
                                 "--max-inflight", std::to_string(n + 16), "--shutdown-timeout-ms", "2000", "--threads",
                                 std::to_string(o.threads)});
  if (server.port() == 0) {
    std::cerr << "reins serve did not start\n" << server.Log();
    return;
  }
  boost::asio::io_context io;
  HttpClient::Options client_options;
  client_options.max_idle_per_origin = static_cast<size_t>(n);
  HttpClient client(client_options);
  std::vector<std::string> sessions(n);
  int made = 0;
  auto make = [&](int i) -> Task<void> {
    HttpRequest r;
    r.url = server.base_url() + "/v1/sessions";
    r.body = "{}";
    auto created = co_await client.Send(r);
    if (created.ok()) sessions[i] = Json::parse(created->body, nullptr, false).value("session_id", "");
    ++made;
  };
  for (int i = 0; i < std::min(n, 200); ++i) {
    boost::asio::co_spawn(io, [&, i]() -> Task<void> {
      for (int j = i; j < n; j += std::min(n, 200)) co_await make(j);
    }, boost::asio::detached);
  }
  io.run();
  io.restart();
  const double cpu_before = CpuSecondsOf(server.pid());
  const double own_cpu_before = CpuSecondsOf(getpid());
  const int64_t wall_before = NowUs();
  std::vector<Stream> streams(n);
  int under_way = 0, most_under_way = 0;  // turns sent and not yet ended
  auto turn = [&](int i) -> Task<void> {
    if (!o.lockstep && n > 1) {
      boost::asio::steady_timer wait(co_await boost::asio::this_coro::executor);
      const int64_t spread_us = int64_t{o.spread_ms >= 0 ? o.spread_ms : o.pace_ms} * 1000;
      wait.expires_after(std::chrono::microseconds(int64_t{i} * spread_us / n));
      co_await wait.async_wait(boost::asio::use_awaitable);
    }
    HttpRequest r;
    r.url = server.base_url() + "/v1/sessions/" + sessions[i] + "/turns";
    r.body = R"({"speaker":"user","say":"Please pray for my mother, she is in the hospital."})";
    r.headers.push_back({"Accept", "text/event-stream"});
    r.timeouts.total_ms = r.timeouts.first_byte_ms = r.timeouts.idle_ms = 600000;
    SseParser parser;
    Stream& s = streams[i];
    most_under_way = std::max(most_under_way, ++under_way);
    auto out = co_await client.Stream(r, [&](std::string_view bytes) {
      const int64_t now = NowUs();
      parser.Feed(bytes, [&](SseEvent&& e) {
        if (e.event != "reply.delta") return;
        const std::string text = Json::parse(e.data, nullptr, false).value("text", "");
        const std::vector<int64_t> stamps = Stamps(text);
        if (stamps.size() < 2) return;  // a correction the rails appended: not the model's sentence
        s.added_ms.push_back(static_cast<double>(now - stamps.back()) / 1000.0);
        if (s.first_sentence_ms < 0) s.first_sentence_ms = static_cast<double>(now - stamps.front()) / 1000.0;
      });
      return OkStatus();
    });
    s.ok = out.ok() && !s.added_ms.empty();
    --under_way;
  };
  for (int i = 0; i < n; ++i) boost::asio::co_spawn(io, turn(i), boost::asio::detached);
  io.run();
  std::vector<double> added, first;
  int ok = 0;
  if (getenv("STREAM_BENCH_BY_SENTENCE") != nullptr) {
    for (size_t k = 0; k < static_cast<size_t>(o.sentences); ++k) {
      std::vector<double> at;
      for (const Stream& s : streams) {
        if (s.added_ms.size() > k) at.push_back(s.added_ms[k]);
      }
      std::fprintf(stderr, "sentence %zu: p50 %.2f p99 %.2f\n", k + 1, Percentile(at, 0.5), Percentile(at, 0.99));
    }
  }
  for (const Stream& s : streams) {
    ok += s.ok;
    added.insert(added.end(), s.added_ms.begin(), s.added_ms.end());
    if (s.first_sentence_ms >= 0) first.push_back(s.first_sentence_ms);
  }
  const double cpu_s = CpuSecondsOf(server.pid()) - cpu_before;
  const double own_cpu_s = CpuSecondsOf(getpid()) - own_cpu_before;
  const double wall_s = static_cast<double>(NowUs() - wall_before) / 1e6;
  const double cpu_ms_per_turn = cpu_s * 1000.0 / n;
  // The load over the run: the server near one core per loop saturates its loops; the
  // server and this process (the mock and the clients) near the machine's cores leave
  // every queue to grow.
  std::fprintf(stderr,
               "%d streams (at most %d at once): %.2f s from the first turn to the last reply; server CPU %.2f s "
               "(%.0f%% of one core), mock and clients %.2f s (%.0f%%)\n",
               n, most_under_way, wall_s, cpu_s, 100.0 * cpu_s / wall_s, own_cpu_s, 100.0 * own_cpu_s / wall_s);
  std::printf("| %5d | %5d | %7zu | %8.2f | %8.2f | %8.2f | %10.0f | %10.0f | %8.2f |\n", n, ok, added.size(),
              Percentile(added, 0.5), Percentile(added, 0.99),
              added.empty() ? 0.0 : *std::max_element(added.begin(), added.end()), Percentile(first, 0.5),
              Percentile(first, 0.99), cpu_ms_per_turn);
  std::fflush(stdout);
  server.Signal(SIGTERM);
  server.Wait();
  std::remove(agent.c_str());
  if (file_store) std::filesystem::remove_all(scratch);
}

}  // namespace

int main(int argc, char** argv) {
  RaiseOpenFileLimit();
  Options o;
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--pace-ms" && i + 1 < argc) {
      o.pace_ms = std::stoi(argv[++i]);
    } else if (a == "--agent" && i + 1 < argc) {
      o.agent = argv[++i];
    } else if (a == "--sentences" && i + 1 < argc) {
      o.sentences = std::max(1, std::stoi(argv[++i]));
    } else if (a == "--threads" && i + 1 < argc) {
      o.threads = std::stoi(argv[++i]);
    } else if (a == "--store" && i + 1 < argc) {
      o.store = argv[++i];
    } else if (a == "--spread-ms" && i + 1 < argc) {
      o.spread_ms = std::stoi(argv[++i]);
    } else if (a == "--lockstep") {
      o.lockstep = true;
    } else if (a == "--tool" && i + 1 < argc) {
      o.tool = argv[++i];
    } else if (!a.empty() && std::isdigit(static_cast<unsigned char>(a[0]))) {
      sizes.push_back(std::stoi(a));
    } else {
      std::cerr << "usage: reins_stream_bench [--pace-ms MS] [--sentences K] [--lockstep | --spread-ms T] [--threads T] [--store URL] [--agent FILE] [--tool NAME|none] [N ...]\n";
      return 2;
    }
  }
  if (sizes.empty()) sizes = {1, 1000};
  std::printf("agent %s, write %s; the model writes a token every %d ms (%d sentences of 10 tokens); streams %s; "
              "reins serve --threads %d, store %s; loopback\n",
              o.agent.c_str(), o.tool.c_str(), o.pace_ms, o.sentences,
              o.lockstep         ? "start at once (lockstep)"
              : o.spread_ms >= 0 ? ("start evenly over " + std::to_string(o.spread_ms) + " ms").c_str()
                                 : "start spread over one token's time",
              o.threads, o.store.empty() ? "a SQLite file (WAL)" : o.store.c_str());
  std::printf("| streams | ok | sentences | added p50 ms | added p99 ms | added max ms | first sentence p50 ms | p99 ms | "
              "server CPU ms/turn |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int n : sizes) Run(n, o);
  return 0;
}
