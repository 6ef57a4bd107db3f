// What `reins serve` accepts before anything else reads a request: canonical paths,
// framing, routes and the JSON bodies (docs/security.md). Row by row, like a table.
#include <gtest/gtest.h>

#include "server/request_bodies.h"
#include "server/request_rules.h"
#include "server/routes.h"

namespace reins {
namespace {

using Fields = std::vector<HeadField>;

TEST(CanonicalTarget, RefusesEveryPathThatCouldMeanAnotherOne) {
  for (const char* target : {"//v1/sessions", "/v1//sessions", "/v1/sessions//", "/./v1/sessions", "/v1/./sessions",
                             "/v1/x/../sessions", "/v1/sessions/..", "/v1/sessions/%2F", "/v1/sessions/%2fx",
                             "/v1%2Fsessions", "/v1/sessions/%5C", "/v1/%2e%2e/sessions", "/v1/sessions/%00",
                             "/v1\\sessions", "/v1/ses sions", "v1/sessions", "", "*", "http://host/v1/sessions",
                             "/v1/sessions/%zz", "/v1/sessions/%2"}) {
    RequestRefusal why;
    EXPECT_FALSE(CanonicalTarget(target, &why)) << target;
    EXPECT_EQ(why.status, 400) << target;
    EXPECT_FALSE(why.message.empty()) << target;
  }
}

TEST(CanonicalTarget, KeepsCanonicalPathsAndSplitsTheQuery) {
  auto t = CanonicalTarget("/v1/sessions/s_1/trace?after=3&limit=10", nullptr);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->path, "/v1/sessions/s_1/trace");
  EXPECT_EQ(t->query, "after=3&limit=10");
  for (const char* target : {"/", "/healthz", "/ui/", "/v1/sessions", "/a%20b", "/x?y=//z/../"}) {
    EXPECT_TRUE(CanonicalTarget(target, nullptr)) << target;
  }
}

TEST(CheckFraming, RefusesAmbiguousBodiesAndMissingHost) {
  struct Row {
    Fields fields;
    unsigned version;
    int status;  // 0: accepted
  };
  const std::vector<Row> rows = {
      {{{"Host", "x"}}, 11, 0},
      {{}, 10, 0},
      {{}, 11, 400},
      {{{"Host", "x"}, {"Transfer-Encoding", "chunked"}}, 11, 0},
      {{{"Host", "x"}, {"transfer-encoding", " Chunked "}}, 11, 0},
      {{{"Host", "x"}, {"Transfer-Encoding", "xchunked"}}, 11, 400},
      {{{"Host", "x"}, {"Transfer-Encoding", "chunked, identity"}}, 11, 400},
      {{{"Host", "x"}, {"Transfer-Encoding", "identity"}}, 11, 400},
      {{{"Host", "x"}, {"Transfer-Encoding", "gzip, chunked"}}, 11, 501},
      {{{"Host", "x"}, {"Transfer-Encoding", "gzip"}, {"Transfer-Encoding", "chunked"}}, 11, 501},
      {{{"Host", "x"}, {"Transfer-Encoding", "chunked"}, {"Content-Length", "5"}}, 11, 400},
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    std::optional<RequestRefusal> refused = CheckFraming(rows[i].version, rows[i].fields);
    EXPECT_EQ(refused ? refused->status : 0, rows[i].status) << "row " << i;
  }
}

// Issue 74, finding 5: a repeated Authorization (bogus, then valid) or Host was accepted.
TEST(CheckFraming, RefusesASingleHeaderSentTwice) {
  EXPECT_EQ(CheckFraming(11, {{"Host", "x"}, {"Authorization", "Bearer bogus"}, {"authorization", "Bearer good"}})->status, 400);
  EXPECT_EQ(CheckFraming(11, {{"Host", "x"}, {"Host", "evil.example"}})->status, 400);
  EXPECT_EQ(CheckFraming(11, {{"Host", "x"}, {"Idempotency-Key", "a"}, {"Idempotency-Key", "b"}})->status, 400);
  EXPECT_NE(CheckFraming(11, {{"Host", "x"}, {"Origin", "a"}, {"Origin", "b"}})->message.find("Origin"), std::string::npos);
  // Fields that may repeat still may.
  EXPECT_EQ(CheckFraming(11, {{"Host", "x"}, {"Accept", "a"}, {"Accept", "b"}}), std::nullopt);
}

// Issue 74, finding 4: without keys, any web page could drive the server (a cross-origin
// text/plain POST ran a turn; Host: rebind.attacker.example listed every session).
TEST(CheckBodyType, WithoutKeysABodyIsJsonOnly) {
  EXPECT_EQ(CheckBodyType("application/json", true, false), std::nullopt);
  EXPECT_EQ(CheckBodyType("Application/JSON; charset=utf-8", true, false), std::nullopt);
  EXPECT_EQ(CheckBodyType("", false, false), std::nullopt) << "no body, nothing to say";
  EXPECT_EQ(CheckBodyType("text/plain", true, true), std::nullopt) << "with keys a page has no credential to send";
  for (const char* type : {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""}) {
    std::optional<RequestRefusal> r = CheckBodyType(type, true, false);
    ASSERT_TRUE(r) << type;
    EXPECT_EQ(r->status, 415);
    EXPECT_EQ(r->code, "unsupported_media_type");
  }
}

TEST(CheckBrowser, RefusesOtherOriginsAndRebindingNames) {
  const BrowserRules open{false, {}, {}};
  EXPECT_EQ(CheckBrowser("127.0.0.1:8080", "", open), std::nullopt);  // curl, an SDK: no Origin
  EXPECT_EQ(CheckBrowser("localhost:8080", "http://localhost:8080", open), std::nullopt);  // the viewer itself
  EXPECT_EQ(CheckBrowser("[::1]:8080", "", open), std::nullopt);
  std::optional<RequestRefusal> csrf = CheckBrowser("127.0.0.1:8080", "https://evil.example", open);
  ASSERT_TRUE(csrf);
  EXPECT_EQ(csrf->status, 403);
  EXPECT_EQ(csrf->code, "cross_origin");
  EXPECT_NE(csrf->message.find("--allow-origin https://evil.example"), std::string::npos);
  EXPECT_EQ(CheckBrowser("127.0.0.1:8080", "null", open)->code, "cross_origin");  // a sandboxed frame or a file
  std::optional<RequestRefusal> rebound = CheckBrowser("rebind.attacker.example:8080", "", open);
  ASSERT_TRUE(rebound);
  EXPECT_EQ(rebound->code, "host_not_allowed");
  EXPECT_EQ(CheckBrowser("rebind.attacker.example:8080", "http://rebind.attacker.example:8080", open)->code,
            "host_not_allowed");  // same origin as itself, still not a loopback name
  // What the operator allows.
  const BrowserRules allowing{false, {"https://app.example.com"}, {"reins.internal"}};
  EXPECT_EQ(CheckBrowser("127.0.0.1:8080", "https://app.example.com", allowing), std::nullopt);
  EXPECT_EQ(CheckBrowser("reins.internal:8080", "", allowing), std::nullopt);
  // With keys any Host is answered (a key is the credential), but other origins are not.
  const BrowserRules keyed{true, {}, {}};
  EXPECT_EQ(CheckBrowser("api.example.com", "", keyed), std::nullopt);
  EXPECT_EQ(CheckBrowser("api.example.com", "https://evil.example", keyed)->code, "cross_origin");
}

TEST(QueryParam, FindsAndDecodesValues) {
  EXPECT_EQ(QueryParam("after=3&limit=10", "limit"), "10");
  EXPECT_EQ(QueryParam("a=x%20y+z", "a"), "x y z");
  EXPECT_EQ(QueryParam("limit", "limit"), "");
  EXPECT_EQ(QueryParam("after=3", "limit"), std::nullopt);
}

TEST(Routes, NameEndpointsOnlyOnExactPaths) {
  EXPECT_EQ(MatchRoute("/v1/sessions").endpoint, Endpoint::kCreateSession);
  EXPECT_EQ(MatchRoute("/v1/sessions/s_1/turns").session_id, "s_1");
  EXPECT_EQ(MatchRoute("/v1/sessions/s_1/trace").endpoint, Endpoint::kTrace);
  EXPECT_EQ(MatchRoute("/v1/sessions/").endpoint, Endpoint::kNone);
  EXPECT_EQ(MatchRoute("/v1/sessions/s_1/turns/").endpoint, Endpoint::kNone);
  EXPECT_EQ(MatchRoute("/v1/sessions/s%31").endpoint, Endpoint::kNone);
  EXPECT_TRUE(IsOpenEndpoint(MatchRoute("/healthz").endpoint));
  EXPECT_FALSE(IsOpenEndpoint(MatchRoute("/v1/sessions").endpoint));
  EXPECT_FALSE(IsOpenEndpoint(MatchRoute("/nothing").endpoint)) << "unknown paths need a key too";
  EXPECT_EQ(MatchRoute("/v1/sessions/s_1/turns").label, "/v1/sessions/{id}/turns") << "a pattern, never the id";
  EXPECT_EQ(MatchRoute("/nothing").label, "other");
}

TEST(Routes, ASessionIdIsOneTo128LettersDigitsUnderscoresOrDashes) {
  EXPECT_TRUE(IsSessionId("A-z_09"));
  EXPECT_TRUE(IsSessionId(std::string(128, 'a')));
  EXPECT_FALSE(IsSessionId(std::string(129, 'a')));
  EXPECT_FALSE(IsSessionId(""));
  for (const char* bad : {"a.b", "a b", "a%31", "s/1", "\xc3\xa9"}) EXPECT_FALSE(IsSessionId(bad)) << bad;
  EXPECT_EQ(MatchRoute("/v1/sessions/" + std::string(129, 'a') + "/turns").endpoint, Endpoint::kNone);
}

TEST(Routes, TheViewersPaths) {
  EXPECT_EQ(MatchRoute("/v1/sessions", "GET").endpoint, Endpoint::kListSessions);
  EXPECT_EQ(MatchRoute("/v1/sessions", "POST").endpoint, Endpoint::kCreateSession);
  EXPECT_EQ(MatchRoute("/v1/sessions", "DELETE").endpoint, Endpoint::kCreateSession) << "refused there as not POST";
  EXPECT_FALSE(IsOpenEndpoint(MatchRoute("/v1/sessions", "GET").endpoint)) << "the list needs a key";
  const Route timeline = MatchRoute("/v1/sessions/s_1/timeline");
  EXPECT_EQ(timeline.endpoint, Endpoint::kTimeline);
  EXPECT_EQ(timeline.session_id, "s_1");
  EXPECT_EQ(MatchRoute("/ui").endpoint, Endpoint::kUi);
  EXPECT_EQ(MatchRoute("/ui").session_id, "") << "redirected to /ui/";
  EXPECT_EQ(MatchRoute("/ui/").session_id, "index.html");
  EXPECT_EQ(MatchRoute("/ui/viewer.js").session_id, "viewer.js");
  EXPECT_TRUE(IsOpenEndpoint(MatchRoute("/ui/").endpoint)) << "the page asks for the key itself";
  EXPECT_EQ(MatchRoute("/ui/a/b").endpoint, Endpoint::kNone);
}

TEST(SessionsQuery, LimitIsBounded) {
  int limit = 0;
  EXPECT_EQ(ParseSessionsQuery("", &limit), std::nullopt);
  EXPECT_EQ(limit, 50);
  EXPECT_EQ(ParseSessionsQuery("limit=7", &limit), std::nullopt);
  EXPECT_EQ(limit, 7);
  for (const char* bad : {"limit=0", "limit=1001", "limit=x", "limit=-1"}) {
    ASSERT_TRUE(ParseSessionsQuery(bad, &limit).has_value()) << bad;
    EXPECT_EQ(ParseSessionsQuery(bad, &limit)->status, 400) << bad;
  }
}

std::string Nested(const std::string& key, int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += "{\"" + key + "\":";
  s += "1";
  s += std::string(static_cast<size_t>(depth), '}');
  return s;
}

TEST(RequestBodies, DeepNestingIsRefusedWhileParsing) {
  Json metadata;
  std::unique_ptr<TurnInput> first;
  auto refused = ParseSessionBody("{\"metadata\":" + Nested("a", 100000) + "}", "", &metadata, &first);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  EXPECT_NE(refused->message.find("deeper than 128"), std::string::npos) << refused->message;
  TurnInput in;
  refused = ParseTurnBody("{\"say\":\"hi\",\"page_context\":" + Nested("p", 40000) + "}", "", &in);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  EXPECT_FALSE(ParseSessionBody("{\"metadata\":" + Nested("a", 20) + "}", "", &metadata, &first)) << "ordinary nesting is fine";
}

TEST(RequestBodies, TheIdempotencyKeyComesFromTheHeaderOrTheBody) {
  TurnInput in;
  ASSERT_FALSE(ParseTurnBody(R"({"say":"hi"})", "k-1", &in));
  EXPECT_EQ(in.idempotency_key, "k-1");
  in = {};
  ASSERT_FALSE(ParseTurnBody(R"({"say":"hi","idempotency_key":"k-2"})", "", &in));
  EXPECT_EQ(in.idempotency_key, "k-2");
  in = {};
  ASSERT_FALSE(ParseTurnBody(R"({"say":"hi","idempotency_key":"k-3"})", "k-3", &in));
  EXPECT_TRUE(ParseTurnBody(R"({"say":"hi","idempotency_key":"k-4"})", "k-5", &in)) << "two different keys";
  EXPECT_TRUE(ParseTurnBody(R"({"say":"hi"})", "has space", &in));
  EXPECT_TRUE(ParseTurnBody(R"({"say":"hi","idempotency_key":""})", "", &in));
  EXPECT_TRUE(ParseTurnBody(R"({"say":"hi"})", std::string(201, 'k'), &in));
}

// POST /v1/sessions may bring the session's first turn; one that would need a session
// already (a retry's key, an answer to something pending) is refused, saying what to do.
TEST(RequestBodies, ANewSessionMayBringItsFirstTurn) {
  Json metadata;
  std::unique_ptr<TurnInput> first;
  ASSERT_FALSE(ParseSessionBody(R"({"metadata":{"channel":"web"}})", "", &metadata, &first));
  EXPECT_EQ(metadata, Json({{"channel", "web"}}));
  EXPECT_EQ(first, nullptr);
  ASSERT_FALSE(ParseSessionBody(R"({"turn":{"say":"hi","page_context":{"page":"/"}}})", "", &metadata, &first));
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->speaker, "user");
  EXPECT_EQ(first->say, "hi");
  EXPECT_EQ(first->page_context, Json({{"page", "/"}}));
  EXPECT_EQ(metadata, Json::object());

