// `reins serve` end to end: the real binary on a free port, the scripted model and
// fixture tools of tests/server/agent.yaml, talked to over real HTTP with reins' own
// client. Every endpoint, every error status, SSE ordering, a client that goes away,
// tenant isolation, idempotent retries, rate limits and graceful shutdown.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "net/http_client.h"
#include "net/sse.h"
#include "reins/json.h"
#include "server/api_client.h"
#include "server/server_process.h"
#include "support/run_sync.h"
#include "support/session_events.h"

namespace reins {
namespace {

using testing::AddKeyWithBinary;
using testing::Call;
using testing::Reply;
using testing::RunSync;
using testing::ServerProcess;

constexpr const char* kAgent = "tests/server/agent.yaml";

// A streamed request: every SSE event until the server ends the stream.
std::vector<SseEvent> StreamAll(const std::string& url, const std::string& body, std::vector<HttpHeaderField> headers = {}) {
  HttpClient client;
  HttpRequest r;
  r.url = url;
  r.body = body;
  r.headers = std::move(headers);
  r.headers.push_back({"Accept", "text/event-stream"});
  SseParser parser;
  std::vector<SseEvent> events;
  auto out = RunSync(client.Stream(r, [&](std::string_view bytes) {
    parser.Feed(bytes, [&](SseEvent&& e) { events.push_back(std::move(e)); });
    return OkStatus();
  }));
  EXPECT_TRUE(out.ok()) << out.status().message();
  return events;
}

std::string NewSession(const ServerProcess& s, std::vector<HttpHeaderField> headers = {}) {
  Reply r = Call("POST", s.base_url() + "/v1/sessions", "{}", std::move(headers));
  EXPECT_EQ(r.status, 201) << r.body.dump();
  return r.body.value("session_id", "");
}

std::string Say(const std::string& text, const std::string& key = "") {
  Json j = {{"speaker", "user"}, {"say", text}};
  if (!key.empty()) j["idempotency_key"] = key;
  return j.dump();
}

size_t IndexOf(const std::vector<SseEvent>& events, const std::string& name) {
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].event == name) return i;
  }
  return events.size();
}

// The endpoint of an http tool that the test answers by hand: a turn that calls it is
// in flight from the moment its request came until Answer(), however slow the machine.
class HeldEndpoint {
 public:
  HeldEndpoint() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && listen(listener_, 4) == 0 &&
        getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port_ = ntohs(addr.sin_port);
    }
  }
  ~HeldEndpoint() {
    if (call_ >= 0) close(call_);
    close(listener_);
  }
  HeldEndpoint(const HeldEndpoint&) = delete;
  HeldEndpoint& operator=(const HeldEndpoint&) = delete;
  int port() const { return port_; }

  // Waits (a minute at most) for the tool's request and reads it whole.
  bool AwaitCall() {
    pollfd listening{listener_, POLLIN, 0};
    if (poll(&listening, 1, 60000) != 1) return false;
    call_ = accept(listener_, nullptr, nullptr);
    if (call_ < 0) return false;
    timeval wait{60, 0};
    setsockopt(call_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    std::string got;
    size_t whole = std::string::npos;  // the request's length, once its head came
    char buffer[4096];
    while (whole == std::string::npos || got.size() < whole) {
      const ssize_t n = recv(call_, buffer, sizeof buffer, 0);
      if (n <= 0) return false;
      got.append(buffer, static_cast<size_t>(n));
      const size_t head = got.find("\r\n\r\n");
      if (whole != std::string::npos || head == std::string::npos) continue;
      std::string lower = got.substr(0, head);
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      const size_t length = lower.find("content-length:");
      whole = head + 4 + (length == std::string::npos ? 0 : std::stoul(lower.substr(length + 15)));
    }
    return true;
  }
  // Answers the call with a success and hangs up once the client has read it.
  void Answer() {
    if (call_ < 0) return;
    const std::string body = R"({"success":true,"data":{"ok":true}})";
    const std::string response = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    (void)!send(call_, response.data(), response.size(), MSG_NOSIGNAL);
    shutdown(call_, SHUT_WR);
    char buffer[512];
    while (recv(call_, buffer, sizeof buffer, 0) > 0) {
    }
    close(call_);
    call_ = -1;
  }

 private:
  int listener_ = -1;
  int port_ = 0;
  int call_ = -1;
};

