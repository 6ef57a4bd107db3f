// Routes: which endpoint of the HTTP API (docs/http-api.md) a canonical path names.
// A pure function over the path that the transport checked (request_rules.h); the
// same path is what authentication reads, so the two can never disagree.
#pragma once

#include <string>
#include <string_view>

namespace reins {

enum class Endpoint {
  kNone, kHealth, kReady, kMetrics,
  kCreateSession, kListSessions, kSession, kTurns, kTrace, kTimeline, kLease, kEvents,
  kRememberedApproval,                // DELETE .../approvals/{tool}: end a standing permission
  kChatCompletions, kModels, kModel,  // the OpenAI-compatible door
  kUi,                                // the trace viewer's files (docs/trace-viewer.md)
};

struct Route {
  Endpoint endpoint = Endpoint::kNone;
  std::string_view label = "other";  // the metrics label: a pattern (a literal), never an id
  std::string session_id;  // kModel: the model id asked for; kUi: the file (or "" for /ui)
  const char* method = "GET";   // the one method the endpoint accepts
  std::string item;             // kRememberedApproval: the tool
};

// `method` tells apart the two endpoints of /v1/sessions: GET lists, anything else
// creates (and is refused there when it is not POST).
Route MatchRoute(const std::string& path, const std::string& method = "POST");

// Probes, metrics and the viewer's static files answer without an API key (the viewer
// asks for one before it reads any session); every other path needs one.
bool IsOpenEndpoint(Endpoint e);
// The OpenAI-compatible endpoints answer errors in OpenAI's shape (chat_wire.h).
bool IsOpenAiEndpoint(Endpoint e);
// What a session id may look like (1 to 128 of A-Z a-z 0-9 _ -).
bool IsSessionId(std::string_view s);

}  // namespace reins
