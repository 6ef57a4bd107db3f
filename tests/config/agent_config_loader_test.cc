#include "config/agent_config_loader.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace reins {
namespace {

// Parses `yaml` as an agent file named "agent.yaml"; returns the diagnostics text.
std::string Problems(const std::string& yaml, AgentConfig* out = nullptr) {
  Diagnostics diag;
  LocatedDoc doc = ParseYaml(yaml, "agent.yaml", diag);
  AgentConfig config;
  if (diag.empty()) ParseAgentConfig(doc, "", ".", diag, &config);
  if (out != nullptr) *out = config;
  return diag.Format();
}

constexpr const char* kMinimal = R"(name: demo
model: { provider: scripted }
tools:
  - name: lookup
    may_clarify: true
    entities: { produces: { contact: "$.data.contacts[*].id" } }
    input_schema: { type: object, properties: { query: { type: string } }, required: [query] }
  - name: send
    entities: { consumes: { to: contact } }
    input_schema: { type: object, properties: { to: { type: string } } }
)";

TEST(AgentConfigLoaderTest, LoadsAValidAgentWithDefaults) {
  AgentConfig config;
  ASSERT_EQ(Problems(kMinimal, &config), "");
  EXPECT_EQ(config.name, "demo");
  EXPECT_EQ(config.max_rounds, 6);
  ASSERT_EQ(config.tools.size(), 2u);
  EXPECT_TRUE(config.tools[0].may_clarify);
  EXPECT_EQ(config.tools[0].title, "lookup");
  EXPECT_EQ(config.tools[1].consumes.at("to"), "contact");
  EXPECT_EQ(config.tools[1].timing, ToolTiming::kImmediate);
  EXPECT_EQ(config.tools[1].failure_note, DefaultFailureNote("send"));
}

TEST(AgentConfigLoaderTest, TelemetryIsReadAndItsEndpointChecked) {
  AgentConfig config;
  ASSERT_EQ(Problems("name: a\nmodel: {provider: scripted}\n"
                     "telemetry: {otlp_endpoint: 'http://otel:4318', service_name: care, capture_content: true}\n",
                     &config),
            "");
  EXPECT_EQ(config.telemetry.otlp_endpoint, "http://otel:4318");
  EXPECT_EQ(config.telemetry.service_name, "care");
  EXPECT_TRUE(config.telemetry.capture_content);
  EXPECT_NE(Problems("name: a\nmodel: {provider: scripted}\ntelemetry: {otlp_endpoint: 'otel:4318'}\n")
                .find("otlp_endpoint must be an http:// or https:// URL"),
            std::string::npos);
  EXPECT_NE(Problems("name: a\nmodel: {provider: scripted}\ntelemetry: {endpoint: x}\n").find("endpoint"), std::string::npos);
}

TEST(AgentConfigLoaderTest, ReadOnlyHintFalseMeansDeferredByDefault) {
  AgentConfig config;
  ASSERT_EQ(Problems("name: a\nmodel: {provider: scripted}\ntools:\n  - name: save\n    annotations: {readOnlyHint: false}\n"
                     "  - name: read\n    annotations: {readOnlyHint: true}\n  - name: plain\n",
                     &config),
            "");
  EXPECT_EQ(config.tools[0].timing, ToolTiming::kDeferred);
  EXPECT_EQ(config.tools[1].timing, ToolTiming::kImmediate);
  EXPECT_EQ(config.tools[2].timing, ToolTiming::kImmediate);
}