// An agent like tests/server/agent.yaml's whose "slow" turns call `held_lookup`, the
// tool of `endpoint`: the test decides when such a turn may end.
std::string HeldAgent(const HeldEndpoint& endpoint) {
  const std::string path = ::testing::TempDir() + "held_agent_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << R"yaml(name: serve-test
system_prompt: You help people of a small church.
model:
  provider: scripted
  replies:
    - { when: { user_matches: "(?i)slow", last: user }, repeat: true,
        tool_calls: [ { name: held_lookup, args: {} } ] }
    - { when: { last: user }, repeat: true, text: Hello there. }
    - { when: { last: tool }, repeat: true, text: Found it. }
tools:
  - name: held_lookup
    timeout_ms: 120000
    input_schema: { type: object }
    backend: { http: { url: "http://127.0.0.1:)yaml"
                      << endpoint.port() << R"yaml(/lookup", timeout_ms: 120000 } }
)yaml";
  return path;
}

class ServeTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> extra = {}, const std::string& agent = kAgent) {
    std::vector<std::string> args = {"--config", agent, "--heartbeat-ms", "200"};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = std::make_unique<ServerProcess>(args);
    ASSERT_GT(server_->port(), 0) << "the server did not start: " << server_->first_line() << server_->Log();
  }
  std::string url(const std::string& path) const { return server_->base_url() + path; }
  // GET /metrics, again until it holds `line` (for at most 10 s): a request is counted
  // once its answer is written, on its connection's event loop, and /metrics on another
  // connection may be served by another loop a moment before.
  Reply MetricsHaving(const std::string& line) {
    Reply metrics = Call("GET", url("/metrics"));
    for (int tries = 0; tries < 1000 && metrics.raw.body.find(line) == std::string::npos; ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      metrics = Call("GET", url("/metrics"));
    }
    return metrics;
  }
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServeTest, HealthReadinessAndMetrics) {
  Start();
  EXPECT_NE(server_->first_line().find("loopback only"), std::string::npos) << server_->first_line();
  EXPECT_EQ(Call("GET", url("/healthz")).status, 200);
  Reply ready = Call("GET", url("/readyz"));
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(ready.body["agent"], "serve-test");
  std::string id = NewSession(*server_);
  ASSERT_EQ(Call("POST", url("/v1/sessions/" + id + "/turns"), Say("Please pray for my mother")).status, 200);
  const std::string turn_answered = "reins_http_requests_total{route=\"/v1/sessions/{id}/turns\",status=\"200\"} 1";
  Reply metrics = MetricsHaving(turn_answered);
  ASSERT_EQ(metrics.status, 200);
  const std::string& text = metrics.raw.body;
  EXPECT_NE(metrics.raw.Header("content-type").find("text/plain"), std::string::npos);
  EXPECT_NE(text.find("reins_turns_total{status=\"completed\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("reins_http_requests_total{route=\"/v1/sessions\",status=\"201\"} 1"), std::string::npos) << text;
  // A turn's response is held while it runs (ServerResponse::Hold): recorded when answered.
  EXPECT_NE(text.find(turn_answered), std::string::npos) << text;
  EXPECT_NE(text.find("reins_model_calls_total{"), std::string::npos) << text;
  EXPECT_NE(text.find("reins_tool_calls_total{deferred=\"true\",status=\"success\",tool=\"save_prayer\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("reins_outbox_depth 0"), std::string::npos) << text;
  EXPECT_NE(text.find("reins_model_call_duration_seconds_bucket"), std::string::npos) << text;
}

TEST_F(ServeTest, ASessionFromGreetingToTrace) {
  Start();
  Reply created = Call("POST", url("/v1/sessions"), R"({"metadata":{"channel":"web"}})");
  ASSERT_EQ(created.status, 201);
  EXPECT_EQ(created.body["greeting"], "Hello! How can I help?");
  std::string id = created.body["session_id"];
  Reply turn = Call("POST", url("/v1/sessions/" + id + "/turns"), Say("Please pray for my mother"));
  ASSERT_EQ(turn.status, 200) << turn.body.dump();
  EXPECT_EQ(turn.body["status"], "completed");
  EXPECT_EQ(turn.body["reply"], "I'm so sorry. The team will pray for her.");
  ASSERT_EQ(turn.body["tools"].size(), 1u);
  EXPECT_EQ(turn.body["tools"][0]["status"], "deferred");
  EXPECT_EQ(turn.body["tools"][0]["success"], true);
  Reply session = Call("GET", url("/v1/sessions/" + id));
  ASSERT_EQ(session.status, 200);
  EXPECT_EQ(session.body["turns"], 1);
  EXPECT_EQ(session.body["metadata"]["channel"], "web");
  EXPECT_TRUE(session.body.contains("created_at"));
  Reply trace = Call("GET", url("/v1/sessions/" + id + "/trace"));
  ASSERT_EQ(trace.status, 200);
  ASSERT_EQ(trace.body["turns"].size(), 1u);
  EXPECT_FALSE(trace.body["turns"][0]["events"].empty());
  // Logs are JSON lines with ids; no prompt or reply text at info level.
  std::string log = server_->Log();
  EXPECT_NE(log.find("\"msg\":\"turn\""), std::string::npos) << log;
  EXPECT_EQ(log.find("pray for her"), std::string::npos) << log;
}

// POST /v1/sessions may bring the session's first turn: one request, answered 201 with
// the session and the turn's result; the session then goes on as any other. A first
// turn that would need a session already is refused and leaves none.
TEST_F(ServeTest, ASessionMayBeginWithItsFirstTurn) {
  Start();
  const size_t before = Call("GET", url("/v1/sessions")).body["sessions"].size();
  Reply begun = Call("POST", url("/v1/sessions"),
                     R"({"metadata":{"channel":"web"},"turn":{"speaker":"user","say":"Please pray for my mother"}})");
  ASSERT_EQ(begun.status, 201) << begun.body.dump();
  EXPECT_EQ(begun.body["greeting"], "Hello! How can I help?");
  const std::string id = begun.body["session_id"];
  EXPECT_EQ(begun.body["turn"]["status"], "completed");
  EXPECT_EQ(begun.body["turn"]["reply"], "I'm so sorry. The team will pray for her.");
  EXPECT_EQ(begun.body["turn"]["tools"][0]["status"], "deferred");
  Reply session = Call("GET", url("/v1/sessions/" + id));
  ASSERT_EQ(session.status, 200);
  EXPECT_EQ(session.body["turns"], 1);
  EXPECT_EQ(session.body["metadata"]["channel"], "web");
  Reply next = Call("POST", url("/v1/sessions/" + id + "/turns"), Say("Tell John I'm late"));
  ASSERT_EQ(next.status, 200) << next.body.dump();
  EXPECT_EQ(next.body["status"], "awaiting_clarification");
  EXPECT_EQ(Call("GET", url("/v1/sessions/" + id)).body["turns"], 2);

  Reply keyed = Call("POST", url("/v1/sessions"), R"({"turn":{"say":"hi"}})", {{"Idempotency-Key", "k-1"}});
  EXPECT_EQ(keyed.status, 400);
  EXPECT_NE(keyed.body["error"]["message"].get<std::string>().find("/turns"), std::string::npos) << keyed.body.dump();
  EXPECT_EQ(Call("POST", url("/v1/sessions"), R"({"turn":{"select":"u_doe"}})").status, 400);
  EXPECT_EQ(Call("POST", url("/v1/sessions"), R"({"turn":{}})").status, 400);
  EXPECT_EQ(Call("GET", url("/v1/sessions")).body["sessions"].size(), before + 1) << "refusals leave no session";

  // Streamed: the session is created first and named in the stream's header.
  HttpClient client;
  HttpRequest r;
  r.url = url("/v1/sessions");
  r.body = R"({"turn":{"say":"Please pray for my mother"}})";
  r.headers = {{"Accept", "text/event-stream"}};
  std::string named;
  SseParser parser;
  std::vector<SseEvent> events;
  auto streamed = RunSync(client.Stream(
      r,
      [&](std::string_view bytes) {
        parser.Feed(bytes, [&](SseEvent&& e) { events.push_back(std::move(e)); });
        return OkStatus();
      },
      [&](const HttpResponse& head) { named = head.Header("reins-session-id"); }));
  ASSERT_TRUE(streamed.ok()) << streamed.status().message();
  EXPECT_EQ(streamed->status, 200);
  ASSERT_FALSE(named.empty());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().event, "turn.started");
  EXPECT_EQ(events.back().event, "turn.completed");
  EXPECT_EQ(Call("GET", url("/v1/sessions/" + named)).body["turns"], 1);

  std::string metrics = Call("GET", url("/metrics")).raw.body;
  EXPECT_NE(metrics.find("reins_sessions_created_total 2"), std::string::npos) << metrics;
}

TEST_F(ServeTest, EveryErrorStatusHasTheErrorBody) {
  Start({"--max-body-bytes", "4096"});
  std::string id = NewSession(*server_);
  std::string turns = url("/v1/sessions/" + id + "/turns");
  auto expect = [](const Reply& r, int status, const std::string& code) {
    EXPECT_EQ(r.status, status) << r.body.dump();
    EXPECT_EQ(r.body["error"]["code"], code) << r.body.dump();
    EXPECT_FALSE(r.body["error"].value("message", "").empty());
  };
  expect(Call("POST", turns, "{not json"), 400, "bad_request");
  expect(Call("POST", turns, R"({"speaker":"user"})"), 400, "bad_request");
  expect(Call("POST", turns, R"({"say":"hi","select":"x"})"), 400, "bad_request");
  expect(Call("POST", turns, R"({"say":42})"), 400, "bad_request");
  expect(Call("POST", turns, R"({"say":"hi","colour":"red"})"), 400, "bad_request");
  expect(Call("POST", turns, R"({"select":"u_doe"})"), 409, "conflict");
  expect(Call("POST", url("/v1/sessions/s_nope/turns"), Say("hi")), 404, "not_found");
  expect(Call("GET", url("/v1/sessions/s_nope")), 404, "not_found");
  expect(Call("GET", url("/v1/nothing")), 404, "not_found");
  expect(Call("PUT", turns, Say("hi")), 405, "method_not_allowed");
  expect(Call("POST", turns, Say(std::string(8000, 'a'))), 413, "body_too_large");
  // Nothing was half-applied: the session has no turn.
  EXPECT_EQ(Call("GET", url("/v1/sessions/" + id)).body["turns"], 0);
}

TEST_F(ServeTest, TenantsOnlySeeTheirOwnSessions) {
  std::string keys = "/tmp/reins-e2e-keys-" + std::to_string(getpid()) + ".yaml";
  unlink(keys.c_str());
  auto add = [&](const std::string& tenant) { return AddKeyWithBinary(keys, tenant); };
  std::string alice = add("alice"), bob = add("bob");
  ASSERT_FALSE(alice.empty());
  Start({"--keys", keys});
  EXPECT_NE(server_->first_line().find("API keys required"), std::string::npos);
  EXPECT_EQ(Call("POST", url("/v1/sessions"), "{}").status, 401);
  EXPECT_EQ(Call("POST", url("/v1/sessions"), "{}", {{"Authorization", "Bearer rk_wrong"}}).status, 401);
  std::string id = NewSession(*server_, {{"Authorization", "Bearer " + alice}});
  ASSERT_FALSE(id.empty());
  Reply theirs = Call("GET", url("/v1/sessions/" + id), "", {{"Authorization", "Bearer " + bob}});
  EXPECT_EQ(theirs.status, 404);
  EXPECT_EQ(Call("POST", url("/v1/sessions/" + id + "/turns"), Say("hi"), {{"Authorization", "Bearer " + bob}}).status, 404);
  EXPECT_EQ(Call("GET", url("/v1/sessions/" + id), "", {{"Authorization", "Bearer " + alice}}).status, 200);
  EXPECT_EQ(Call("GET", url("/healthz")).status, 200);  // probes need no key
  unlink(keys.c_str());
}

TEST_F(ServeTest, RateLimitedRequestsGet429WithRetryAfter) {
  Start({"--rate", "1", "--burst", "2"});
  int limited = 0;
  std::string retry_after;
  for (int i = 0; i < 4; ++i) {
    Reply r = Call("POST", url("/v1/sessions"), "{}");
    if (r.status == 429) {
      ++limited;
      retry_after = r.raw.Header("retry-after");
      EXPECT_EQ(r.body["error"]["code"], "rate_limited");
    }
  }
  EXPECT_GE(limited, 1);
  EXPECT_FALSE(retry_after.empty());
}

TEST_F(ServeTest, ARetriedTurnWithTheSameKeyRunsNothingTwice) {
  Start();
  std::string id = NewSession(*server_);
  std::string turns = url("/v1/sessions/" + id + "/turns");
  Reply first = Call("POST", turns, Say("Please pray for my mother", "req-1"));
  Reply again = Call("POST", turns, Say("Please pray for my mother", "req-1"));
  ASSERT_EQ(first.status, 200);
  ASSERT_EQ(again.status, 200) << again.body.dump();
  EXPECT_EQ(again.body["turn_id"], first.body["turn_id"]);
  EXPECT_EQ(again.raw.Header("idempotent-replay"), "true");
  EXPECT_EQ(again.body["reply"], first.body["reply"]);
  Reply trace = Call("GET", url("/v1/sessions/" + id + "/trace"));
  EXPECT_EQ(trace.body["turns"].size(), 1u);
  int writes = 0;
  for (const Json& e : trace.body["turns"][0]["events"]) writes += e["type"] == "deferred.executed";
  EXPECT_EQ(writes, 1);
}

// On one event loop and on two (where each request's connection is given to a loop in
// turn, so a session's turns, its replay and its cancel run on different threads), a
// turn, its replay and a cancel answer alike. (Many sessions at once on four loops:
// serve_threads_e2e_test.)
TEST_F(ServeTest, OnOneLoopAndOnTwoTurnsAnswerAlike) {
  for (const char* threads : {"1", "2"}) {
    SCOPED_TRACE(std::string("--threads ") + threads);
    Start({"--threads", threads});
    std::string id = NewSession(*server_);
    std::string turns = url("/v1/sessions/" + id + "/turns");
    Reply first = Call("POST", turns, Say("Please pray for my mother", "req-1"));
    ASSERT_EQ(first.status, 200) << first.body.dump();
    EXPECT_EQ(first.body["status"], "completed");
    Reply again = Call("POST", turns, Say("Please pray for my mother", "req-1"));
    ASSERT_EQ(again.status, 200) << again.body.dump();
    EXPECT_EQ(again.body["turn_id"], first.body["turn_id"]);
    EXPECT_EQ(again.raw.Header("idempotent-replay"), "true");
    Reply asked = Call("POST", turns, Say("Tell John I'm late"));
    ASSERT_EQ(asked.status, 200) << asked.body.dump();
    EXPECT_EQ(asked.body["status"], "awaiting_clarification");
    EXPECT_EQ(Call("DELETE", url("/v1/sessions/" + id + "/lease")).status, 204);
    EXPECT_EQ(Call("GET", url("/v1/sessions/" + id + "/trace")).body["turns"].size(), 3u);
    Reply begun = Call("POST", url("/v1/sessions"), R"({"turn":{"say":"Please pray for my mother"}})");
    ASSERT_EQ(begun.status, 201) << begun.body.dump();
    EXPECT_EQ(begun.body["turn"]["status"], "completed");
    EXPECT_EQ(Call("GET", url("/v1/sessions/" + begun.body["session_id"].get<std::string>())).body["turns"], 1);
  }
}

TEST_F(ServeTest, AStreamedTurnDeliversTheReplyBeforeTheDeferredWrite) {
  Start();
  std::string id = NewSession(*server_);
  auto events = StreamAll(url("/v1/sessions/" + id + "/turns"), Say("Please pray for my mother"));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().event, "turn.started");
  EXPECT_EQ(events.back().event, "turn.completed");
  size_t tool = IndexOf(events, "tool.finished"), delta = IndexOf(events, "reply.delta"),
         final = IndexOf(events, "reply.final"), deferred = IndexOf(events, "deferred.finished");
  ASSERT_LT(deferred, events.size());
  EXPECT_LT(tool, delta);
  EXPECT_LT(delta, final);
  EXPECT_LT(final, deferred) << "the reply must reach the client before deferred tools run";
  Json done = Json::parse(events.back().data);
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["tools"][0]["status"], "deferred");
}

