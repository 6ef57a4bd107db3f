// Standing permissions: the person answered an approval "always, for this session"
// (`approve: {decision: true, remember: true}`, for a tool whose approval.remember is
// session). Later calls of that tool that its rule would pause run without asking,
// until the session ends or the permission is revoked; a call that outside data steered
// still asks (I8). Kept in the session's "approval" slot, stored with the turn that
// changed it: {"remembered": {tool: {"by", "turn", "at_ms"}}}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "turn/session_state.h"

namespace reins {

struct StandingPermission {
  std::string tool;
  std::string by;  // who gave it
  int turn = 0;    // in which turn
  int64_t at_ms = 0;
};

// The session's slot for standing permissions (SessionState::Slot).
inline constexpr const char* kApprovalSlot = "approval";

// The permission the person gave `tool` in this session, if they did.
std::optional<StandingPermission> FindStandingPermission(const SessionState& session, const std::string& tool);
// Every standing permission of a session, oldest first (the API lists them).
std::vector<StandingPermission> StandingPermissions(const SessionState& session);
void GrantStandingPermission(SessionState& session, const StandingPermission& p);
// False when there was none for `tool`.
bool RevokeStandingPermission(SessionState& session, const std::string& tool);

}  // namespace reins
