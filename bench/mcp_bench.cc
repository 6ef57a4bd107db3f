// What the MCP client costs per tools/call, the server's time excluded: building and
// serialising the request, parsing the response, correlating it with its caller
// (timer, coroutine resumption) and mapping the result to a reins envelope. The
// "server" is an in-process function that answers with a canned response on the next
// turn of the event loop, so nothing of a real server's work is counted (nor the pipe
// or socket syscalls of a transport).
// Run: make bench (or build-release/bench/reins_mcp_bench).
#include <benchmark/benchmark.h>

#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "mcp/json_rpc.h"
#include "mcp/mcp_client.h"

namespace reins {
namespace {

// A server-memory-like answer: structured content plus the same JSON as text.
std::string CannedResult(int entities) {
  Json structured = {{"entities", Json::array()}};
  for (int i = 0; i < entities; ++i) {
    structured["entities"].push_back(
        {{"name", "person-" + std::to_string(i)}, {"entityType", "person"}, {"observations", {"likes C++", "prays daily"}}});
  }
  Json result = {{"content", {{{"type", "text"}, {"text", structured.dump()}}}}, {"structuredContent", structured}};
  return result.dump();
}

// The id of a request we sent, found without parsing (the server's work is not ours).
std::string IdOf(const std::string& request) {
  size_t at = request.find("\"id\":") + 5;
  return request.substr(at, request.find_first_of(",}", at) - at);
}

void CallRoundTrip(benchmark::State& state) {
  boost::asio::io_context io;
  const std::string result = CannedResult(static_cast<int>(state.range(0)));
  std::shared_ptr<JsonRpcPeer> peer;
  peer = std::make_shared<JsonRpcPeer>(io.get_executor(), "bench", [&](std::string request) {
    std::string response = R"({"jsonrpc":"2.0","id":)" + IdOf(request) + R"(,"result":)" + result + "}";
    boost::asio::post(io, [&peer, response = std::move(response)] { peer->Receive(response); });
  });
  const std::string method = "tools/call";
  size_t bytes = 0;
  auto loop = [&]() -> Task<void> {
    for (auto _ : state) {
      Json params = {{"name", "read_graph"}, {"arguments", {{"query", "person"}}}};
      Result<Json> r = co_await peer->Call(method, std::move(params), 30000);
      Json envelope = McpResultToToolResult(std::move(*r));
      bytes += result.size();
      benchmark::DoNotOptimize(envelope);
    }
  };
  boost::asio::co_spawn(io, loop(), boost::asio::detached);
  io.run();
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(CallRoundTrip)->Name("McpCall/entities")->Arg(1)->Arg(10)->Arg(100);

}  // namespace
}  // namespace reins

BENCHMARK_MAIN();
