// docs/trace.md lists every event include/reins/trace.h declares, with its fields (the
// compiler holds the code to the header: an undeclared name does not build). Three
// checks: the header and the doc list the same events and the doc names every declared
// field; every declared event is written somewhere in src/ (nothing retired lingers);
// and every event of every example scenario, run governed, with the governor off and
// under the simulated model's faults, has only the fields both list. The runtime tests check their own turns the same
// way (support/runtime_harness.h), which covers the paths no example takes.
#include <cctype>
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

// "plan.step.started" -> "PlanStepStarted", the enumerator's name after its `k`.
std::string EnumeratorOf(std::string_view name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '.' || c == '_') {
      upper = true;
    } else {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return out;
}

// Event types written in src/: by name (`Emit("x"`, `emit("x"`) or by enumerator on a
// line that writes an event (an Emit call, a TraceEvent built by hand).
std::map<std::string, std::string> EventTypesInSource() {
  const std::regex emit(R"re([Ee]mit\(\s*"([a-z_.]+)")re");
  const std::regex enumerator(R"re(EventType::k([A-Za-z]+))re");
  std::map<std::string, std::string> by_enumerator;
  for (const EventSpec& spec : kEventSpecs) by_enumerator[EnumeratorOf(spec.name)] = spec.name;
  std::map<std::string, std::string> found;  // type -> a file that writes it
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(REINS_SOURCE_DIR) / "src")) {
    if (!entry.is_regular_file() || (entry.path().extension() != ".cc" && entry.path().extension() != ".h")) continue;
    std::ifstream in(entry.path());
    const std::string file = fs::relative(entry.path(), REINS_SOURCE_DIR).string();
    for (std::string line; std::getline(in, line);) {
      for (auto it = std::sregex_iterator(line.begin(), line.end(), emit); it != std::sregex_iterator(); ++it) {
        found.emplace((*it)[1].str(), file);
      }
      const bool writes = line.find("mit(") != std::string::npos || line.find("events.push_back(") != std::string::npos ||
                          line.find("TraceEvent ") != std::string::npos || line.find("event = {") != std::string::npos;
      if (!writes) continue;
      for (auto it = std::sregex_iterator(line.begin(), line.end(), enumerator); it != std::sregex_iterator(); ++it) {
        if (auto name = by_enumerator.find((*it)[1].str()); name != by_enumerator.end()) found.emplace(name->second, file);
      }
    }
  }
  return found;
}

TEST(TraceDocTest, EveryDeclaredEventHasARowWithItsFieldsAndEveryRowIsDeclared) {
  const auto& doc = testing::DocumentedTraceEvents();
  for (const EventSpec& spec : kEventSpecs) {
    if (spec.type == EventType::kUnknown) continue;
    const std::string type(spec.name);
    auto row = doc.find(type);
    if (row == doc.end()) {
      ADD_FAILURE() << "include/reins/trace.h declares '" << type << "', which docs/trace.md does not list";
      continue;
    }
    for (const std::string& field : testing::DeclaredFields(spec.type)) {
      EXPECT_TRUE(row->second.contains(field)) << "docs/trace.md's row for '" << type << "' does not name its field '"
                                               << field << "'";
    }
  }
  for (const auto& [type, fields] : doc) {
    EXPECT_NE(EventTypeFromName(type), EventType::kUnknown)
        << "docs/trace.md lists '" << type << "', which include/reins/trace.h does not declare";
  }
}

TEST(TraceDocTest, EveryDeclaredEventIsWrittenSomewhere) {
  const std::map<std::string, std::string> source = EventTypesInSource();
  ASSERT_GT(source.size(), 30u) << "the source scan found too few event types to be working";
  for (const EventSpec& spec : kEventSpecs) {
    if (spec.type == EventType::kUnknown) continue;
    EXPECT_TRUE(source.contains(std::string(spec.name))) << "include/reins/trace.h declares '" << spec.name
                                                          << "', which no code in src/ writes";
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
