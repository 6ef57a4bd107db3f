#include "policy/provenance/provenance_guard.h"

#include "domain/entities.h"
#include "domain/typed_answer.h"

#include <algorithm>

namespace reins {

ProvenanceGuard::ProvenanceGuard(const AgentConfig& config) {
  for (const ToolDef& tool : config.tools) {
    for (const auto& [type, text] : tool.produces) {
      if (auto path = JsonPath::Parse(text); path.ok()) produces_[tool.name].emplace(type, std::move(path).value());
    }
  }
}

namespace {

std::string Quoted(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "'" : ", '") + id + "'";
  return out;
}

// A scoped id in `arg` must belong to the value of the argument belongs_to pairs it with.
std::optional<std::string> Unpaired(const TurnContext& ctx, const ToolDef& tool, const Json& args,
                                    const std::string& arg, const std::string& type, const std::string& id) {
  auto pair = tool.belongs_to.find(arg);
  if (pair == tool.belongs_to.end()) return std::nullopt;
  auto owner_value = args.find(pair->second);
  const std::string owner = owner_value == args.end() ? "" : EntityIdText(*owner_value);
  const std::vector<std::string> owners = ctx.session.entities.OwnersOf(type, id);
  if (!owner.empty() && std::find(owners.begin(), owners.end(), owner) != owners.end()) return std::nullopt;
  const std::string listed = owners.empty() ? "was not listed for anyone" : "was listed for " + Quoted(owners);
  return type + " '" + id + "' " + listed + ", not for " + pair->second + " '" + owner + "'. Use a " + type +
         " listed for " + pair->second + " '" + owner + "'.";
}

}  // namespace

CallVerdict ProvenanceGuard::Guard(TurnContext& ctx, const ProposedCall& proposed) const {
  const ToolDef& tool = *proposed.tool;
  const EntityLedger& entities = ctx.session.entities;
  for (const auto& [arg, type] : tool.consumes) {
    auto it = proposed.call->args.find(arg);
    if (it == proposed.call->args.end()) continue;  // required-ness is the schema's business
    std::string id = EntityIdText(*it);
    if (id.empty()) {
      return CallVerdict::Reject("provenance", arg + " must be a " + type + " id taken from a tool result, got " +
                                                   it->dump() + ".");
    }
    if (auto chosen = entities.ChosenFor(type, ctx.result.turn_number)) {
      if (id != *chosen) {
        return CallVerdict::Reject("provenance", "the user chose " + type + " '" + *chosen + "', but " + arg + " is '" +
                                                     id + "'. Use " + arg + " = '" + *chosen + "'.");
      }
    } else if (std::optional<int> turn = entities.TurnedDown(type, id)) {
      return CallVerdict::Reject("provenance", "the user was asked which " + type + " they meant (turn " +
                                                   std::to_string(*turn) + ") and did not choose '" + id +
                                                   "'. Use the one they chose; if they now mean '" + id +
                                                   "', ask them.");
    } else if (!entities.WasProduced(type, id)) {
      std::string producers;
      for (const ToolDef& t : ctx.config.tools) {
        if (t.withheld.empty() && t.produces.count(type)) producers += (producers.empty() ? "" : " or ") + t.name;
      }
      return CallVerdict::Reject("provenance", arg + " '" + id + "' is not a " + type +
                                                   " id that any tool returned in this conversation. Call " +
                                                   producers + " and use an id from its result; never invent ids.");
    }
    if (std::optional<std::string> why = Unpaired(ctx, tool, proposed.call->args, arg, type, id)) {
      return CallVerdict::Reject("provenance", *why);
    }
  }
  return CallVerdict::Continue();
}

void ProvenanceGuard::Observe(TurnContext& ctx, const ProposedCall& proposed, const ResultEnvelope& result) const {
  if (proposed.tool == nullptr) return;
  const ToolDef& tool = *proposed.tool;
  if (!tool.produces.empty()) {
    const Produced produced = ProducedBy(tool, result);
    for (const auto& [type, ids] : produced.ids) {
      std::string owner;
      if (auto scope = tool.scope.find(type); scope != tool.scope.end()) {
        auto value = proposed.call->args.find(scope->second);
        if (value != proposed.call->args.end()) owner = EntityIdText(*value);
      }
      for (const std::string& id : ids) ctx.session.entities.AddProduced(type, id, owner);
    }
    // A name listed beside an id, unless the person was already shown it by a line of
    // its own (which may tell two "Maria Garcia"s apart).
    for (const auto& [id, title] : produced.titles) {
      if (ctx.session.entities.TitleOf(id) == nullptr) ctx.session.entities.AddTitle(id, title);
    }
  }
  // The words an approval's question uses for an id: the line the person was shown for
  // it (title and subtitle: two patients may share a name).
  if (result.clarification) {
    for (const ClarificationOption& o : result.clarification->options) {
      if (!o.title.empty()) ctx.session.entities.AddTitle(o.id, OptionLine(o));
    }
  }
}

void ProvenanceGuard::OnClarificationAnswered(TurnContext& ctx, const PendingClarification& pending,
                                              const std::string& option_id) const {
  if (pending.entity_type.empty()) return;
  std::vector<std::string> candidates;
  for (const ClarificationOption& o : pending.clarification.options) candidates.push_back(o.id);
  ctx.session.entities.AddProduced(pending.entity_type, option_id);
  ctx.session.entities.Choose(pending.entity_type, option_id, ctx.result.turn_number, candidates);
}

}  // namespace reins
