#include "policy/rails/no_internal_names.h"

#include <algorithm>
#include <cctype>

namespace reins {
namespace {

bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

}  // namespace

NoInternalNames::NoInternalNames(const AgentConfig& config) {
  for (const ToolDef& t : config.tools) {
    if (t.title != t.name) names_.emplace_back(t.name, t.title);
  }
  // Longest first, so "get_info_v2" is replaced before "get_info".
  std::sort(names_.begin(), names_.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

bool NoInternalNames::ReviewReply(TurnContext&, std::string& reply) const {
  bool changed = false;
  for (const auto& [name, title] : names_) {
    size_t pos = 0;
    while ((pos = reply.find(name, pos)) != std::string::npos) {
      size_t end = pos + name.size();
      bool whole = (pos == 0 || !IsNameChar(reply[pos - 1])) && (end == reply.size() || !IsNameChar(reply[end]));
      if (!whole) {
        pos = end;
        continue;
      }
      // Drop code quotes around the name: `submit_prayer_request` -> prayer request.
      if (pos > 0 && end < reply.size() && reply[pos - 1] == '`' && reply[end] == '`') --pos, ++end;
      reply.replace(pos, end - pos, title);
      pos += title.size();
      changed = true;
    }
  }
  return changed;
}

}  // namespace reins