TEST(AgentConfigLoaderTest, ActNotDescribeClaimsAndEmpathyOpenersAreReadAndChecked) {
  AgentConfig config;
  ASSERT_EQ(Problems(R"(name: a
model: { provider: scripted }
rails:
  act_not_describe: { not_done: "Not done: {title}." }
  empathy_first:
    openers: [ { match: '(?i)loss', text: "I'm so sorry for your loss." }, "I'm so sorry." ]
tools:
  - name: play
    claims: ['(?i)\bnow playing\b']
)",
                     &config),
            "");
  EXPECT_EQ(config.rails.act_not_describe.value("not_done", ""), "Not done: {title}.");
  EXPECT_EQ(config.tools[0].claims, std::vector<std::string>{"(?i)\\bnow playing\\b"});
  EXPECT_EQ(config.rails.empathy_first["openers"].size(), 2u);
  AgentConfig bare;
  ASSERT_EQ(Problems("name: a\nmodel: {provider: scripted}\nrails: {act_not_describe: {}, empathy_first: {}}\n", &bare), "");
  EXPECT_TRUE(bare.rails.act_not_describe.is_object());
  EXPECT_TRUE(bare.rails.empathy_first.is_object());

  std::string problems = Problems(R"(name: a
model: { provider: scripted }
rails:
  act_not_describe: { retries: 2 }
  empathy_first: { openers: [ { match: '(', text: x } ] }
tools:
  - name: play
    claims: ['(unclosed']
)");
  EXPECT_NE(problems.find("retries"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:5:33: regex '(' does not compile"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:8:14: regex '(unclosed' does not compile"), std::string::npos) << problems;
}

TEST(AgentConfigLoaderTest, ReportsEveryProblemWithLineAndColumn) {
  std::string problems = Problems(R"(name: Bad Name
model: { provider: scripted, temprature: 1 }
limits: { max_rounds: "six" }
tools:
  - name: lookup
    input_schema: { type: 12 }
    frobnicate: true
  - name: send
    entities: { consumes: { to: person } }
intents:
  - name: pray
    match: '(unclosed'
    required_tools: [nope]
)");
  EXPECT_NE(problems.find("agent.yaml:1:1: name must match [a-z0-9_-]+"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:2:30: unknown key 'temprature' in model (did you mean 'temperature'?)"),
            std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:3:11: 'max_rounds' must be an integer, got a string"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:6:5: input_schema is not a valid JSON Schema"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:7:5: unknown key 'frobnicate' in tool"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:9:29: entity 'person' is consumed by send but produced by no tool"),
            std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:12:5: regex '(unclosed' does not compile"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:13:22: intent 'pray' requires tool 'nope', which is not defined"),
            std::string::npos) << problems;
}

TEST(AgentConfigLoaderTest, MalformedYamlIsOneClearError) {
  std::string problems = Problems("name: x\ntools: [\n  - a\n");
  EXPECT_NE(problems.find("agent.yaml:"), std::string::npos);
  EXPECT_NE(problems.find("YAML syntax error"), std::string::npos) << problems;
}

