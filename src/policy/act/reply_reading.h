// One ActionReader per agent, shared by the policies that read a reply for the actions
// it speaks of (UndoneClaims, ActNotDescribe, HonestClaims, untrusted_data's
// WriteRequests), and one reading per reply: each of the first three reads the same
// final reply, which is read once a turn unless a policy before it changed the text.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "policy/act/action_talk.h"
#include "turn/turn_context.h"

namespace reins {

// `reader`, or one made over `config`'s tools when none is given (a policy built alone).
std::shared_ptr<const ActionReader> ReaderOr(std::shared_ptr<const ActionReader> reader, const AgentConfig& config);

// reader.Read(ctx.user_text(), reply), kept for the turn: the same reader asked of the
// same reply again gives the same reading without reading it again.
const std::vector<ActionTalk>& ReadReply(TurnContext& ctx, const ActionReader& reader, std::string_view reply);

}  // namespace reins