TEST_F(ServeTest, ClarificationLeaseAndCancel) {
  Start();
  std::string id = NewSession(*server_);
  Reply asked = Call("POST", url("/v1/sessions/" + id + "/turns"), Say("Tell John I'm late"));
  ASSERT_EQ(asked.status, 200) << asked.body.dump();
  EXPECT_EQ(asked.body["status"], "awaiting_clarification");
  EXPECT_EQ(asked.body["clarification"]["options"].size(), 2u);
  EXPECT_EQ(asked.body["lease"]["owner"], "user");
  Reply held = Call("GET", url("/v1/sessions/" + id));
  EXPECT_TRUE(held.body.contains("pending_clarification")) << held.body.dump();
  EXPECT_TRUE(held.body.contains("lease")) << held.body.dump();
  // Someone else is kept off the floor.
  Reply other = Call("POST", url("/v1/sessions/" + id + "/turns"), R"({"speaker":"bob","say":"hi"})");
  EXPECT_EQ(other.body["status"], "blocked") << other.body.dump();
  Reply cancelled = Call("DELETE", url("/v1/sessions/" + id + "/lease"));
  EXPECT_EQ(cancelled.status, 204);
  Reply after = Call("GET", url("/v1/sessions/" + id));
  EXPECT_FALSE(after.body.contains("pending_clarification")) << after.body.dump();
  EXPECT_FALSE(after.body.contains("lease")) << after.body.dump();
  EXPECT_EQ(Call("POST", url("/v1/sessions/" + id + "/turns"), R"({"select":"u_doe"})").status, 409);
}

