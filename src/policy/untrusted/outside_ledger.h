// OutsideLedger: what a session has read from untrusted tools, kept in its own session
// slot ("untrusted_data", SessionState::Slot) and so stored with the session in each
// turn's transaction: outside data read in turn 3 still counts in turn 7, on another
// replica and after a restart.
//
//   {"entered": 3,                                   the turn outside data first entered
//    "sources": [{"tool", "call_id", "turn", "about"}],  the untrusted calls that ran
//    "values": {"iban:GB82...": [0, 2], ...},         outside values -> their sources
//    "overflow": true}                                 past untrusted_data.max_identifiers
//
// Which of those values a trusted source holds too is judged when a write is proposed,
// from what the model can see then (TrustedSources): the person's words and choices, the
// agent file, trusted tools' results.
#pragma once

#include <string>
#include <string_view>

#include "policy/untrusted/outside_values.h"
#include "turn/policy.h"
#include "turn/turn_context.h"

namespace reins {

class OutsideLedger {
 public:
  static constexpr std::string_view kSlot = "untrusted_data";

  // The session's ledger, or null when nothing outside has entered it.
  static const Json* Of(const SessionState& session);

  // Records what an untrusted call returned. Past `limit` values the session fails closed
  // (overflow); returns true when this call made it so.
  static bool Record(SessionState& session, const ToolCall& call, int turn, const Json& result, int limit);

  static bool Overflowed(const Json& ledger) { return ledger.value("overflow", false); }
  // The sources of an outside value, null when no untrusted result held it.
  static const Json* SourcesOf(const Json& ledger, const std::string& key);
  // Source `index` as a provenance entry {"tool", "call_id", "turn"} (and "about").
  static Json Source(const Json& ledger, int index);
  // The newest untrusted calls, at most `n`, newest last.
  static Json Newest(const Json& ledger, size_t n);
};

// Keeps the ledger: what each untrusted tool returns goes into it (Observe), for
// untrusted_data's guard and the no_untrusted_links rail. Past max_identifiers values it
// records the overflow (`untrusted.overflow`) once.
class OutsideDataRecorder final : public Policy {
 public:
  explicit OutsideDataRecorder(int max_identifiers) : limit_(max_identifiers) {}
  std::string_view Name() const override { return "outside_data"; }
  void Observe(TurnContext& ctx, const ProposedCall& call, const ResultEnvelope& result) const override;

 private:
  int limit_;
};

// The untrusted results the model can see (in the turn's history) that hold `value`
// inside their text, word-bounded and case aside: a value the model copied out of
// outside prose ("reserve the Hotel Lumen Nord-Est"), which is neither an identifier
// nor a whole value (ProseValue). As provenance entries {"tool", "call_id", "turn"};
// the turn from the ledger's record of the call.
Json UntrustedTextsHolding(const TurnContext& ctx, const Json& ledger, std::string_view value);

// What the trusted sources in a turn's view hold: the agent file (`agent`, made once per
// agent), the person's words and choices in the history and the turn's request, and the
// results of trusted tools, less what each such call was itself sent (a lookup that
// echoes its query does not vouch for it).
class TrustedSources {
 public:
  TrustedSources(const TurnContext& ctx, const TrustedCorpus& agent);
  bool Holds(const std::string& key, std::string_view raw) const { return agent_.Holds(key, raw) || seen_.Holds(key, raw); }

 private:
  const TrustedCorpus& agent_;
  TrustedCorpus seen_;
};

// The agent file's words, as a trusted source: system prompt, greeting, tools' titles
// and descriptions, the safety messages.
TrustedCorpus AgentFileCorpus(const AgentConfig& config);

// How a person reads where a value came from: "the read file result for
// “bill-december-2023.txt” (turn 3)".
std::string SourceWords(const AgentConfig& config, const Json& source);

}  // namespace reins
