// The machine's floor for the peer job: the job done by a hand-written C++ loop with no
// governance at all (bench/peer_job/README.md). One keep-alive connection read and
// written with blocking calls (no event loop), nlohmann for the JSON, the same request
// bodies as the bare Node loop; and, for the durable floor, each turn's messages and
// reply written to a SQLite file in one transaction (WAL, synchronous=NORMAL: what a
// killed process must not lose, as in reins's store). What reins embedded costs above
// this is what its governance and its plumbing cost; what this costs, no runtime on
// this machine can save.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "peer_job/job_client.h"
#include "peer_job/peer_job.h"

namespace reins::peer_job {
namespace {

using Json = nlohmann::json;

// One HTTP/1.1 keep-alive connection to the mock, blocking.
class Connection {
 public:
  explicit Connection(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ok_ = fd_ >= 0 && connect(fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0;
  }
  ~Connection() {
    if (fd_ >= 0) close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // POSTs `body` to the completions path; the answer's body, or "" when it failed.
  std::string Post(const std::string& body) {
    std::string request = "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                          "authorization: Bearer mock\r\ncontent-length: " +
                          std::to_string(body.size()) + "\r\n\r\n";
    request += body;
    if (!ok_ || send(fd_, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) return "";
    return ReadAnswer();
  }

 private:
  std::string ReadAnswer() {
    size_t head_end;
    while ((head_end = in_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return "";
    }
    const size_t at = in_.find("content-length:");  // the mock writes its header names in lower case
    if (at == std::string::npos || at > head_end || in_.compare(9, 3, "200") != 0) return "";
    const size_t length = std::strtoul(in_.c_str() + at + 15, nullptr, 10);
    const size_t body_at = head_end + 4;
    while (in_.size() < body_at + length) {
      if (!Fill()) return "";
    }
    std::string body = in_.substr(body_at, length);
    in_.erase(0, body_at + length);
    return body;
  }
  bool Fill() {
    char chunk[16384];
    const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    in_.append(chunk, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  bool ok_ = false;
  std::string in_;
};

// Each turn's conversation and reply, one row in one transaction.
class TurnLog {
 public:
  explicit TurnLog(const std::string& path) {
    ok_ = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) ==
              SQLITE_OK &&
          sqlite3_exec(db_,
                       "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
                       "CREATE TABLE turns (id INTEGER PRIMARY KEY, created_at INTEGER, messages TEXT, reply TEXT)",
                       nullptr, nullptr, nullptr) == SQLITE_OK &&
          sqlite3_prepare_v2(db_, "INSERT INTO turns (created_at, messages, reply) VALUES (?, ?, ?)", -1, &insert_,
                             nullptr) == SQLITE_OK;
  }
  ~TurnLog() {
    sqlite3_finalize(insert_);
    sqlite3_close(db_);
  }
  TurnLog(const TurnLog&) = delete;
  TurnLog& operator=(const TurnLog&) = delete;

  bool Write(int64_t at, const std::string& messages, const std::string& reply) {
    if (!ok_) return false;
    sqlite3_bind_int64(insert_, 1, at);
    sqlite3_bind_text(insert_, 2, messages.data(), static_cast<int>(messages.size()), SQLITE_STATIC);
    sqlite3_bind_text(insert_, 3, reply.data(), static_cast<int>(reply.size()), SQLITE_STATIC);
    const bool done = sqlite3_step(insert_) == SQLITE_DONE;
    sqlite3_reset(insert_);
    return done;
  }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  bool ok_ = false;
};

const Json& Tools() {
  static const Json tools = Json::parse(R"([{"type":"function","function":{"name":"lookup_weather",
      "description":"Looks up the current weather in a city.","parameters":{"type":"object",
      "properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}}])");
  return tools;
}

// One turn of the job, as the bare Node loop runs it; its reply, or "" when it failed.
std::string Turn(Connection& model, TurnLog* log) {
  Json request = {{"model", "gpt-4o-mini"},
                  {"messages", Json::array({{{"role", "system"}, {"content", "You are a helpful assistant."}},
                                            {{"role", "user"}, {"content", kQuestion}}})},
                  {"tools", Tools()}};
  for (int round = 0; round < 5; ++round) {
    const std::string answer = model.Post(request.dump());
    Json parsed = Json::parse(answer, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_object()) return "";
    Json& message = parsed["choices"][0]["message"];
    if (!message.contains("tool_calls") || message["tool_calls"].empty()) {
      std::string reply = message.value("content", "");
      if (log != nullptr && !log->Write(round, request["messages"].dump(), reply)) return "";
      return reply;
    }
    Json calls = message["tool_calls"];
    request["messages"].push_back(std::move(message));
    for (const Json& call : calls) {
      const Json args = Json::parse(call["function"]["arguments"].get<std::string>(), nullptr, false);
      if (!args.is_object()) return "";
      const Json weather = {{"temp", 21}, {"sky", "sunny"}};
      request["messages"].push_back({{"role", "tool"}, {"tool_call_id", call["id"]}, {"content", weather.dump()}});
    }
  }
  return "";
}

// `turns` turns after the warm-up; the CPU they took, or nothing when one failed (an
// answer without the fields the job's answers have among them).
std::optional<CpuUse> Measure(Connection& model, TurnLog* log, int turns) {
  try {
    for (int i = 0; i < kWarmTurns; ++i) {
      if (Turn(model, log) != kAnswer) return std::nullopt;
    }
    const CpuUse before = OwnCpu();
    for (int i = 0; i < turns; ++i) {
      if (Turn(model, log) != kAnswer) return std::nullopt;
    }
    return OwnCpu() - before;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

int RunFloor(const std::string& mock_url, const std::string& dir, int turns) {
  const int port = std::atoi(mock_url.substr(mock_url.rfind(':') + 1).c_str());
  Connection model(port);
  const std::optional<CpuUse> bare = Measure(model, nullptr, turns);
  TurnLog log(dir + "/floor.db");
  const std::optional<CpuUse> durable = bare ? Measure(model, &log, turns) : std::nullopt;
  if (!durable) {
    std::cout << Json{{"runtime", "bare C++ loop"}, {"error", "a turn of the C++ floor failed"}}.dump() << std::endl;
    return 1;
  }
  auto per_turn = [turns](double seconds) { return seconds * 1e6 / turns; };
  std::cout << Json{{"runtime", "bare C++ loop"}, {"mode", "cpu"}, {"turns", 2 * turns},
                    {"cpu_us_per_turn", per_turn(durable->total())}, {"kernel_us_per_turn", per_turn(durable->system)},
                    {"cpu_us_per_turn_without_store", per_turn(bare->total())},
                    {"kernel_us_per_turn_without_store", per_turn(bare->system)}}
                   .dump()
            << std::endl;
  return 0;
}

}  // namespace reins::peer_job