TEST_F(ServeTest, ApprovalPausesUntilApproved) {
  Start();
  std::string id = NewSession(*server_);
  Reply paused = Call("POST", url("/v1/sessions/" + id + "/turns"), Say("show it"));
  ASSERT_EQ(paused.status, 200);
  EXPECT_EQ(paused.body["status"], "awaiting_approval");
  EXPECT_EQ(paused.body["approval"]["tool"], "display_confirmation");
  EXPECT_TRUE(Call("GET", url("/v1/sessions/" + id)).body.contains("pending_approval"));
  Reply approved = Call("POST", url("/v1/sessions/" + id + "/turns"), R"({"speaker":"user","approve":true})");
  ASSERT_EQ(approved.status, 200) << approved.body.dump();
  EXPECT_EQ(approved.body["status"], "completed");
  EXPECT_EQ(approved.body["tools"][0]["status"], "executed");
}

TEST_F(ServeTest, AFailedWriteIsANoticeAfterTheReplyAndTheFinalResultCarriesIt) {
  Start();
  std::string id = NewSession(*server_);
  auto events = StreamAll(url("/v1/sessions/" + id + "/turns"), Say("Please note milk"));
  size_t final = IndexOf(events, "reply.final"), notice = IndexOf(events, "notice");
  ASSERT_LT(notice, events.size()) << "no notice event";
  EXPECT_LT(final, notice);
  EXPECT_EQ(Json::parse(events[notice].data)["text"], "(Note: I could not save your note.)");
  EXPECT_EQ(Json::parse(events[final].data)["text"], "I'm so sorry. The team will pray for her.")
      << "the reply as streamed, before the note";
  Json done = Json::parse(events.back().data);
  EXPECT_NE(done["reply"].get<std::string>().find("(Note: I could not save your note.)"), std::string::npos)
      << "turn.completed carries the reply as finally delivered";
}

