// The adversarial findings against `reins serve` and the loaders (docs/security.md),
// each replayed against the real binary: the server must refuse the input, stay up,
// answer /healthz and keep every other session's data intact.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "reins/json.h"
#include "server/api_client.h"
#include "server/server_process.h"
#include "support/mock_payloads.h"
#include "support/mock_upstream.h"

namespace reins {
namespace {

using testing::AddKeyWithBinary;
using testing::Call;
using testing::MockUpstream;
using testing::Reply;
using testing::ServerProcess;

namespace fs = std::filesystem;

// A connection to the server; `receive_buffer` > 0 makes its receive window that small.
int Connect(int port, int receive_buffer = 0) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (receive_buffer > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `bytes` as they are (no client normalises them), then reads until the server
// closes the connection or `timeout_ms` of silence.
std::string Raw(int port, const std::string& bytes, int timeout_ms = 2000) {
  int fd = Connect(port);
  if (fd < 0) return "";
  (void)!send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  pollfd p{fd, POLLIN, 0};
  while (poll(&p, 1, timeout_ms) > 0) {
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

int StatusOf(const std::string& response) {
  return response.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(response.substr(9, 3)) : 0;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string Temp(const std::string& name) {
  return (fs::path(::testing::TempDir()) / ("reins-abuse-" + std::to_string(getpid()) + "-" + name)).string();
}

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = Temp(name);
  std::ofstream(path) << text;
  return path;
}

// Runs the reins binary with `args`; its exit code and what it wrote to stderr.
std::pair<int, std::string> RunReins(const std::string& args) {
  std::string err = Temp("stderr.txt");
  std::string cmd = std::string(REINS_BINARY) + " " + args + " >/dev/null 2>" + err;
  int code = std::system(cmd.c_str());
  std::ifstream in(err);
  std::stringstream text;
  text << in.rdbuf();
  return {WEXITSTATUS(code), text.str()};
}

class AbuseTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> extra = {}, std::function<void()> in_child = nullptr,
             const std::string& agent = "tests/server/agent.yaml") {
    std::vector<std::string> args = {"--config", agent};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = std::make_unique<ServerProcess>(args, std::move(in_child));
    ASSERT_GT(server_->port(), 0) << "the server did not start: " << server_->first_line() << server_->Log();
  }
  std::string url(const std::string& path) const { return server_->base_url() + path; }
  void ExpectHealthy() {
    EXPECT_EQ(Call("GET", url("/healthz")).status, 200) << server_->Log();
  }
  std::string NewSession(std::vector<HttpHeaderField> headers = {}) {
    Reply r = Call("POST", url("/v1/sessions"), "{}", std::move(headers));
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("session_id", "");
  }
  std::string Metrics() { return Call("GET", url("/metrics")).raw.body; }
  std::unique_ptr<ServerProcess> server_;
};

// 1. The auth check and the router read one canonical path.
TEST_F(AbuseTest, PathsThatAreNotCanonicalAreRefusedNotRoutedPastTheKeys) {
  std::string keys = Temp("keys.yaml");
  fs::remove(keys);
  std::string key = AddKeyWithBinary(keys, "acme");
  Start({"--keys", keys});
  const std::string body = "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
  for (const char* path : {"//v1/sessions", "/v1//sessions", "/./v1/sessions", "/v1/./sessions",
                           "/v1/x/../sessions", "/v1%2Fsessions", "/v1/sessions/%2e%2e/x"}) {
    std::string response = Raw(server_->port(), std::string("POST ") + path + " HTTP/1.1\r\nHost: x\r\n" + body);
    EXPECT_EQ(StatusOf(response), 400) << path << "\n" << response;
  }
  EXPECT_EQ(StatusOf(Raw(server_->port(), "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + body)), 401);
  EXPECT_EQ(StatusOf(Raw(server_->port(), "GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")), 401);
  EXPECT_NE(Metrics().find("reins_sessions 0"), std::string::npos) << "no session was created";
  EXPECT_EQ(Call("POST", url("/v1/sessions"), "{}", {{"Authorization", "Bearer " + key}}).status, 201);
  fs::remove(keys);
}

// 2. Deep nesting is refused while parsing; the server does not recurse into it.
TEST_F(AbuseTest, DeeplyNestedBodiesAre400AndTheServerStaysUp) {
  Start();
  std::string other = NewSession();
  ASSERT_EQ(Call("POST", url("/v1/sessions/" + other + "/turns"), R"({"say":"hello"})").status, 200);
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
  Reply created = Call("POST", url("/v1/sessions"), "{\"metadata\":" + deep + "1" + std::string(100000, '}') + "}");
  EXPECT_EQ(created.status, 400);
  EXPECT_NE(created.body["error"]["message"].get<std::string>().find("deeper than 128"), std::string::npos);
  std::string page = "{\"say\":\"hi\",\"page_context\":" + std::string(40000, '[') + std::string(40000, ']') + "}";
  EXPECT_EQ(Call("POST", url("/v1/sessions/" + other + "/turns"), page).status, 400);
  ExpectHealthy();
  Reply intact = Call("GET", url("/v1/sessions/" + other));
  EXPECT_EQ(intact.body["turns"], 1) << "the other session kept its turn";
}

// 3. A long session stays usable; the trace pages and streams.
TEST_F(AbuseTest, HugeTurnsNeverMakeASessionUnusableAndTheTracePages) {
  MockUpstream upstream;
  const int turns = 11;  // ~10 MB of user text: more than a model request may carry
  for (int i = 0; i < turns; ++i) upstream.Enqueue(MockUpstream::Json(200, testing::OpenAIResponse({"Noted.", {}})));
  std::string agent = WriteFile("long.yaml", "name: long\nmodel: { provider: openai, model: m, api_key: sk-x, base_url: " +
                                                 upstream.base_url() + "/v1, max_retries: 0 }\n");
  Start({}, nullptr, agent);
  std::string id = NewSession();
  for (int i = 0; i < turns; ++i) {
    Json say = {{"say", std::string(950000, static_cast<char>('a' + i))}};
    Reply r = Call("POST", url("/v1/sessions/" + id + "/turns"), say.dump());
    ASSERT_EQ(r.status, 200) << r.body.dump().substr(0, 300);
    EXPECT_EQ(r.body["status"], "completed") << "turn " << i + 1 << ": " << r.body.value("error", "");
  }
  for (const auto& request : upstream.requests()) EXPECT_LT(request.body.size(), 450000u);
  // A page ends at its count or at about 1 MiB of JSON, whichever comes first: three
  // turns of ~1 MB each are more than one page.
  Reply page = Call("GET", url("/v1/sessions/" + id + "/trace?after=4&limit=3"));
  ASSERT_EQ(page.status, 200);
  const size_t paged = page.body["turns"].size();
  ASSERT_GE(paged, 1u);
  EXPECT_LT(paged, 3u) << "a page is bounded by its bytes too";
  EXPECT_EQ(page.body["turns"][0]["turn_number"], 5);
  EXPECT_EQ(page.body["next_after"], 4 + static_cast<int>(paged));
  int after = 0, seen = 0;
  for (int pages = 0; pages < 2 * turns; ++pages) {
    Reply next = Call("GET", url("/v1/sessions/" + id + "/trace?limit=1000&after=" + std::to_string(after)));
    ASSERT_EQ(next.status, 200);
    for (const Json& t : next.body["turns"]) EXPECT_EQ(t["turn_number"], ++seen);
    if (!next.body.contains("next_after")) break;
    after = next.body["next_after"];
  }
  EXPECT_EQ(seen, turns) << "following next_after reads every turn once";
  Reply whole = Call("GET", url("/v1/sessions/" + id + "/trace"));
  ASSERT_EQ(whole.status, 200);
  EXPECT_EQ(whole.raw.Header("transfer-encoding"), "chunked");
  ASSERT_TRUE(whole.body.is_object()) << "the streamed trace is one JSON document";
  EXPECT_EQ(whole.body["turns"].size(), static_cast<size_t>(turns));
  EXPECT_EQ(Call("GET", url("/v1/sessions/" + id + "/trace?limit=0")).status, 400);
  fs::remove(agent);
}

// A client that asks for a trace and never reads it: its receive window is small, so the
// server's write of the trace stalls. The socket, to close when done.
int StalledRead(int port, const std::string& path) {
  const int fd = Connect(port, 4096);
  if (fd < 0) return -1;
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  (void)!send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  // Its status line, once it comes, says the read was admitted: on several event loops
  // the next request may be admitted before this one otherwise. (A minute at most.)
  timeval wait{60, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  char head[12];
  (void)!recv(fd, head, sizeof head, MSG_WAITALL);
  return fd;
}

long ResidentKb(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Second probe, finding 1: readers that never read held a rendered page of up to 100
// turns each (30 of them took a server from 28 MB to 3.1 GB). A page now ends at about
// 1 MiB, and a tenant has --max-trace-reads reads at once: one more is 429.
TEST_F(AbuseTest, TraceReadsThatAreNeverReadHoldAPageEachAndATenantHasAFewAtOnce) {
  MockUpstream upstream;
  const int turns = 11;  // ~10 MB of trace: more than the stalled sockets' buffers take
  for (int i = 0; i < turns; ++i) upstream.Enqueue(MockUpstream::Json(200, testing::OpenAIResponse({"Noted.", {}})));
  std::string agent = WriteFile("readers.yaml", "name: readers\nmodel: { provider: openai, model: m, api_key: sk-x, "
                                                "base_url: " + upstream.base_url() + "/v1, max_retries: 0 }\n");
  const int readers = 12;
  Start({"--max-trace-reads", std::to_string(readers)}, nullptr, agent);
  std::string id = NewSession();
  for (int i = 0; i < turns; ++i) {
    Json say = {{"say", std::string(950000, static_cast<char>('a' + i))}};
    ASSERT_EQ(Call("POST", url("/v1/sessions/" + id + "/turns"), say.dump()).status, 200);
  }
  const long before = ResidentKb(server_->pid());
  std::vector<int> stalled;
  for (int i = 0; i < readers; ++i) {
    stalled.push_back(StalledRead(server_->port(), "/v1/sessions/" + id + (i % 2 ? "/trace" : "/timeline")));
  }
  // Once the stalled reads are admitted, one more is refused.
  Reply refused;
  for (int tries = 0; tries < 100 && refused.status != 429; ++tries) {
    refused = Call("GET", url("/v1/sessions/" + id + "/timeline"));
    if (refused.status != 429) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(refused.status, 429) << server_->Log().substr(0, 2000);
  EXPECT_EQ(refused.body["error"]["code"], "too_many_reads");
  EXPECT_EQ(refused.raw.Header("retry-after"), "1");
  const long grown_mb = (ResidentKb(server_->pid()) - before) / 1024;
  std::printf("server grew %ld MB with %d stalled readers\n", grown_mb, readers);
  EXPECT_LT(grown_mb, 96) << readers << " stalled readers hold about a page each, not a trace each";
  // The session list reads a turn per session: on the same budget. What reads no turns
  // is answered meanwhile.
  EXPECT_EQ(Call("GET", url("/v1/sessions")).status, 429);
  EXPECT_EQ(Call("GET", url("/v1/sessions/" + id)).status, 200);
  ExpectHealthy();
  for (int fd : stalled) close(fd);
  Reply again;
  for (int tries = 0; tries < 600 && again.status != 200; ++tries) {  // a minute: a margin on a busy machine
    again = Call("GET", url("/v1/sessions/" + id + "/trace?limit=1"));
    if (again.status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(again.status, 200) << "the readers' places are given back when their clients go";
  fs::remove(agent);
}

// 4. patternProperties never runs a backtracking regex.
TEST_F(AbuseTest, ABacktrackingPatternDoesNotHoldUpTheServer) {
  std::string agent = WriteFile("redos.yaml", R"(name: redos
model:
  provider: scripted
  replies:
    - { when: { last: user }, repeat: true, tool_calls: [ { name: tag, args: { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!": 1 } } ] }
    - { when: { last: tool }, repeat: true, text: done }
tools:
  - name: tag
    input_schema: { type: object, patternProperties: { "^(a+)+$": { type: integer } }, additionalProperties: false }
    backend: { fixture: [ { result: { ok: true } } ] }
)");
  Start({}, nullptr, agent);
  std::string id = NewSession();
  Reply r = Call("POST", url("/v1/sessions/" + id + "/turns"), R"({"say":"tag it"})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["tools"][0]["status"], "rejected");
  EXPECT_EQ(Call("GET", url("/readyz")).status, 200);
  fs::remove(agent);
}

// 5. A YAML alias bomb is refused before it grows.
TEST_F(AbuseTest, AYamlAliasBombIsRefusedByCheckAndRun) {
  std::string bomb = "name: bomb\nmodel: { provider: scripted }\nx:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    bomb += std::string("  ") + c + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) bomb += std::string(i ? ", *" : "*") + static_cast<char>(c - 1);
    bomb += "]\n";
  }
  std::string agent = WriteFile("bomb.yaml", bomb);
  auto [code, err] = RunReins("check " + agent);
  EXPECT_NE(code, 0);
  EXPECT_NE(err.find("expands to more than"), std::string::npos) << err;
  std::string scenario = WriteFile("bomb-scenario.yaml", "id: b\nagent: " + agent + "\nturns: [ { say: hi } ]\n");
  auto [run_code, run_err] = RunReins("run " + scenario);
  EXPECT_NE(run_code, 0);
  EXPECT_NE(run_err.find("expands to more than"), std::string::npos) << run_err;
  fs::remove(agent);
  fs::remove(scenario);
}

// 6. Running out of descriptors: no spin, clients are told 503, the server recovers.
TEST_F(AbuseTest, DescriptorExhaustionBacksOffAndRecovers) {
  Start({}, [] {
    rlimit limit{64, 64};
    setrlimit(RLIMIT_NOFILE, &limit);
  });
  std::vector<int> held;
  for (int i = 0; i < 100; ++i) {
    int fd = Connect(server_->port());
    if (fd >= 0) held.push_back(fd);
  }
  auto cpu = [&] {
    std::ifstream stat("/proc/" + std::to_string(server_->pid()) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    long ticks = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14 || i == 15) ticks += std::stol(field);
    }
    return ticks;
  };
  long before = cpu();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_LT(cpu() - before, sysconf(_SC_CLK_TCK) / 4) << "the accept loop spins";
  for (int fd : held) close(fd);
  // Healthy again once it noticed the closes and its back-off ended (a minute at most).
  int health = 0;
  for (int tries = 0; tries < 600 && health != 200; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    health = Call("GET", url("/healthz")).status;
  }
  EXPECT_EQ(health, 200) << server_->Log();
  EXPECT_NE(Metrics().find("reins_connections_refused_total{reason=\"fd_exhausted\"}"), std::string::npos);
}

// Second probe, finding 5: one client holding --max-connections idle sockets got
// everyone else a 503, /healthz included. The connection that has waited longest for a
// request now makes room.
TEST_F(AbuseTest, IdleConnectionsMakeRoomWhenEveryConnectionIsOpen) {
  Start({"--max-connections", "4"});
  std::vector<int> held;
  for (int i = 0; i < 4; ++i) held.push_back(Connect(server_->port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < 3; ++i) {
    std::string health = Raw(server_->port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(StatusOf(health), 200) << health;
  }
  char byte;
  pollfd oldest{held[0], POLLIN, 0};
  ASSERT_EQ(poll(&oldest, 1, 60000), 1);
  EXPECT_EQ(recv(held[0], &byte, 1, 0), 0) << "the oldest idle connection was closed to make room";
  for (int fd : held) close(fd);
  const std::string metrics = Metrics();
  const size_t shed = metrics.find("reins_connections_refused_total{reason=\"idle_shed\"} ");
  ASSERT_NE(shed, std::string::npos) << metrics;
  EXPECT_EQ(std::stoi(metrics.substr(metrics.find("} ", shed) + 2)), 1) << "one made room; its place then stayed free";
}

TEST_F(AbuseTest, ConnectionsBeyondTheCapGet503WhenNoneIsIdle) {
  Start({"--max-connections", "4", "--heartbeat-ms", "50"});  // a closed stream is noticed at its next heartbeat
  const std::string session = NewSession();
  std::vector<int> held;  // each a request in hand: an event stream that stays open
  for (int i = 0; i < 4; ++i) {
    held.push_back(Connect(server_->port()));
    const std::string follow = "GET /v1/sessions/" + session + "/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    (void)!send(held.back(), follow.data(), follow.size(), MSG_NOSIGNAL);
  }
  // Each stream's status line says it was admitted (a minute at most for each).
  for (int fd : held) {
    timeval wait{60, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    char head[12] = {0};
    ASSERT_EQ(recv(fd, head, sizeof head, MSG_WAITALL), static_cast<ssize_t>(sizeof head));
    ASSERT_EQ(std::string(head, sizeof head), "HTTP/1.1 200");
  }
  std::string refused = Raw(server_->port(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(StatusOf(refused), 503) << refused;
  EXPECT_NE(refused.find("Retry-After"), std::string::npos);
  for (int fd : held) close(fd);
  int health = 0;
  for (int tries = 0; tries < 1200 && health != 200; ++tries) {  // a minute at most
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    health = StatusOf(Raw(server_->port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  }
  EXPECT_EQ(health, 200) << "the streams' places are free once their clients are gone";
  std::string metrics = Metrics();
  EXPECT_NE(metrics.find("reins_connections_refused_total{reason=\"max_connections\"}"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("reins_connections_open "), std::string::npos);
}

// 7. Framing: a smuggled second request is never read as one.
TEST_F(AbuseTest, AmbiguousFramingIsRefusedAndTheConnectionClosed) {
  Start();
  const std::string smuggled = "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
  for (const char* coding : {"xchunked", "chunked, identity", "identity"}) {
    std::string response = Raw(server_->port(), std::string("POST /v1/sessions HTTP/1.1\r\nHost: x\r\n") +
                                                    "Transfer-Encoding: " + coding + "\r\n\r\n" + smuggled);
    EXPECT_EQ(StatusOf(response), 400) << coding;
    EXPECT_EQ(Count(response, "HTTP/1.1 "), 1u) << "the second request was answered: " << response;
  }
  std::string both = Raw(server_->port(), "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                                          "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
  EXPECT_EQ(StatusOf(both), 400);
  EXPECT_EQ(StatusOf(Raw(server_->port(), "GET /healthz HTTP/1.1\r\n\r\n")), 400) << "HTTP/1.1 without Host";
  EXPECT_EQ(StatusOf(Raw(server_->port(), "GET /healthz HTTP/1.0\r\n\r\n")), 200);
  EXPECT_NE(Metrics().find("reins_sessions 0"), std::string::npos) << "no smuggled session";
}

// What cannot be read as a request gets its status before the connection closes: a head
// over 64 KB a 431, a declared body over the cap a 413 before a byte of it is read, bytes
// that are not HTTP a 400; a client that asks to be told to go on is told, once.
TEST_F(AbuseTest, UnreadableRequestsGetTheirStatusAndExpectContinueIsAnswered) {
  Start({"--max-body-bytes", "4096"});
  const std::string huge_head = Raw(server_->port(), "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " +
                                                         std::string(70 * 1024, 'a') + "\r\n\r\n");
  EXPECT_EQ(StatusOf(huge_head), 431) << huge_head.substr(0, 200);
  EXPECT_NE(huge_head.find("Connection: close"), std::string::npos) << huge_head.substr(0, 200);
  const std::string too_long = Raw(server_->port(), "POST /v1/sessions HTTP/1.1\r\nHost: x\r\n"
                                                    "Content-Length: 100000\r\n\r\n{");
  EXPECT_EQ(StatusOf(too_long), 413) << too_long;
  EXPECT_EQ(StatusOf(Raw(server_->port(), "NOT HTTP AT ALL\r\n\r\n")), 400);

  const std::string go_on = Raw(server_->port(), "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n"
                                                 "Content-Type: application/json\r\nContent-Length: 2\r\n"
                                                 "Connection: close\r\n\r\n{}");
  ASSERT_TRUE(go_on.starts_with("HTTP/1.1 100 Continue\r\n\r\n")) << go_on;
  EXPECT_EQ(StatusOf(go_on.substr(go_on.find("\r\n\r\n") + 4)), 201) << go_on;
  EXPECT_EQ(Count(go_on, "HTTP/1.1 100"), 1u) << go_on;
  ExpectHealthy();
}

// Issue 74, findings 4 and 5: without --keys a web page could drive the server (a
// cross-origin text/plain POST ran a turn; Host: rebind.attacker.example listed every
// session), and a repeated Authorization picked one of two keys.
TEST_F(AbuseTest, OtherOriginsReboundNamesAndRepeatedHeadersAreRefused) {
  Start({"--allow-origin", "https://app.example.com"});
  const std::string port = std::to_string(server_->port());
  const std::string body = "Content-Length: 2\r\nConnection: close\r\n\r\n{}";
  const std::string csrf = Raw(server_->port(), "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1:" + port +
                                                    "\r\nOrigin: https://evil.example\r\nContent-Type: text/plain\r\n" + body);
  EXPECT_EQ(StatusOf(csrf), 403) << csrf;
  EXPECT_NE(csrf.find("cross_origin"), std::string::npos) << csrf;
  const std::string rebound = Raw(server_->port(), "GET /v1/sessions HTTP/1.1\r\nHost: rebind.attacker.example:" + port +
                                                       "\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(rebound), 403) << rebound;
  EXPECT_NE(rebound.find("host_not_allowed"), std::string::npos) << rebound;
  const std::string twice = Raw(server_->port(), "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer a\r\n"
                                                     "Authorization: Bearer b\r\n" + body);
  EXPECT_EQ(StatusOf(twice), 400) << twice;
  // Without keys a body must be JSON, as a page of another site cannot send it without a
  // preflight: a form or text/plain body is 415, whatever its Origin says.
  for (const char* type : {"text/plain", "application/x-www-form-urlencoded", ""}) {
    const std::string typed = *type ? std::string("Content-Type: ") + type + "\r\n" : "";
    const std::string form = Raw(server_->port(), "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\n" + typed + body);
    EXPECT_EQ(StatusOf(form), 415) << type << ": " << form;
    EXPECT_NE(form.find("Content-Type: application/json"), std::string::npos) << "names the header to send: " << form;
  }
  // The viewer's own page (same origin) and an allowed one may.
  const std::string json = "Content-Type: application/json; charset=utf-8\r\n";
  EXPECT_EQ(StatusOf(Raw(server_->port(), "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1:" + port +
                                              "\r\nOrigin: http://127.0.0.1:" + port + "\r\n" + json + body)), 201);
  EXPECT_EQ(StatusOf(Raw(server_->port(), "POST /v1/sessions HTTP/1.1\r\nHost: localhost:" + port +
                                              "\r\nOrigin: https://app.example.com\r\n" + json + body)), 201);
  EXPECT_NE(Metrics().find("reins_sessions 2"), std::string::npos) << "only the two allowed requests made sessions";
  ExpectHealthy();
}

// Issue 74, finding 2: a client's Idempotency-Key equal to a key the OpenAI door derives
// from a conversation ("chat-<digest>") planted the reply to another client's next
// message. Those keys are the door's own.
TEST_F(AbuseTest, AClientMayNotUseTheDoorsDerivedKeys) {
  Start();
  const std::string session = NewSession();
  Reply turn = Call("POST", url("/v1/sessions/" + session + "/turns"), R"({"say": "hello"})",
                    {{"Idempotency-Key", "chat-0123abcd"}});
  EXPECT_EQ(turn.status, 400) << turn.body.dump();
  EXPECT_NE(turn.body.dump().find("the OpenAI door's own"), std::string::npos) << turn.body.dump();
  Reply in_body = Call("POST", url("/v1/sessions/" + session + "/turns"), R"({"say": "hello", "idempotency_key": "chat-1"})");
  EXPECT_EQ(in_body.status, 400) << in_body.body.dump();
  Reply door = Call("POST", url("/v1/chat/completions"),
                    R"({"model": "serve-test", "messages": [{"role": "user", "content": "hello"}]})",
                    {{"Idempotency-Key", "chat-0123abcd"}, {"X-Reins-Session", session}});
  EXPECT_EQ(door.status, 400) << door.body.dump();
  // Any other key is the client's.
  EXPECT_EQ(Call("POST", url("/v1/sessions/" + session + "/turns"), R"({"say": "hello"})", {{"Idempotency-Key", "my-chat-1"}}).status,
            200);
  ExpectHealthy();
}

// The server writes its response heads itself: each says how long its body is, a kept-
// alive exchange carries no Connection field and the last one says close, and a 204
// has no length at all.
TEST_F(AbuseTest, ResponsesAreFramedExactly) {
  Start();
  const std::string two = Raw(server_->port(), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                                               "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_EQ(Count(two, "HTTP/1.1 200 OK\r\n"), 2u) << two;
  const size_t second = two.find("HTTP/1.1 ", 1);
  for (const std::string& one : {two.substr(0, second), two.substr(second)}) {
    const size_t end = one.find("\r\n\r\n");
    ASSERT_NE(end, std::string::npos) << one;
    const std::string head = one.substr(0, end + 2);
    const size_t length = head.find("Content-Length: ");
    ASSERT_NE(length, std::string::npos) << head;
    EXPECT_EQ(std::stoul(head.substr(length + 16)), one.size() - end - 4) << one;
    EXPECT_NE(head.find("Content-Type: application/json\r\n"), std::string::npos) << head;
  }
  EXPECT_EQ(two.substr(0, second).find("Connection:"), std::string::npos) << two;
  EXPECT_NE(two.substr(second).find("Connection: close\r\n"), std::string::npos) << two;

  const std::string id = NewSession();
  const std::string none = Raw(server_->port(), "DELETE /v1/sessions/" + id + "/lease HTTP/1.1\r\nHost: localhost\r\n"
                                                "Connection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(none), 204) << none;
  EXPECT_EQ(none.find("Content-Length"), std::string::npos) << none;
  EXPECT_TRUE(none.ends_with("\r\n\r\n")) << none;
}

// 8. Internal URLs and credentials never reach API clients.
TEST_F(AbuseTest, ModelErrorsNameTheProviderNotItsAddress) {
  std::string agent = WriteFile("down.yaml",
                                "name: down\nmodel: { provider: openai, model: m, api_key: sk-x, "
                                "base_url: \"http://127.0.0.1:1/secret-path/v1\", max_retries: 0 }\n");
  Start({}, nullptr, agent);
  std::string id = NewSession();
  Reply r = Call("POST", url("/v1/sessions/" + id + "/turns"), R"({"say":"hi"})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["status"], "failed");
  EXPECT_NE(r.body["error"].get<std::string>().find("openai"), std::string::npos) << r.body.dump();
  EXPECT_EQ(r.raw.body.find("secret-path"), std::string::npos) << r.raw.body;
  EXPECT_EQ(Call("GET", url("/v1/sessions/" + id + "/trace")).raw.body.find("secret-path"), std::string::npos);
  EXPECT_NE(server_->Log().find("secret-path"), std::string::npos) << "the operator still sees it";
  std::string creds = WriteFile("creds.yaml", "name: c\nmodel: { provider: openai, model: m, base_url: "
                                              "\"https://u:hunter2@llm.internal/v1\" }\n");
  auto [code, err] = RunReins("check " + creds);
  EXPECT_NE(code, 0);
  EXPECT_NE(err.find("holds credentials"), std::string::npos) << err;
  EXPECT_EQ(err.find("hunter2"), std::string::npos) << err;
  fs::remove(agent);
  fs::remove(creds);
}

// 9. The Idempotency-Key header, and a key reused for another request.
TEST_F(AbuseTest, TheIdempotencyKeyHeaderIsHonouredAndReuseIsRefused) {
  Start();
  std::string id = NewSession();
  std::string turns = url("/v1/sessions/" + id + "/turns");
  Reply first = Call("POST", turns, R"({"say":"Please pray for my mother"})", {{"Idempotency-Key", "abc-1"}});
  ASSERT_EQ(first.status, 200);
  Reply again = Call("POST", turns, R"({"say":"Please pray for my mother"})", {{"Idempotency-Key", "abc-1"}});
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.raw.Header("idempotent-replay"), "true");
  EXPECT_EQ(again.body["turn_id"], first.body["turn_id"]);
  Reply other = Call("POST", turns, R"({"say":"something else"})", {{"Idempotency-Key", "abc-1"}});
  EXPECT_EQ(other.status, 422) << other.body.dump();
  Reply body_key = Call("POST", turns, R"({"say":"something else","idempotency_key":"abc-1"})");
  EXPECT_EQ(body_key.status, 422) << "the header and the body share one key space";
  EXPECT_EQ(Call("GET", url("/v1/sessions/" + id)).body["turns"], 1);
}

// 10. Sessions: bounded cache, per-tenant quota, counted in /metrics.
TEST_F(AbuseTest, SessionsAreBoundedInMemoryAndByQuota) {
  std::string keys = Temp("quota-keys.yaml");
  fs::remove(keys);
  std::string key = AddKeyWithBinary(keys, "acme");
  {
    std::ifstream in(keys);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t at = text.find("acme:");
    size_t end = text.find('\n', text.find("- ", at));
    std::string hash = text.substr(text.find("- ", at) + 2, end - text.find("- ", at) - 2);
    std::ofstream(keys) << "tenants:\n  acme: { keys: [" << hash << "], max_sessions: 3 }\n";
  }
  Start({"--keys", keys, "--session-cache", "2"});
  std::vector<HttpHeaderField> auth = {{"Authorization", "Bearer " + key}};
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) ids.push_back(NewSession(auth));
  Reply begun = Call("POST", url("/v1/sessions"), R"({"turn":{"say":"hello"}})", auth);  // counted before its turn
  ASSERT_EQ(begun.status, 201) << begun.body.dump();
  ids.push_back(begun.body["session_id"]);
  Reply over = Call("POST", url("/v1/sessions"), "{}", auth);
  EXPECT_EQ(over.status, 429);
  EXPECT_EQ(over.body["error"]["code"], "quota_exceeded");
  Reply over_with_turn = Call("POST", url("/v1/sessions"), R"({"turn":{"say":"hello"}})", auth);
  EXPECT_EQ(over_with_turn.status, 429) << over_with_turn.body.dump();
  for (int round = 0; round < 2; ++round) {
    for (const std::string& id : ids) {
      Reply r = Call("POST", url("/v1/sessions/" + id + "/turns"), R"({"say":"hello"})", auth);
      EXPECT_EQ(r.status, 200);
      EXPECT_EQ(r.body["status"], "completed");
    }
  }
  for (const std::string& id : ids) {  // every turn landed on the session as it was, evicted or not
    EXPECT_EQ(Call("GET", url("/v1/sessions/" + id), "", auth).body["turns"], id == ids.back() ? 3 : 2);
  }
  std::string metrics = Metrics();
  EXPECT_NE(metrics.find("reins_sessions 3"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("reins_sessions_cached 2"), std::string::npos) << metrics;
  fs::remove(keys);
}

// 11. Ids carry 96 random bits.
TEST_F(AbuseTest, SessionAndTurnIdsAreNotGuessable) {
  Start();
  std::string a = NewSession(), b = NewSession();
  EXPECT_EQ(a.size(), 37u) << a;
  EXPECT_NE(a.substr(13), b.substr(13));
  Reply r = Call("POST", url("/v1/sessions/" + a + "/turns"), R"({"say":"hello"})");
  EXPECT_EQ(r.body["turn_id"].get<std::string>().size(), 37u);
}

// 12. Lenient loaders: a keys file others may write, an agent file with no agent.
TEST_F(AbuseTest, LooseKeysFilesAndEmptyAgentsAreRefused) {
  std::string keys = Temp("loose-keys.yaml");
  fs::remove(keys);
  AddKeyWithBinary(keys, "acme");
  chmod(keys.c_str(), 0666);
  auto [code, err] = RunReins("serve --config tests/server/agent.yaml --listen 127.0.0.1:0 --keys " + keys);
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("chmod 600"), std::string::npos) << err;
  std::string empty = WriteFile("empty-agent.yaml", "");
  std::string scenario = WriteFile("empty-scenario.yaml", "id: e\nagent: " + empty +
                                                            "\nmodel: { provider: scripted, replies: [ { text: hi } ] }\n"
                                                            "turns: [ { say: hi, expect: { status: completed } } ]\n");
  auto [run_code, run_err] = RunReins("run " + scenario);
  EXPECT_NE(run_code, 0);
  EXPECT_NE(run_err.find("must hold an agent mapping"), std::string::npos) << run_err;
  fs::remove(keys);
  fs::remove(empty);
  fs::remove(scenario);
}

}  // namespace
}  // namespace reins
