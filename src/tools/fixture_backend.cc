#include "tools/fixture_backend.h"

#include <utility>

#include <algorithm>

#include <boost/asio/this_coro.hpp>

namespace reins {

bool JsonSubsetMatch(const Json& pattern, const Json& value) {
  if (pattern.is_object()) {
    if (!value.is_object()) return false;
    for (const auto& [key, sub] : pattern.items()) {
      auto it = value.find(key);
      if (it == value.end() || !JsonSubsetMatch(sub, *it)) return false;
    }
    return true;
  }
  if (pattern.is_number() && value.is_number()) return pattern.get<double>() == value.get<double>();
  return pattern == value;
}

FixtureBackend::FixtureBackend(std::string tool, Json entries, Clock& clock)
    : tool_(std::move(tool)), entries_(std::move(entries)), clock_(clock) {
  if (!entries_.is_array()) entries_ = Json::array();
  used_.assign(entries_.size(), 0);
}

std::optional<size_t> FixtureBackend::Take(const Json& args) {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Json& entry = entries_[i];
    if (entry.contains("times") && entry["times"].is_number_integer() && used_[i] >= entry["times"].get<int>()) {
      continue;
    }
    if (entry.contains("when") && entry["when"].contains("args") && !JsonSubsetMatch(entry["when"]["args"], args)) {
      continue;
    }
    ++used_[i];
    return i;
  }
  return std::nullopt;
}

Task<Result<Json>> FixtureBackend::Invoke(const ToolRequest& request) {
  ++calls_;
  if (std::optional<size_t> taken = Take(request.args)) {
    const Json& entry = std::as_const(entries_)[*taken];
    if (int64_t latency = entry.value("latency_ms", int64_t{0}); latency > 0) {
      const int64_t budget = std::max<int64_t>(request.timeout_ms, 0);
      co_await clock_.Sleep(std::min(latency, budget));
      if (latency > budget) co_return DeadlineExceeded("timed out after " + std::to_string(budget) + " ms");
      // (A cancelled sleep returns early: the call did not finish.)
      if ((co_await boost::asio::this_coro::cancellation_state).cancelled() != boost::asio::cancellation_type::none) {
        co_return Aborted("the call to " + tool_ + " was cancelled");
      }
    }
    if (entry.contains("error")) {
      co_return Unavailable(entry["error"].is_string() ? entry["error"].get<std::string>() : entry["error"].dump());
    }
    co_return entry.contains("result") ? entry["result"] : Json::object();
  }
  co_return Unavailable("no fixture entry of " + tool_ + " matches arguments " + request.args.dump());
}

}  // namespace reins