// The approval event is the TurnResult's `approval`: id, tool, args, why it waits, the
// question the person reads, who asked and who may answer (docs/http-api.md).
TEST_F(ServeTest, AStreamedApprovalIsItsIdToolArgsReasonAndQuestion) {
  Start();
  std::string id = NewSession(*server_);
  auto events = StreamAll(url("/v1/sessions/" + id + "/turns"), Say("show it"));
  size_t at = IndexOf(events, "approval");
  ASSERT_LT(at, events.size());
  Json approval = Json::parse(events[at].data);
  EXPECT_EQ(approval["tool"], "display_confirmation");
  EXPECT_EQ(approval["args"], Json({{"text", "saved"}}));
  EXPECT_EQ(approval["reason"], "policy");
  EXPECT_EQ(approval["prompt"], Json::parse(events.back().data)["approval"]["prompt"]);
  EXPECT_EQ(approval["requested_by"], "user");
  EXPECT_EQ(approval["approvers"], Json::array({"requester"}));
  EXPECT_EQ(approval.size(), 7u) << approval.dump() << " (no expires_at, allow_edit or remember: the rule has none)";
  EXPECT_EQ(approval["id"].get<std::string>().rfind("a_", 0), 0u);
}

TEST_F(ServeTest, AStreamedTurnRefusedBeforeItStartsGetsItsStatus) {
  Start();
  std::string id = NewSession(*server_);
  Reply refused = Call("POST", url("/v1/sessions/" + id + "/turns"), R"({"select":"u_doe"})",
                       {{"Accept", "text/event-stream"}});
  EXPECT_EQ(refused.status, 409) << refused.raw.body;
  EXPECT_EQ(refused.body["error"]["code"], "conflict");
  EXPECT_EQ(refused.raw.Header("content-type"), "application/json");
}