TEST(AgentConfigLoaderTest, DuplicateToolsAndMissingModelAreReported) {
  std::string problems = Problems("name: x\ntools:\n  - name: a\n  - name: a\n");
  EXPECT_NE(problems.find("missing required key 'model'"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:4:5: tool 'a' is defined twice"), std::string::npos) << problems;
}

TEST(AgentConfigLoaderTest, EnvironmentVariablesAreSubstituted) {
  setenv("REINS_TEST_KEY", "sk-123", 1);
  unsetenv("REINS_TEST_UNSET");
  AgentConfig config;
  ASSERT_EQ(Problems("name: x\nmodel: {provider: openai, model: m, api_key: '${REINS_TEST_KEY}', "
                     "base_url: '${REINS_TEST_UNSET:-http://127.0.0.1:1}'}\n",
                     &config),
            "");
  EXPECT_EQ(config.model.api_key, "sk-123");
  EXPECT_EQ(config.model.base_url, "http://127.0.0.1:1");
  std::string problems = Problems("name: x\nmodel: {provider: openai, model: m, api_key: '${REINS_TEST_UNSET}'}\n");
  EXPECT_NE(problems.find("environment variable REINS_TEST_UNSET is not set"), std::string::npos) << problems;
}

TEST(AgentConfigLoaderTest, BackendNeedsExactlyOneKindAndValidFixtures) {
  std::string problems = Problems(R"(name: x
model: { provider: scripted }
tools:
  - name: a
    backend: { builtin: echo, fixture: [] }
  - name: b
    backend: { fixture: [ { result: {}, error: boom } ] }
  - name: c
    backend: { mcp: { server: nowhere } }
)");
  EXPECT_NE(problems.find("agent.yaml:5:5: backend needs exactly one of"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:7:27: fixture entry needs exactly one of 'result' or 'error'"), std::string::npos)
      << problems;
  EXPECT_NE(problems.find("MCP server 'nowhere' is not defined"), std::string::npos) << problems;
}

TEST(AgentConfigLoaderTest, DeepMergeOverridesKeepTheirOwnPositions) {
  Diagnostics diag;
  LocatedDoc base = ParseYaml("name: a\nmodel: {provider: scripted}\nlimits: {max_rounds: 6, turn_timeout_ms: 5}\n",
                              "agent.yaml", diag);
  LocatedDoc overlay = ParseYaml("agent_overrides: {limits: {max_rounds: 0}}\n", "scenario.yaml", diag);
  ASSERT_TRUE(diag.empty());
  DeepMerge(base, "", overlay, "/agent_overrides");
  EXPECT_EQ(base.value["limits"]["turn_timeout_ms"], 5);
  AgentConfig config;
  ParseAgentConfig(base, "", ".", diag, &config);
  EXPECT_NE(diag.Format().find("scenario.yaml:1:28: 'max_rounds' must be between 1 and 100"), std::string::npos)
      << diag.Format();
}

TEST(AgentConfigLoaderTest, UrlsWithCredentialsAreRefusedAndNotRepeated) {
  std::string problems = Problems(R"(name: x
model: { provider: openai, model: m, base_url: "https://user:s3cret@llm.internal/v1" }
mcp_servers: { files: { url: "http://a:b@127.0.0.1:9/mcp" } }
tools:
  - name: send
    backend: { http: { url: "http://k:v@hooks.internal/send" } }
)");
  EXPECT_NE(problems.find("base_url holds credentials"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:6:"), std::string::npos) << "the http backend's url: " << problems;
  EXPECT_NE(problems.find("agent.yaml:3:"), std::string::npos) << "the MCP server's url: " << problems;
  EXPECT_EQ(problems.find("s3cret"), std::string::npos) << problems;
  EXPECT_EQ(problems.find("needs exactly one of"), std::string::npos) << "no follow-on error: " << problems;
}

// Issue 74, finding 5: a base_url with ?api_key= passed `reins check`, was logged, and
// broke the request path.
TEST(AgentConfigLoaderTest, UrlsWithASecretInTheQueryAreRefusedLikeCredentials) {
  std::string problems = Problems(R"(name: x
model: { provider: openai, model: m, base_url: "https://llm.internal/v1?api_key=s3cret" }
tools:
  - name: send
    backend: { http: { url: "http://hooks.internal/send?region=eu&token=abc" } }
)");
  EXPECT_NE(problems.find("base_url holds a secret in its query"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:5:"), std::string::npos) << "the http backend's url: " << problems;
  EXPECT_EQ(problems.find("s3cret"), std::string::npos) << problems;
  EXPECT_EQ(Problems(R"(name: x
model: { provider: openai, model: m, base_url: "https://llm.internal/v1?region=eu&monkey=1" }
)"),
            "");
}

TEST(AgentConfigLoaderTest, ScriptedRepliesInTheAgentAreCheckedLikeAScenarios) {
  std::string problems = Problems(R"(name: x
model:
  provider: scripted
  replies:
    - { when: { trun: 1 }, text: hi }
    - { when: { user_matches: "(" }, text: hi }
    - { when: { last: user } }
)");
  EXPECT_NE(problems.find("trun"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:6:"), std::string::npos) << "the bad regex: " << problems;
  EXPECT_NE(problems.find("needs text, tool_calls, json or raw"), std::string::npos) << problems;
}

}  // namespace
}  // namespace reins