  auto refused = ParseSessionBody(R"({"turn":{"say":"hi"}})", "k-1", &metadata, &first);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->message.find("POST /v1/sessions/{id}/turns"), std::string::npos) << refused->message;
  EXPECT_EQ(first, nullptr);
  EXPECT_TRUE(ParseSessionBody(R"({"turn":{"say":"hi","idempotency_key":"k-2"}})", "", &metadata, &first));
  refused = ParseSessionBody(R"({"turn":{"select":"u_doe"}})", "", &metadata, &first);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->message.find("nothing to select or approve"), std::string::npos) << refused->message;
  EXPECT_TRUE(ParseSessionBody(R"({"turn":{"approve":true}})", "", &metadata, &first));
  EXPECT_TRUE(ParseSessionBody(R"({"turn":{}})", "", &metadata, &first)) << "a turn that says nothing";
  EXPECT_TRUE(ParseSessionBody(R"({"turn":"hi"})", "", &metadata, &first));
  EXPECT_TRUE(ParseSessionBody(R"({"turn":{"say":"hi","extra":1}})", "", &metadata, &first));
  EXPECT_TRUE(ParseSessionBody(R"({"greeting":"hi"})", "", &metadata, &first));
  EXPECT_FALSE(ParseSessionBody(R"({})", "k-3", &metadata, &first)) << "a session alone ignores a key, as before";
}

TEST(RequestBodies, TraceQueriesAskForAPage) {
  TraceQuery q;
  ASSERT_FALSE(ParseTraceQuery("", &q));
  EXPECT_FALSE(q.paged);
  ASSERT_FALSE(ParseTraceQuery("after=40&limit=5", &q));
  EXPECT_TRUE(q.paged);
  EXPECT_EQ(q.after, 40);
  EXPECT_EQ(q.limit, 5);
  for (const char* bad : {"limit=0", "limit=1001", "after=-1", "after=x", "limit=1e3", "after=99999999999"}) {
    EXPECT_TRUE(ParseTraceQuery(bad, &q)) << bad;
  }
}

}  // namespace
}  // namespace reins