TEST_F(ServeTest, TurnsBeyondMaxInflightGet503) {
  HeldEndpoint tool;
  const std::string agent = HeldAgent(tool);
  Start({"--max-inflight", "1"}, agent);
  std::string a = NewSession(*server_), b = NewSession(*server_);
  boost::asio::io_context io;
  HttpClient client;
  Result<HttpResponse> slow = Status(StatusCode::kInternal, "not run");
  auto run_slow = [&]() -> Task<void> {
    HttpRequest r;
    r.url = url("/v1/sessions/" + a + "/turns");
    r.body = Say("slow please");
    slow = co_await client.Send(r);
  };
  boost::asio::co_spawn(io, run_slow(), boost::asio::detached);
  std::thread driver([&] { io.run(); });
  // The slow turn holds the only place from its tool's call until the test answers it.
  const bool in_flight = tool.AwaitCall();
  Reply busy = Call("POST", url("/v1/sessions/" + b + "/turns"), Say("hello"));
  tool.Answer();
  driver.join();
  std::remove(agent.c_str());
  ASSERT_TRUE(in_flight) << "the slow turn never called its tool: " << server_->Log();
  EXPECT_EQ(busy.status, 503) << busy.body.dump();
  EXPECT_EQ(busy.body["error"]["code"], "overloaded");
  EXPECT_EQ(busy.raw.Header("retry-after"), "1");
  ASSERT_TRUE(slow.ok());
  EXPECT_EQ(slow->status, 200);
  EXPECT_EQ(Call("POST", url("/v1/sessions/" + b + "/turns"), Say("hello")).status, 200) << "a place again";
}

