// reins_job_mock: the model of the peer job (bench/peer_job/README.md), an OpenAI Chat
// Completions endpoint on loopback that every runtime in the comparison talks to.
// POST /v1/chat/completions answers the tool call lookup_weather {"city":"Paris"}
// (finish_reason tool_calls) unless the last message is a tool result, which gets
// "It is sunny in Paris." (stop). The bodies carry every field the real API sends
// (usage with its details blocks, service_tier, system_fingerprint), so each client
// parses what it would parse in production. HTTP/1.1 keep-alive; one thread unless
// --threads N, where each thread has its own loop and listening socket on the one port
// (SO_REUSEPORT: the kernel spreads the connections), so a server on many cores is not
// measured against one mock thread.
// GET /__stats: its own CPU and counters, so a run can check 2 requests per turn and
// subtract the mock's share. POST /__delay with a number of ms as the body: the model's
// delay from now on (the memory run warms up fast, then parks its turns on a slow model).
//
//   reins_job_mock [--port N] [--delay-ms MS] [--threads N]     prints "listening PORT" when ready
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using Json = nlohmann::json;

struct Stats {
  std::atomic<long> requests = 0, completions = 0, tool_call_replies = 0, text_replies = 0, errors = 0;
  std::atomic<long> in_flight = 0, max_in_flight = 0;
} g_stats;
std::atomic<long> g_sequence = 0;
std::atomic<int> g_delay_ms = 0;

std::string Usage(size_t request_bytes, int completion_tokens) {
  const long prompt = std::max<long>(1, static_cast<long>(request_bytes / 4));
  return "{\"prompt_tokens\":" + std::to_string(prompt) + ",\"completion_tokens\":" + std::to_string(completion_tokens) +
         ",\"total_tokens\":" + std::to_string(prompt + completion_tokens) +
         ",\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},"
         "\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,"
         "\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}";
}

std::string Http(int status, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : status == 400 ? " Bad Request" : " Not Found") +
         "\r\ncontent-type: application/json\r\ncontent-length: " + std::to_string(body.size()) +
         "\r\nconnection: keep-alive\r\n\r\n" + body;
}

std::string Error(int status, const std::string& message) {
  ++g_stats.errors;
  return Http(status, Json{{"error", {{"message", message}, {"type", "invalid_request_error"}, {"param", nullptr},
                                      {"code", nullptr}}}}.dump());
}

std::string Completion(const std::string& body) {
  Json request = Json::parse(body, nullptr, false);
  if (!request.is_object() || !request.contains("messages") || !request["messages"].is_array() ||
      request["messages"].empty()) {
    return Error(400, "mock: the body has no non-empty 'messages' array");
  }
  if (request.value("stream", false)) return Error(400, "mock: stream is not supported by this mock");
  const bool tool_call = request["messages"].back().value("role", "") != "tool";
  const std::string n = std::to_string(++g_sequence);
  ++g_stats.completions;
  ++(tool_call ? g_stats.tool_call_replies : g_stats.text_replies);
  const std::string message =
      tool_call ? "{\"role\":\"assistant\",\"content\":null,\"refusal\":null,\"annotations\":[],\"tool_calls\":[{\"id\":"
                  "\"call_mock" + n + "\",\"type\":\"function\",\"function\":{\"name\":\"lookup_weather\","
                  "\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]}"
                : "{\"role\":\"assistant\",\"content\":\"It is sunny in Paris.\",\"refusal\":null,\"annotations\":[]}";
  return Http(200, "{\"id\":\"chatcmpl-mock" + n + "\",\"object\":\"chat.completion\",\"created\":1760000000,"
                   "\"model\":" + Json(request.value("model", "")).dump() + ",\"choices\":[{\"index\":0,\"message\":" +
                   message + ",\"logprobs\":null,\"finish_reason\":\"" + (tool_call ? "tool_calls" : "stop") +
                   "\"}],\"usage\":" + Usage(body.size(), tool_call ? 18 : 7) +
                   ",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_mock\"}");
}

std::string StatsReply() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto us = [](const timeval& t) { return static_cast<long>(t.tv_sec) * 1000000 + t.tv_usec; };
  return Http(200, Json{{"requests", g_stats.requests.load()}, {"completions", g_stats.completions.load()},
                        {"toolCallReplies", g_stats.tool_call_replies.load()}, {"textReplies", g_stats.text_replies.load()},
                        {"errors", g_stats.errors.load()}, {"inFlight", g_stats.in_flight.load()},
                        {"maxInFlight", g_stats.max_in_flight.load()}, {"cpuUserUs", us(usage.ru_utime)},
                        {"cpuSystemUs", us(usage.ru_stime)}}.dump());
}

