// Scenario files that look runnable but test nothing are refused, not reported PASS.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "eval/scenario.h"

namespace reins {
namespace {

namespace fs = std::filesystem;

class ScenarioLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("reins_scenarios_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(ScenarioLoaderTest, AnAgentFileThatHoldsNoAgentIsAnError) {
  for (const char* agent : {"", "just a string\n", "- a\n- list\n", "~\n"}) {
    Write("agent.yaml", agent);
    std::string file = Write("s.yaml", R"(id: s
agent: agent.yaml
model: { provider: scripted, replies: [ { text: hi } ] }
turns: [ { say: hello, expect: { status: completed } } ]
)");
    Result<Scenario> s = LoadScenarioFile(file);
    ASSERT_FALSE(s.ok()) << "agent file: '" << agent << "'";
    EXPECT_NE(s.status().message().find("must hold an agent mapping"), std::string::npos) << s.status().message();
  }
}

// Issue 74, finding 11: a scripted `when: {after_tool: find_patiant}` (a typo of the
// agent's find_patient) passed `reins check` and failed later with "scripted model has
// no reply". A tool the script itself calls (an unknown one, on purpose) is fine.
// A scenario of agent.yaml whose scripted model calls `called`, then answers after `after`.
std::string ScriptCallingThenAfter(const std::string& called, const std::string& after) {
  return "id: s\nagent: agent.yaml\nmodel:\n  provider: scripted\n  replies:\n"
         "    - { when: { last: user }, tool_calls: [ { name: " + called + ", args: {} } ] }\n"
         "    - { when: { after_tool: " + after + " }, text: done }\n"
         "turns: [ { say: hello, expect: { status: completed } } ]\n";
}

TEST_F(ScenarioLoaderTest, AScriptedAfterToolNamesAToolOfTheAgent) {
  Write("agent.yaml", R"(name: pharmacy
model: { provider: scripted }
tools:
  - { name: find_patient, input_schema: { type: object } }
)");
  std::string typo = Write("typo.yaml", ScriptCallingThenAfter("find_patient", "find_patiant"));
  Result<Scenario> s = LoadScenarioFile(typo);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("'find_patiant' is not a tool of the agent (did you mean 'find_patient'?)"),
            std::string::npos)
      << s.status().message();
  std::string unknown_on_purpose = Write("unknown.yaml", ScriptCallingThenAfter("delete_everything", "delete_everything"));
  EXPECT_TRUE(LoadScenarioFile(unknown_on_purpose).ok()) << LoadScenarioFile(unknown_on_purpose).status().message();
}

// The agent a team runs: its key and its shop's address come from the environment.
constexpr const char* kLiveAgent = R"(name: shop
model: { provider: openai, model: gpt-4o-mini, api_key: "${REINS_TEST_UNSET_KEY}" }
tools:
  - name: place_order
    input_schema: { type: object }
    backend: { http: { url: "${REINS_TEST_UNSET_SHOP}/orders" } }
)";

TEST_F(ScenarioLoaderTest, AScenarioDoesNotNeedTheEnvironmentOfThePartsItReplaces) {
  Write("agent.yaml", kLiveAgent);
  std::string file = Write("s.yaml", R"(id: s
agent: agent.yaml
fixtures: { place_order: [ { result: { success: true } } ] }
model: { provider: scripted, replies: [ { text: hi } ] }
turns: [ { say: hello, expect: { status: completed } } ]
)");
  Result<Scenario> s = LoadScenarioFile(file);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->agent.model.api_key, "");  // dropped: a real model run takes OPENAI_API_KEY
  EXPECT_EQ(s->agent.tools[0].backend.kind, ToolBackendConfig::Kind::kFixture);
}

TEST_F(ScenarioLoaderTest, AnUnsetVariableOfAPartTheScenarioRunsIsStillAnError) {
  Write("agent.yaml", kLiveAgent);
  // The model is scripted but the tool's real backend would run.
  std::string file = Write("s.yaml", R"(id: s
agent: agent.yaml
model: { provider: scripted, replies: [ { text: hi } ] }
turns: [ { say: hello, expect: { status: completed } } ]
)");
  Result<Scenario> s = LoadScenarioFile(file);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("environment variable REINS_TEST_UNSET_SHOP is not set"), std::string::npos)
      << s.status().message();
  EXPECT_EQ(s.status().message().find("REINS_TEST_UNSET_KEY"), std::string::npos) << s.status().message();
  // Without a model of its own the scenario runs the agent's, key and all.
  file = Write("s.yaml", R"(id: s
agent: agent.yaml
fixtures: { place_order: [ { result: { success: true } } ] }
turns: [ { say: hello, expect: { status: completed } } ]
)");
  s = LoadScenarioFile(file);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("environment variable REINS_TEST_UNSET_KEY is not set"), std::string::npos)
      << s.status().message();
}

TEST_F(ScenarioLoaderTest, WithoutAModelOfItsOwnTheAgentsModelMustBeReal) {
  Write("agent.yaml", "name: a\nmodel: { provider: scripted }\n");
  std::string file = Write("s.yaml", "id: s\nagent: agent.yaml\nturns: [ { say: hello } ]\n");
  Result<Scenario> s = LoadScenarioFile(file);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("missing required key 'model'"), std::string::npos) << s.status().message();
  Write("agent.yaml", "name: a\nmodel: { provider: anthropic, model: claude-sonnet-4-5 }\n");
  s = LoadScenarioFile(file);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->model.is_null());
}

}  // namespace
}  // namespace reins
