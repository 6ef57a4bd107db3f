#include "policy/approval/standing_permissions.h"

#include <algorithm>

namespace reins {
namespace {

const Json* Remembered(const SessionState& session) {
  auto slot = session.slots.find(kApprovalSlot);
  if (slot == session.slots.end() || !slot->second.is_object()) return nullptr;
  auto it = slot->second.find("remembered");
  return it != slot->second.end() && it->is_object() ? &*it : nullptr;
}

StandingPermission FromJson(const std::string& tool, const Json& j) {
  return {tool, j.value("by", ""), j.value("turn", 0), j.value("at_ms", int64_t{0})};
}

}  // namespace

std::optional<StandingPermission> FindStandingPermission(const SessionState& session, const std::string& tool) {
  const Json* remembered = Remembered(session);
  if (remembered == nullptr) return std::nullopt;
  auto it = remembered->find(tool);
  if (it == remembered->end() || !it->is_object()) return std::nullopt;
  return FromJson(tool, *it);
}

std::vector<StandingPermission> StandingPermissions(const SessionState& session) {
  std::vector<StandingPermission> out;
  if (const Json* remembered = Remembered(session)) {
    for (const auto& [tool, j] : remembered->items()) {
      if (j.is_object()) out.push_back(FromJson(tool, j));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.turn < b.turn; });
  return out;
}

void GrantStandingPermission(SessionState& session, const StandingPermission& p) {
  Json& slot = session.Slot(kApprovalSlot);
  slot["remembered"][p.tool] = {{"by", p.by}, {"turn", p.turn}, {"at_ms", p.at_ms}};
}

bool RevokeStandingPermission(SessionState& session, const std::string& tool) {
  auto slot = session.slots.find(kApprovalSlot);
  if (slot == session.slots.end() || !slot->second.is_object()) return false;
  auto remembered = slot->second.find("remembered");
  if (remembered == slot->second.end() || !remembered->is_object() || remembered->erase(tool) == 0) return false;
  if (remembered->empty()) session.slots.erase(slot);
  return true;
}

}  // namespace reins
