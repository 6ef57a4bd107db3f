#include "tools/timed_invoke.h"

#include <boost/asio/experimental/awaitable_operators.hpp>

namespace reins {

Task<std::optional<Result<Json>>> InvokeWithin(ToolBackend& backend, const ToolRequest& request, Clock& clock) {
  if (backend.KeepsDeadline()) {
    // No race: it would cost two more coroutines and a timer on every call.
    Result<Json> answer = co_await backend.Invoke(request);
    if (!answer.ok() && answer.status().code() == StatusCode::kDeadlineExceeded) co_return std::nullopt;
    co_return answer;
  }
  using namespace boost::asio::experimental::awaitable_operators;
  auto raced = co_await (backend.Invoke(request) || clock.Sleep(request.timeout_ms));
  if (raced.index() == 1) co_return std::nullopt;
  co_return std::move(std::get<0>(raced));
}

}  // namespace reins