TEST_F(ServeTest, ErrorBodiesStayJsonWhateverTheyQuote) {
  Start();
  std::string id = NewSession(*server_);
  // A field name holding a control character and a quote, quoted back in the message.
  Reply bad = Call("POST", url("/v1/sessions/" + id + "/turns"), R"({"say":"hi","col\u0001\"our":1})");
  EXPECT_EQ(bad.status, 400);
  ASSERT_TRUE(bad.body.is_object()) << bad.raw.body;
  EXPECT_NE(bad.body["error"]["message"].get<std::string>().find("col\x01\"our"), std::string::npos) << bad.raw.body;
}

TEST_F(ServeTest, StreamedTurnsAndLeaseCancelsAreLoggedAndRefusalsCountedByRoute) {
  std::string keys = "/tmp/reins-e2e-log-keys-" + std::to_string(getpid()) + ".yaml";
  unlink(keys.c_str());
  std::string key = AddKeyWithBinary(keys, "acme");
  Start({"--keys", keys});
  std::vector<HttpHeaderField> auth = {{"Authorization", "Bearer " + key}};
  std::string id = NewSession(*server_, auth);
  std::vector<HttpHeaderField> streamed = auth;
  (void)StreamAll(url("/v1/sessions/" + id + "/turns"), Say("hello"), streamed);
  EXPECT_EQ(Call("DELETE", url("/v1/sessions/" + id + "/lease"), "", auth).status, 204);
  EXPECT_EQ(Call("POST", url("/v1/sessions/" + id + "/turns"), Say("hello")).status, 401);
  std::string log = server_->Log();
  size_t turns = 0;
  for (size_t at = log.find("\"msg\":\"turn\""); at != std::string::npos; at = log.find("\"msg\":\"turn\"", at + 1)) ++turns;
  EXPECT_EQ(turns, 2u) << "one line for the streamed turn, one for the cancel:\n" << log;
  const std::string refused = "reins_http_requests_total{route=\"/v1/sessions/{id}/turns\",status=\"401\"} 1";
  std::string metrics = MetricsHaving(refused).raw.body;
  EXPECT_NE(metrics.find(refused), std::string::npos) << metrics;
  unlink(keys.c_str());
}

TEST_F(ServeTest, SessionEventsStreamWhatHappensInTheSession) {
  Start();
  std::string id = NewSession(*server_);
  boost::asio::io_context io;
  HttpClient client;
  std::vector<SseEvent> events;
  auto talk = [&]() -> Task<void> {
    HttpRequest r;
    r.url = url("/v1/sessions/" + id + "/turns");
    r.body = Say("Please pray for my mother");
    (void)co_await client.Send(r);
  };
  // The last thing the turn does is its deferred call's end.
  auto listen = [&]() -> Task<void> {
    co_await testing::ReadSessionEvents(client, url("/v1/sessions/" + id + "/events"), "deferred.finished", events,
                                        [&] { boost::asio::co_spawn(io, talk(), boost::asio::detached); });
  };
  boost::asio::co_spawn(io, listen(), boost::asio::detached);
  io.run_for(std::chrono::seconds(60));  // returns once both are done
  EXPECT_LT(IndexOf(events, "turn.completed"), IndexOf(events, "deferred.finished"));
  EXPECT_LT(IndexOf(events, "deferred.finished"), events.size());
  // Another tenant (here: an unknown session) gets a 404, not a stream.
  EXPECT_EQ(Call("GET", url("/v1/sessions/s_nope/events")).status, 404);
}

