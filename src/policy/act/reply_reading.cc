#include "policy/act/reply_reading.h"

#include <string>

namespace reins {
namespace {

// The turn's last reading.
struct ReplyReading {
  const ActionReader* reader = nullptr;
  std::string user_text;
  std::string reply;
  std::vector<ActionTalk> talks;
};

}  // namespace

std::shared_ptr<const ActionReader> ReaderOr(std::shared_ptr<const ActionReader> reader, const AgentConfig& config) {
  return reader ? std::move(reader) : std::make_shared<const ActionReader>(config.tools);
}

const std::vector<ActionTalk>& ReadReply(TurnContext& ctx, const ActionReader& reader, std::string_view reply) {
  ReplyReading& last = ctx.Slot<ReplyReading>();
  const std::string_view user_text = ctx.user_text();
  if (last.reader != &reader || last.reply != reply || last.user_text != user_text) {
    last.talks = reader.Read(user_text, reply);
    last.reader = &reader;
    last.user_text = user_text;
    last.reply = reply;
  }
  return last.talks;
}

}  // namespace reins
