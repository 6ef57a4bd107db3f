// The person's answer to the approval their session has pending (TurnInput::approve, I8),
// and an approval that waited past its ttl_s.
#pragma once

#include <optional>
#include <string>

#include "turn/turn_context.h"

namespace reins {

// Checks the turn's answer and records it in the turn's decisions (approval.granted or
// approval.denied, with `by`, the edited arguments and what the person said). Refused,
// with nothing changed, when nothing is pending (FailedPrecondition), when the speaker is
// not one the approval's approvers admit (PermissionDenied: the API's 403
// not_an_approver), or when the answer asks for what this approval does not allow
// (InvalidArgument: changed arguments without approval.allow_edit; "always" without
// approval.remember: session, or for a call outside data steered). Edited arguments
// replace those of the same name; every guard checks the call again when it runs.
Status AnswerApproval(TurnContext& ctx);

// A pending approval past its ttl_s lapses: the call is withdrawn (approval.lapsed), the
// model is told in this turn's system notes, and the sentence for the person is
// returned; nothing when none lapsed. Any replica finds it so: the deadline is stored
// with the session.
std::optional<std::string> LapseApproval(TurnContext& ctx);

}  // namespace reins
