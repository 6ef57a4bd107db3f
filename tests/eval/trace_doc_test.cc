// docs/trace.md lists every event the code emits, with its fields. Two checks: every
// event type written in the source (an Emit call or a TraceEvent built by hand) has a
// row and every row is an event the source writes; and every event of every example
// scenario, run governed, with the governor off and under the simulated model's faults,
// has only the fields its row lists. The runtime tests check their own turns the same
// way (support/runtime_harness.h), which covers the paths no example takes.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "eval/scenario.h"
#include "eval/scenario_runner.h"
#include "support/trace_doc.h"

namespace reins {
namespace {

namespace fs = std::filesystem;

// Event types written in src/: `Emit("x"`, `emit("x"`, a ternary of two inside an Emit,
// and `{"x", <turn>, ...}` braces that build a TraceEvent by hand.
std::map<std::string, std::string> EventTypesInSource() {
  const std::regex emit(R"re([Ee]mit\(\s*(?:[a-z_.]+\s*\?\s*"([a-z_.]+)"\s*:\s*)?"([a-z_.]+)")re");
  const std::regex built(R"re(\{"([a-z_]+\.[a-z_.]+)",\s*[a-z_.]*turn[a-z_]*,)re");
  std::map<std::string, std::string> found;  // type -> a file that writes it
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(REINS_SOURCE_DIR) / "src")) {
    if (!entry.is_regular_file() || (entry.path().extension() != ".cc" && entry.path().extension() != ".h")) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    const std::string file = fs::relative(entry.path(), REINS_SOURCE_DIR).string();
    for (const std::regex* re : {&emit, &built}) {
      for (auto it = std::sregex_iterator(s.begin(), s.end(), *re); it != std::sregex_iterator(); ++it) {
        for (size_t g = 1; g < it->size(); ++g) {
          if ((*it)[g].matched) found.emplace((*it)[g].str(), file);
        }
      }
    }
  }
  return found;
}

TEST(TraceDocTest, EveryEventTypeInTheSourceHasARowAndEveryRowIsEmitted) {
  const auto& doc = testing::DocumentedTraceEvents();
  const std::map<std::string, std::string> source = EventTypesInSource();
  ASSERT_GT(source.size(), 30u) << "the source scan found too few event types to be working";
  for (const auto& [type, file] : source) {
    EXPECT_TRUE(doc.contains(type)) << file << " emits '" << type << "', which docs/trace.md does not list";
  }
  for (const auto& [type, fields] : doc) {
    EXPECT_TRUE(source.contains(type)) << "docs/trace.md lists '" << type << "', which no code emits";
  }
}

std::vector<std::string> ExampleScenarios() {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(REINS_SOURCE_DIR) / "examples")) {
    const std::string path = entry.path().string();
    if (entry.path().extension() != ".yaml" || path.find("/scenarios/") == std::string::npos) continue;
    if (path.find("/mcp-") != std::string::npos) continue;  // needs the npm servers; tests/mcp covers them
    files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  return files;
}

void ExpectRunDocumented(const ScenarioRun& run) {
  SCOPED_TRACE(run.file);
  for (const TurnRun& t : run.turns) testing::ExpectDocumented(t.result.events);
}

TEST(TraceDocTest, EveryEventOfEveryExampleHasOnlyDocumentedFields) {
  const std::vector<std::string> files = ExampleScenarios();
  ASSERT_GT(files.size(), 20u);
  for (const std::string& file : files) {
    Result<Scenario> scenario = LoadScenarioFile(file);
    ASSERT_TRUE(scenario.ok()) << scenario.status().message();
    ExpectRunDocumented(RunScenario(*scenario));
    ExpectRunDocumented(RunScenario(*scenario, {.governor = false}));
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      ExpectRunDocumented(RunScenario(*scenario, {.sim = {{"seed", seed}}}));
    }
  }
}

}  // namespace
}  // namespace reins
