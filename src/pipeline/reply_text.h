// What the stages of a turn's reply share (turn_pipeline.cc, turn_opening.cc,
// turn_reply.cc): the text that goes to the person besides the model's.
#pragma once

#include <string>

#include "turn/turn_context.h"

namespace reins::reply_text {

// What the person is told of each write whose outcome is unknown (WriteLedger: an
// earlier try of it was interrupted and it was not run again, or it did not answer in
// time), whatever the model wrote: that it may or may not have happened. Appended to
// `reply` unless it says so already.
std::string WithUncertainWrites(const TurnContext& ctx, std::string reply);
// The turn's live reply stream once it has sent something; null otherwise.
const ReplyStream* SentSome(const TurnContext& ctx);
// What a stream sent of the model's own text: without the notices in front of it.
std::string OwnText(TurnContext& ctx, const std::string& sent);
// This turn's last message is the model's answer to the person (not a call of tools):
// what the person was told is written over it rather than after it.
bool EndsWithAnswer(const TurnContext& ctx);
void EraseLeadingSpace(std::string& text);

}  // namespace reins::reply_text
