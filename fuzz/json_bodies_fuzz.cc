// A request body -> the JSON body readers of every endpoint (the OpenAI-compatible one
// included, through to the turn its last message makes), and a query string -> the
// trace query reader.
#include "fuzz/fuzz_target.h"
#include "server/chat_wire.h"
#include "server/request_bodies.h"

namespace reins {

REINS_FUZZ_TARGET(json_bodies) {
  Json metadata;
  std::unique_ptr<TurnInput> first;
  if (!ParseSessionBody(input, "", &metadata, &first) && first) (void)TurnInputToJson(*first).dump();
  TurnInput in;
  if (!ParseTurnBody(input, "", &in)) (void)TurnInputToJson(in).dump();
  ChatRequest chat;
  if (!ParseChatRequest(input, &chat)) {
    (void)ConversationDigest(chat.user, chat.history);
    (void)TurnInputToJson(ReadChatAnswer(chat, nullptr, nullptr, "k").turn).dump();
  }
  TraceQuery query;
  (void)ParseTraceQuery(input, &query);
}

}  // namespace reins
