// The http tool backend against the local mock upstream.
#include "tools/http_backend.h"

#include <gtest/gtest.h>

#include "support/mock_upstream.h"
#include "support/run_sync.h"

namespace reins {
namespace {

using testing::MockUpstream;
using testing::RunSync;

ToolDef HttpTool(const std::string& url, Json extra = Json::object()) {
  ToolDef t;
  t.name = "send_message";
  t.timeout_ms = 2000;
  t.backend.kind = ToolBackendConfig::Kind::kHttp;
  t.backend.spec = Json{{"url", url}, {"headers", {{"X-Api-Key", "k"}}}};
  t.backend.spec.update(extra);
  return t;
}

ToolRequest Call(Json args, std::string key = "") {
  ToolRequest r;
  r.tool = "send_message";
  r.args = std::move(args);
  r.session_id = "s_1";
  r.idempotency_key = std::move(key);
  return r;
}

class HttpBackendTest : public ::testing::Test {
 protected:
  HttpBackend Backend(Json extra = Json::object(), std::string path = "/send") {
    return HttpBackend(HttpTool(up_.base_url() + path, extra), {"127.0.0.1"}, client_, clock_);
  }
  MockUpstream up_;
  std::shared_ptr<HttpClient> client_ = std::make_shared<HttpClient>();
  SystemClock clock_;
};

TEST_F(HttpBackendTest, PostsTheArgumentsWithTheIdempotencyKey) {
  up_.Enqueue(MockUpstream::Json(200, R"({"success":true,"data":{"id":"m_1"}})"));
  auto backend = Backend();
  auto r = RunSync(backend.Invoke(Call({{"to", "c_1"}, {"text", "hi"}}, "turn_1/call_1")));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["data"]["id"], "m_1");
  auto seen = up_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].target, "/send");
  EXPECT_EQ(Json::parse(seen[0].body), (Json{{"to", "c_1"}, {"text", "hi"}}));
  EXPECT_EQ(seen[0].headers["idempotency-key"], "turn_1/call_1");
  EXPECT_EQ(seen[0].headers["x-api-key"], "k");
}

TEST_F(HttpBackendTest, PlainDataAndNoContentAreResults) {
  up_.Enqueue(MockUpstream::Json(200, R"({"times":["9:00"]})"));
  up_.Enqueue(MockUpstream::Json(204, ""));
  auto backend = Backend();
  auto data = RunSync(backend.Invoke(Call(Json::object())));
  ASSERT_TRUE(data.ok());
  EXPECT_EQ((*data)["times"][0], "9:00");
  auto empty = RunSync(backend.Invoke(Call(Json::object())));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)["success"], true);
}

TEST_F(HttpBackendTest, ErrorsCarryTheStatusAndABoundedSnippet) {
  up_.Enqueue(MockUpstream::Json(503, std::string(5000, 'x')));
  up_.Enqueue(MockUpstream::Json(200, "<html>not json</html>"));
  auto backend = Backend();
  auto failed = RunSync(backend.Invoke(Call(Json::object())));
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ((*failed)["success"], false);
  std::string error = (*failed)["error"];
  EXPECT_EQ(error.rfind("HTTP 503 from the tool's server: ", 0), 0u) << error;
  EXPECT_EQ(error.find("127.0.0.1"), std::string::npos) << "the address leaked: " << error;
  EXPECT_LT(error.size(), 400u);
  auto not_json = RunSync(backend.Invoke(Call(Json::object())));
  ASSERT_TRUE(not_json.ok());
  EXPECT_NE((*not_json)["error"].get<std::string>().find("is not JSON: <html>"), std::string::npos);
}

TEST_F(HttpBackendTest, FillsPathArgumentsAndGetSendsNoBody) {
  up_.Enqueue(MockUpstream::Json(200, R"({"ok":1})"));
  auto backend = Backend(Json{{"method", "GET"}}, "/contacts/{name}");
  auto r = RunSync(backend.Invoke(Call({{"name", "Anna Berg/2"}})));
  ASSERT_TRUE(r.ok());
  auto seen = up_.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, "/contacts/Anna%20Berg%2F2");
  EXPECT_TRUE(seen[0].body.empty());
  auto missing = RunSync(backend.Invoke(Call(Json::object())));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ((*missing)["success"], false);
}

TEST_F(HttpBackendTest, RefusesHostsOffTheAllowList) {
  ToolDef tool = HttpTool("http://{host}:" + std::to_string(up_.port()) + "/send");
  HttpBackend backend(tool, {"127.0.0.1"}, client_, clock_);
  auto r = RunSync(backend.Invoke(Call({{"host", "localhost"}})));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["success"], false);
  EXPECT_NE((*r)["error"].get<std::string>().find("not on this tool's allow-list"), std::string::npos);
  EXPECT_TRUE(up_.requests().empty());
  // An explicit allow-list replaces the default.
  HttpBackend widened(HttpTool(tool.backend.spec["url"], Json{{"allowed_hosts", {"localhost"}}}), {"127.0.0.1"}, client_, clock_);
  up_.Enqueue(MockUpstream::Json(200, "{}"));
  auto ok = RunSync(widened.Invoke(Call({{"host", "localhost"}})));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_NE((*ok).value("success", true), false);
}

TEST_F(HttpBackendTest, TimeoutsAreTransportFailures) {
  testing::MockReply slow = MockUpstream::Json(200, "{}");
  slow.first_byte_delay_ms = 2000;
  up_.Enqueue(slow);
  auto backend = Backend(Json{{"timeout_ms", 100}});
  auto r = RunSync(backend.Invoke(Call(Json::object())));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().message().rfind("send_message: POST", 0), 0u) << r.status().message();
}

TEST(LiteralHttpToolHosts, CollectsTheHostsWrittenInTheConfig) {
  AgentConfig config;
  config.tools.push_back(HttpTool("http://127.0.0.1:9000/send"));
  config.tools.push_back(HttpTool("https://api.example.com/v1/x"));
  config.tools.push_back(HttpTool("http://{host}/x"));
  EXPECT_EQ(LiteralHttpToolHosts(config), (std::set<std::string>{"127.0.0.1", "api.example.com"}));
}

}  // namespace
}  // namespace reins
