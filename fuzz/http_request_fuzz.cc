// Bytes off the wire -> the request parser as `reins serve` configures it, the head
// screen (canonical path, framing), the router, and the body reader of the endpoint.
#include <boost/asio/buffer.hpp>

#include "fuzz/fuzz_target.h"
#include "server/request_bodies.h"
#include "server/request_head.h"
#include "server/routes.h"

namespace reins {

REINS_FUZZ_TARGET(http_request) {
  RequestParser parser;
  ConfigureRequestParser(parser, 64 * 1024);
  boost::beast::error_code ec;
  // As the network delivers it: in pieces, until the head is complete.
  while (!input.empty() && !parser.is_header_done()) {
    size_t used = parser.put(boost::asio::buffer(input.data(), std::min<size_t>(input.size(), 7)), ec);
    if (ec == boost::beast::http::error::need_more && used == 0 && input.size() > 7) {
      used = parser.put(boost::asio::buffer(input.data(), input.size()), ec);
    }
    if ((ec && ec != boost::beast::http::error::need_more) || used == 0) return;
    input.remove_prefix(used);
    ec = {};
  }
  if (!parser.is_header_done()) return;
  RequestRefusal why;
  std::optional<RequestTarget> target = ScreenRequestHead(parser.get(), &why);
  if (!target) return;
  while (!input.empty() && !parser.is_done()) {
    size_t used = parser.put(boost::asio::buffer(input.data(), input.size()), ec);
    if ((ec && ec != boost::beast::http::error::need_more) || used == 0) break;
    input.remove_prefix(used);
    ec = {};
  }
  if (!parser.is_done()) parser.put_eof(ec);
  if (ec) return;
  const std::string& body = parser.get().body();
  const Route route = MatchRoute(target->path);
  switch (route.endpoint) {
    case Endpoint::kCreateSession: {
      Json metadata;
      std::unique_ptr<TurnInput> first;
      (void)ParseSessionBody(body, std::string(parser.get()["Idempotency-Key"]), &metadata, &first);
      break;
    }
    case Endpoint::kTurns: {
      TurnInput in;
      (void)ParseTurnBody(body, std::string(parser.get()["Idempotency-Key"]), &in);
      break;
    }
    case Endpoint::kTrace: {
      TraceQuery query;
      (void)ParseTraceQuery(target->query, &query);
      break;
    }
    default: break;
  }
}

}  // namespace reins