size_t ContentLength(std::string_view head) {
  std::string lower(head);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  const size_t at = lower.find("\r\ncontent-length:");
  return at == std::string::npos ? 0 : std::stoul(lower.substr(at + 17));
}

asio::awaitable<void> Serve(tcp::socket socket) {
  std::string buffer;
  char chunk[16384];
  try {
    for (;;) {
      size_t head_end;
      while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
        buffer.append(chunk, co_await socket.async_read_some(asio::buffer(chunk), asio::use_awaitable));
      }
      // Read from the head before the body's reads: they may move the buffer.
      const std::string_view head(buffer.data(), head_end);
      const size_t length = ContentLength(head);
      const std::string request_line(head.substr(0, head.find("\r\n")));
      while (buffer.size() < head_end + 4 + length) {
        buffer.append(chunk, co_await socket.async_read_some(asio::buffer(chunk), asio::use_awaitable));
      }
      const std::string body = buffer.substr(head_end + 4, length);
      buffer.erase(0, head_end + 4 + length);
      ++g_stats.requests;
      std::string reply;
      if (request_line.rfind("GET /__stats", 0) == 0) {
        reply = StatsReply();
      } else if (request_line.rfind("POST /__delay", 0) == 0) {
        g_delay_ms = std::atoi(body.c_str());
        reply = Http(200, "{}");
      } else if (request_line.rfind("POST /v1/chat/completions ", 0) == 0 ||
                 request_line.rfind("POST /chat/completions ", 0) == 0) {
        const long in_flight = ++g_stats.in_flight;
        for (long most = g_stats.max_in_flight; in_flight > most && !g_stats.max_in_flight.compare_exchange_weak(most, in_flight);) {
        }
        if (const int delay_ms = g_delay_ms; delay_ms > 0) {
          asio::steady_timer timer(socket.get_executor(), std::chrono::milliseconds(delay_ms));
          co_await timer.async_wait(asio::use_awaitable);
        }
        --g_stats.in_flight;
        reply = Completion(body);
      } else {
        reply = Error(404, "mock: only POST /v1/chat/completions and GET /__stats");
      }
      co_await asio::async_write(socket, asio::buffer(reply), asio::use_awaitable);
    }
  } catch (const std::exception&) {
    // the client closed the connection
  }
}

asio::awaitable<void> Accept(tcp::acceptor& acceptor) {
  for (;;) {
    tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
    socket.set_option(tcp::no_delay(true));
    asio::co_spawn(acceptor.get_executor(), Serve(std::move(socket)), asio::detached);
  }
}

// A listening socket on `port` that other threads' sockets may share (SO_REUSEPORT).
tcp::acceptor Listen(asio::io_context& io, unsigned short port) {
  tcp::acceptor acceptor(io);
  const tcp::endpoint at(asio::ip::make_address("127.0.0.1"), port);
  acceptor.open(at.protocol());
  acceptor.set_option(asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>(true));
  acceptor.bind(at);
  acceptor.listen(4096);
  return acceptor;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0, threads = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--port") {
      port = std::stoi(argv[i + 1]);
    } else if (flag == "--delay-ms") {
      g_delay_ms = std::stoi(argv[i + 1]);
    } else if (flag == "--threads") {
      threads = std::max(1, std::stoi(argv[i + 1]));
    } else {
      std::cerr << "usage: reins_job_mock [--port N] [--delay-ms MS] [--threads N]\n";
      return 2;
    }
  }
  std::vector<std::unique_ptr<asio::io_context>> loops;
  std::vector<tcp::acceptor> acceptors;
  for (int t = 0; t < threads; ++t) {
    loops.push_back(std::make_unique<asio::io_context>(1));
    acceptors.push_back(Listen(*loops.back(), static_cast<unsigned short>(port)));
    port = acceptors.front().local_endpoint().port();  // the first socket's port, chosen by the kernel when 0
  }
  std::cout << "listening " << port << std::endl;
  std::vector<std::thread> runners;
  for (int t = 0; t < threads; ++t) {
    asio::co_spawn(*loops[t], Accept(acceptors[t]), asio::detached);
    if (t > 0) runners.emplace_back([&loop = *loops[t]] { loop.run(); });
  }
  loops.front()->run();
  return 0;
}
