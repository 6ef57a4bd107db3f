// ChatWire: the OpenAI Chat Completions wire of `reins serve` (docs/openai-endpoint.md),
// as pure functions: a request read into what reins needs of it, the digests that find
// a stateless client's session, the turn a user message makes, and the completion,
// chunk and error bodies a client's SDK parses. The handlers (chat_handlers.cc), the
// fuzz targets and the tests share them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reins/json.h"
#include "reins/trace.h"
#include "reins/turn.h"
#include "server/request_bodies.h"

namespace reins {

// A message as reins reads it: its role and its text (text parts joined).
struct ChatMessage {
  std::string role;  // user | assistant
  std::string text;
};

struct ChatRequest {
  std::string model;
  // The messages before the last, without the client's system and developer messages
  // (the agent owns its prompt): what a stateless client resends.
  std::vector<ChatMessage> history;
  ChatMessage last;  // the turn: always the user's
  std::string user = "user";  // the speaker, for the floor
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  // The `reins` extension: an answer by id, not by text; an approval's long form
  // ({decision, args?, message?, remember?}) goes only this way.
  std::optional<std::string> select;
  std::optional<ApprovalAnswer> approve;
};

// 400 (with the field named) for what cannot be a governed turn: no messages, a last
// message that is not the user's, client tools (`tools`, a `tool_choice` other than
// auto/none, tool messages), content other than text, `n` above 1. Parameters reins has
// no use for (temperature, max_tokens, ...) are ignored, as the real API ignores
// unknown ones.
std::optional<ApiError> ParseChatRequest(std::string_view body, ChatRequest* out);

// A digest of `messages` as spoken by `user`: what finds the session a stateless client's
// history belongs to. Whitespace around each text does not count (chat UIs trim).
std::string ConversationDigest(const std::string& user, const std::vector<ChatMessage>& messages);

// The door derives its own idempotency keys ("chat-" and a conversation's digest); a
// client's key may not take that form, or it could plant the reply to another client's
// next message (issue 74, finding 2). A sentence saying so, or "" when `key` is a
// client's to use.
inline constexpr std::string_view kDerivedKeyPrefix = "chat-";
std::string ReservedKeyRefusal(std::string_view key);

// What the last message does. With a clarification pending (`pending_clarification` as
// the session state keeps it, null when none), an answer that names one option
// (domain/typed_answer.h: its number, id, title, displayed line or a part only it has)
// selects it; one that fits several options or none is asked again, unless it is a
// cancel ("cancel", "stop", "never mind"), which is said. With an approval pending (the
// API's approval payload, null when none), yes or no in words decides it; anything else
// is asked again. Otherwise the message is said. `key` is the turn's idempotency key.
struct ChatAnswer {
  TurnInput turn;
  // Not empty: no turn runs; the client gets this and the pending question, again
  // (`turn` then says the message as it came, for a resend of the request that asked:
  // the runtime refuses it as a resend, and the stored answer is replayed).
  std::string ask_again;
};
ChatAnswer ReadChatAnswer(const ChatRequest& req, const Json& pending_clarification, const Json& pending_approval,
                          std::string key);

// What the assistant message says for a turn (TurnResultToJson's shape): the reply,
// the options of a clarification it asked listed under it, numbered, a blocked turn's
// reason.
std::string AssistantText(const Json& result);

struct ChatUsage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};
// The model calls of a turn, added up from its model.response events.
ChatUsage UsageOf(const std::vector<TraceEvent>& events);
Json UsageJson(const ChatUsage& u);

// The `reins` extension of a completion: the session, the turn, its status, and the
// structured clarification or approval a client may answer with.
Json ReinsExtension(const std::string& session_id, const Json& result);

// Where a completion comes from: its id (chatcmpl- and the turn's id), the agent, when.
struct CompletionHead {
  std::string id;
  std::string model;
  int64_t created_s = 0;
};
Json CompletionJson(const CompletionHead& head, const std::string& content, const ChatUsage& usage, Json reins);
// One chat.completion.chunk: `delta` ({role?, content?}), `finish_reason` (null until the
// last), `usage` null on every chunk when the client asked for usage (the totals come in a
// chunk of their own, UsageChunkJson).
Json ChunkJson(const CompletionHead& head, Json delta, Json finish_reason, bool include_usage, Json reins = nullptr);
Json UsageChunkJson(const CompletionHead& head, const ChatUsage& usage);

// {"error":{"message","type","param","code"}}: the OpenAI shape, with the API's own
// snake_case code and a type the SDKs know for the status.
Json OpenAiErrorJson(const ApiError& e);

}  // namespace reins
