// UI allow-list (seed 004): UI elements a reply names ("open the Latency Heatmap
// panel") must be on the user's screen, page_context.ui_elements. With the audit on,
// the audit stage turns any it finds into a rewrite_once without asking a model
// whether to; with or without it, the UiAllowlist rail is the deterministic last
// resort: a sentence that points to an element not on the screen is left out, and the
// reply says what it cannot point to.
#pragma once

#include <string>
#include <vector>

#include "turn/policy.h"
#include "reins/json.h"

namespace reins {

class UiAllowlist final : public Policy {
 public:
  explicit UiAllowlist(const Json& rail_config) : config_(rail_config) {}
  std::string_view Name() const override { return "ui_allowlist"; }
  Rail rail() const override { return Rail::kBySentence; }
  bool ReviewReply(TurnContext& ctx, std::string& reply) const override;
  // A sentence that points at what is not on the screen is never sent; the reply then
  // ends by saying so.
  bool ReviewSentence(TurnContext& ctx, const std::string& sent, std::string& sentence) const override;
  bool CloseReply(TurnContext& ctx, const std::string& sent, std::string& tail) const override;

 private:
  Json config_;
};

// The UI elements `reply` names that `page_context.ui_elements` does not list.
// `rail_config.element_patterns`: RE2 patterns whose first group is an element name
// (a default pattern catches "<Capitalised Words> panel|tab|view|button|...").
std::vector<std::string> UnknownUiElements(const Json& rail_config, const std::string& reply, const Json& page_context);

}  // namespace reins
