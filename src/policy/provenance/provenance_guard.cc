#include "policy/provenance/provenance_guard.h"

#include "domain/entities.h"

namespace reins {

ProvenanceGuard::ProvenanceGuard(const AgentConfig& config) {
  for (const ToolDef& tool : config.tools) {
    for (const auto& [type, text] : tool.produces) {
      if (auto path = JsonPath::Parse(text); path.ok()) produces_[tool.name].emplace(type, std::move(path).value());
    }
  }
}

CallVerdict ProvenanceGuard::Guard(TurnContext& ctx, const ProposedCall& proposed) const {
  const ToolDef& tool = *proposed.tool;
  for (const auto& [arg, type] : tool.consumes) {
    auto it = proposed.call->args.find(arg);
    if (it == proposed.call->args.end()) continue;  // required-ness is the schema's business
    std::string id = EntityIdText(*it);
    if (id.empty()) {
      return CallVerdict::Reject("provenance", arg + " must be a " + type + " id taken from a tool result, got " +
                                                   it->dump() + ".");
    }
    if (auto chosen = ctx.session.entities.ChosenFor(type, ctx.result.turn_number)) {
      if (id != *chosen) {
        return CallVerdict::Reject("provenance", "the user chose " + type + " '" + *chosen + "', but " + arg + " is '" +
                                                     id + "'. Use " + arg + " = '" + *chosen + "'.");
      }
      continue;
    }
    if (!ctx.session.entities.WasProduced(type, id)) {
      std::string producers;
      for (const ToolDef& t : ctx.config.tools) {
        if (t.produces.count(type)) producers += (producers.empty() ? "" : " or ") + t.name;
      }
      return CallVerdict::Reject("provenance", arg + " '" + id + "' is not a " + type +
                                                   " id that any tool returned in this conversation. Call " +
                                                   producers + " and use an id from its result; never invent ids.");
    }
  }
  return CallVerdict::Continue();
}

void ProvenanceGuard::Observe(TurnContext& ctx, const ProposedCall& proposed, const ResultEnvelope& result) const {
  if (proposed.tool == nullptr) return;
  for (const auto& [type, ids] : ProducedEntities(*proposed.tool, result)) {
    for (const std::string& id : ids) ctx.session.entities.AddProduced(type, id);
  }
}

void ProvenanceGuard::OnClarificationAnswered(TurnContext& ctx, const PendingClarification& pending,
                                              const std::string& option_id) const {
  if (pending.entity_type.empty()) return;
  ctx.session.entities.AddProduced(pending.entity_type, option_id);
  ctx.session.entities.Choose(pending.entity_type, option_id, ctx.result.turn_number);
}

}  // namespace reins
