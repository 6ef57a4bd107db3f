#include "server/routes.h"

#include <algorithm>

#include <string_view>
#include <vector>

namespace reins {
namespace {

// "/v1/sessions/s_1/turns" -> {"v1", "sessions", "s_1", "turns"}, views into `path`; a
// trailing '/' gives a last empty segment, which names nothing.
std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  out.reserve(4);
  for (size_t start = 1; start <= path.size();) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

bool IsIdByte(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

}  // namespace

bool IsSessionId(std::string_view s) {
  return !s.empty() && s.size() <= 128 && std::all_of(s.begin(), s.end(), IsIdByte);
}

Route MatchRoute(const std::string& path, const std::string& method) {
  const std::vector<std::string_view> seg = Segments(path);
  if (seg.size() == 1 && seg[0] == "ui") return {Endpoint::kUi, "/ui", "", "GET"};
  if (seg.size() == 2 && seg[0] == "ui") return {Endpoint::kUi, "/ui", seg[1].empty() ? "index.html" : std::string(seg[1]), "GET"};
  if (seg.size() == 1 && seg[0] == "healthz") return {Endpoint::kHealth, "/healthz", "", "GET"};
  if (seg.size() == 1 && seg[0] == "readyz") return {Endpoint::kReady, "/readyz", "", "GET"};
  if (seg.size() == 1 && seg[0] == "metrics") return {Endpoint::kMetrics, "/metrics", "", "GET"};
  if (seg.size() == 3 && seg[0] == "v1" && seg[1] == "chat" && seg[2] == "completions") {
    return {Endpoint::kChatCompletions, "/v1/chat/completions", "", "POST"};
  }
  if (seg.size() == 2 && seg[0] == "v1" && seg[1] == "models") return {Endpoint::kModels, "/v1/models", "", "GET"};
  if (seg.size() == 3 && seg[0] == "v1" && seg[1] == "models" && !seg[2].empty()) {
    return {Endpoint::kModel, "/v1/models/{id}", std::string(seg[2]), "GET"};
  }
  if (seg.size() < 2 || seg.size() > 5 || seg[0] != "v1" || seg[1] != "sessions") return {};
  if (seg.size() == 2 && method == "GET") return {Endpoint::kListSessions, "/v1/sessions", "", "GET"};
  if (seg.size() == 2) return {Endpoint::kCreateSession, "/v1/sessions", "", "POST"};
  if (!IsSessionId(seg[2])) return {};
  if (seg.size() == 3) return {Endpoint::kSession, "/v1/sessions/{id}", std::string(seg[2]), "GET"};
  const std::string_view leaf = seg[3];
  if (seg.size() == 5) {
    if (leaf != "approvals" || seg[4].empty() || seg[4].size() > 64) return {};
    return {Endpoint::kRememberedApproval, "/v1/sessions/{id}/approvals/{tool}", std::string(seg[2]), "DELETE",
            std::string(seg[4])};
  }
  if (leaf == "turns") return {Endpoint::kTurns, "/v1/sessions/{id}/turns", std::string(seg[2]), "POST"};
  if (leaf == "trace") return {Endpoint::kTrace, "/v1/sessions/{id}/trace", std::string(seg[2]), "GET"};
  if (leaf == "timeline") return {Endpoint::kTimeline, "/v1/sessions/{id}/timeline", std::string(seg[2]), "GET"};
  if (leaf == "lease") return {Endpoint::kLease, "/v1/sessions/{id}/lease", std::string(seg[2]), "DELETE"};
  if (leaf == "events") return {Endpoint::kEvents, "/v1/sessions/{id}/events", std::string(seg[2]), "GET"};
  return {};
}

bool IsOpenAiEndpoint(Endpoint e) {
  return e == Endpoint::kChatCompletions || e == Endpoint::kModels || e == Endpoint::kModel;
}

bool IsOpenEndpoint(Endpoint e) {
  return e == Endpoint::kHealth || e == Endpoint::kReady || e == Endpoint::kMetrics || e == Endpoint::kUi;
}

}  // namespace reins
