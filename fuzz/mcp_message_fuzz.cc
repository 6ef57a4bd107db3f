// Lines from an MCP server -> the JSON-RPC reader (requests answered, responses and
// notifications dispatched), and a tools/call result -> the result mapping and the
// elicitation reader.
#include <boost/asio/io_context.hpp>

#include "domain/json_parse.h"
#include "fuzz/fuzz_target.h"
#include "mcp/elicitation.h"
#include "mcp/json_rpc.h"
#include "mcp/mcp_client.h"

namespace reins {

REINS_FUZZ_TARGET(mcp_message) {
  boost::asio::io_context io;
  size_t sent = 0;
  JsonRpcPeer peer(io.get_executor(), "fuzz", [&](std::string message) { sent += message.size(); });
  peer.set_request_handler([](const std::string& method, const Json& params) -> Task<Result<Json>> {
    if (method == "ping") co_return Json::object();
    co_return Json{{"echo", params}};
  });
  peer.set_notification_handler([](const std::string&, const Json&) {});
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    peer.Receive(std::string(input.substr(start, end - start)));
    start = end + 1;
  }
  io.poll();
  Json parsed = ParseJsonOrDiscarded(input);
  if (parsed.is_discarded()) return;
  (void)McpResultToToolResult(parsed);
  if (parsed.is_object()) (void)QuestionFromElicitation(parsed);
}

}  // namespace reins
