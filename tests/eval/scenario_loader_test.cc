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

}  // namespace
}  // namespace reins
