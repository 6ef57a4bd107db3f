#include "policy/untrusted/write_requests.h"

#include <algorithm>

#include "policy/act/reply_reading.h"

namespace reins {

WriteRequests::WriteRequests(const AgentConfig& config, std::shared_ptr<const ActionReader> reader)
    : reader_(ReaderOr(std::move(reader), config)) {
  for (const IntentConfig& intent : config.intents) {
    auto re = std::make_unique<RE2>(intent.match, RE2::Quiet);
    if (re->ok()) intents_.emplace_back(std::move(re), &intent);
  }
}

bool WriteRequests::Asked(std::string_view request, const ToolDef& tool) const {
  for (const auto& [re, intent] : intents_) {
    const std::vector<std::string>& tools = intent->required_tools;
    if (std::find(tools.begin(), tools.end(), tool.name) != tools.end() && RE2::PartialMatch(request, *re)) return true;
  }
  return reader_->Asks(request, tool.name);
}

}  // namespace reins