TEST_F(ServeTest, AClientThatGoesAwayMidStreamDoesNotStopTheTurn) {
  Start();
  std::string id = NewSession(*server_);
  HttpClient client;
  HttpRequest r;
  r.url = url("/v1/sessions/" + id + "/turns");
  r.body = Say("slow please");
  r.headers.push_back({"Accept", "text/event-stream"});
  SseParser parser;
  auto out = RunSync(client.Stream(r, [&](std::string_view bytes) {
    bool started = false;
    parser.Feed(bytes, [&](SseEvent&& e) { started = started || e.event == "turn.started"; });
    return started ? Aborted("hanging up") : OkStatus();
  }));
  EXPECT_FALSE(out.ok());
  // The turn finishes and is stored although nobody listens.
  Json trace;
  for (int i = 0; i < 1200; ++i) {  // a minute: a margin over the tool's 600 ms on a busy machine
    usleep(50000);
    trace = Call("GET", url("/v1/sessions/" + id + "/trace")).body;
    if (trace["turns"].size() == 1) break;
  }
  ASSERT_EQ(trace["turns"].size(), 1u) << trace.dump();
  EXPECT_EQ(trace["turns"][0]["status"], "completed");
}

// A file store in its default durability (WAL, synchronous=NORMAL): every turn the
// server answered is in the store after a kill -9, and the restarted server serves it.
TEST_F(ServeTest, AServerKilledRightAfterItAnsweredLosesNoTurn) {
  const std::string db = "/tmp/reins_killed_" + std::to_string(::getpid()) + ".db";
  auto remove = [&] {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
  };
  remove();
  Start({"--store", "sqlite:" + db});
  std::vector<std::string> answered;
  for (int i = 0; i < 10; ++i) {
    const std::string id = NewSession(*server_);
    Reply turn = Call("POST", url("/v1/sessions/" + id + "/turns"), Say("Please pray for my mother"));
    ASSERT_EQ(turn.status, 200) << turn.body.dump();
    answered.push_back(id);
  }
  server_->Signal(SIGKILL);
  server_->Wait();
  Start({"--store", "sqlite:" + db});
  for (const std::string& id : answered) {
    Reply session = Call("GET", url("/v1/sessions/" + id));
    ASSERT_EQ(session.status, 200) << id;
    EXPECT_EQ(session.body["turns"], 1) << id;
  }
  server_.reset();
  remove();
}

TEST_F(ServeTest, ShutdownLetsInFlightTurnsFinishThenExitsZero) {
  HeldEndpoint tool;
  const std::string agent = HeldAgent(tool);
  Start({"--shutdown-timeout-ms", "30000"}, agent);  // a margin: the drain ends once the turn is answered
  std::string id = NewSession(*server_);
  boost::asio::io_context io;
  HttpClient client;
  int status = 0;
  auto slow = [&]() -> Task<void> {
    HttpRequest r;
    r.url = url("/v1/sessions/" + id + "/turns");
    r.body = Say("slow please");
    auto out = co_await client.Send(r);
    status = out.ok() ? out->status : -1;
  };
  boost::asio::co_spawn(io, slow(), boost::asio::detached);
  std::thread driver([&] { io.run(); });
  // SIGTERM while the turn is surely in flight (its tool called), and the tool answered
  // only once the server says it is shutting down.
  const bool in_flight = tool.AwaitCall();
  server_->Signal(SIGTERM);
  bool stopping = false;
  for (int i = 0; i < 6000 && !stopping; ++i) {  // a minute at most
    stopping = server_->Log().find("SIGTERM") != std::string::npos;
    if (!stopping) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  tool.Answer();
  driver.join();
  std::remove(agent.c_str());
  EXPECT_TRUE(in_flight) << "the turn never called its tool";
  EXPECT_TRUE(stopping) << "the server never began its shutdown: " << server_->Log();
  EXPECT_EQ(status, 200) << "the in-flight turn was cut";
  EXPECT_EQ(server_->Wait(60000), 0) << server_->Log();
  EXPECT_NE(server_->Log().find("SIGTERM"), std::string::npos);
}

}  // namespace
}  // namespace reins
