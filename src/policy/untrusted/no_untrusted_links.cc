#include "policy/untrusted/no_untrusted_links.h"

#include <algorithm>
#include <optional>

#include "policy/untrusted/outside_ledger.h"

namespace reins {
namespace {

constexpr const char* kDefaultNote =
    "(I left out a link that came from outside data, such as a message, file or web page I read, and not from you.)";
constexpr const char* kRemoved = "[link removed]";

// A streamed reply's sentences lost a link: its end says so.
struct LinksTurn {
  bool removed = false;
};

}  // namespace

NoUntrustedLinks::NoUntrustedLinks(const AgentConfig& config, const Json& rail_config)
    : agent_file_(AgentFileCorpus(config)),
      note_(rail_config.is_object() ? rail_config.value("note", std::string(kDefaultNote)) : kDefaultNote) {}

bool NoUntrustedLinks::Strip(const TurnContext& ctx, std::string& text) const {
  const Json* ledger = OutsideLedger::Of(ctx.session);
  if (ledger == nullptr) return false;
  std::optional<TrustedSources> trusted;
  std::vector<std::pair<size_t, size_t>> cuts;  // spans to take out, in order
  for (const Identifier& id : FindIdentifiers(text)) {
    if (!IsLinkKey(id.key) || OutsideLedger::SourcesOf(*ledger, id.key) == nullptr) continue;
    if (!trusted) trusted.emplace(ctx, agent_file_);
    if (trusted->Holds(id.key, std::string_view(text).substr(id.begin, id.end - id.begin))) continue;
    if (cuts.empty() || cuts.back() != std::make_pair(id.begin, id.end)) cuts.emplace_back(id.begin, id.end);
  }
  for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) text.replace(it->first, it->second - it->first, kRemoved);
  return !cuts.empty();
}

bool NoUntrustedLinks::ReviewReply(TurnContext& ctx, std::string& reply) const {
  if (!Strip(ctx, reply)) return false;
  while (!reply.empty() && (reply.back() == ' ' || reply.back() == '\n')) reply.pop_back();
  reply += (reply.empty() ? "" : " ") + note_;
  return true;
}

bool NoUntrustedLinks::ReviewSentence(TurnContext& ctx, const std::string&, std::string& sentence) const {
  if (!Strip(ctx, sentence)) return false;
  ctx.Slot<LinksTurn>().removed = true;
  return true;
}

bool NoUntrustedLinks::CloseReply(TurnContext& ctx, const std::string& sent, std::string& tail) const {
  if (!ctx.Slot<LinksTurn>().removed) return false;
  tail += (sent.empty() ? "" : " ") + note_;
  return true;
}

}  // namespace reins
