// UntrustedDataGuard (`untrusted_data:`, AGENT-CONFIG.md "Untrusted data", I13):
// prompt-injection defence by data flow. Text from outside (mail, files, web pages,
// other people's messages) may carry instructions planted for the model, and no prompt
// makes a model reliably ignore them; what reins can decide is what reaches a write.
//
// What untrusted tools returned is in the session's OutsideLedger (OutsideDataRecorder).
// For each proposed call to a write tool, a violation when
//   - an argument holds an outside value that no trusted source holds (the person's
//     words and choices, the agent file, trusted tools' results): the value came from
//     outside data only. An outside value is an identifier or a whole string value of an
//     untrusted result (the ledger keeps them across turns), or a value that the text
//     of an untrusted result in the model's view holds (copied out of outside prose);
//   - outside data is in the session and the person's request did not ask for this
//     tool's action (WriteRequests): the write itself may be the outside data's idea;
//   - the session holds more outside values than untrusted_data.max_identifiers: it
//     cannot be traced any more, so every write is one (it failed closed).
// A violation is recorded (`untrusted.violation`, with the calls each outside value came
// from) and, as configured, waits for the person's approval (reason untrusted_data, a
// question that says where each value came from) or is refused with the reason told to
// the model. A call the person approved in this very turn passes (I8); no standing
// permission does.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "policy/untrusted/outside_ledger.h"
#include "policy/untrusted/outside_values.h"
#include "policy/untrusted/write_requests.h"
#include "turn/policy.h"

namespace reins {

class UntrustedDataGuard final : public Policy {
 public:
  explicit UntrustedDataGuard(const AgentConfig& config, std::shared_ptr<const ActionReader> reader = nullptr);
  std::string_view Name() const override { return "untrusted_data"; }
  CallVerdict Guard(TurnContext& ctx, const ProposedCall& call) const override;

 private:
  struct Violation;
  Violation Judge(const TurnContext& ctx, const ProposedCall& call, const Json& ledger) const;
  // Where the outside values in one string argument came from: the ledger's record of
  // each identifier or whole value in it that no trusted source holds, else the
  // untrusted results in view whose prose holds it. Empty when it holds none.
  // `trusted` is read on first need.
  Json OutsideSources(const TurnContext& ctx, const Json& ledger, const std::string& text,
                      std::optional<TrustedSources>& trusted) const;
  std::string Question(const Violation& v, const ToolDef& tool, const Json& args) const;
  std::string ToldModel(const Violation& v, const ToolDef& tool) const;

  const AgentConfig& config_;
  WriteRequests requests_;
  TrustedCorpus agent_file_;
};

}  // namespace reins
