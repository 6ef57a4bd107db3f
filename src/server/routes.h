// Routes: which endpoint of the HTTP API (docs/http-api.md) a canonical path names.
// A pure function over the path that the transport checked (request_rules.h); the
// same path is what authentication reads, so the two can never disagree.
#pragma once

#include <string>

namespace reins {

enum class Endpoint {
  kNone, kHealth, kReady, kMetrics,
  kCreateSession, kSession, kTurns, kTrace, kLease, kEvents,
  kChatCompletions, kModels, kModel,  // the OpenAI-compatible door
};

struct Route {
  Endpoint endpoint = Endpoint::kNone;
  std::string label = "other";  // the metrics label: a pattern, never an id
  std::string session_id;  // kModel: the model id asked for
  const char* method = "GET";   // the one method the endpoint accepts
};

Route MatchRoute(const std::string& path);

// Probes and metrics answer without an API key; every other path needs one.
bool IsOpenEndpoint(Endpoint e);
// The OpenAI-compatible endpoints answer errors in OpenAI's shape (chat_wire.h).
bool IsOpenAiEndpoint(Endpoint e);
// What a session id may look like (1 to 128 of A-Z a-z 0-9 _ -).
bool IsSessionId(const std::string& s);

}  // namespace reins
