#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/term.h"
#include "cli/transcript.h"
#include "eval/scenario_runner.h"

namespace reins {

std::vector<std::string> FindScenarioFiles(const std::vector<std::string>& paths, std::string* error) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const fs::path& f = it->path();
      if (it->is_regular_file() && (f.extension() == ".yaml" || f.extension() == ".yml") && IsScenarioFile(f.string())) {
        files.push_back(f.string());
      }
    }
    if (ec) *error = "cannot read " + p + ": " + ec.message();
  }
  std::sort(files.begin(), files.end());
  return files;
}

int RunCommand(const std::string& file, const RunFlags& flags) {
  Result<Scenario> scenario = LoadScenarioFile(file);
  if (!scenario.ok()) {
    std::cerr << scenario.status().message();
    return 1;
  }
  RunOptions options;
  options.store_url = flags.store;
  ScenarioRun run = RunScenario(*scenario, options);
  if (flags.json) {
    std::cout << ScenarioRunToJson(run, flags.trace).dump(2) << "\n";
  } else {
    PrintScenarioRun(std::cout, run, Term::ForStdout(), flags.trace);
    if (flags.store != "sqlite::memory:") {
      std::cout << "session " << run.session_id << " stored in " << flags.store << "\n";
    }
  }
  return run.Passed() ? 0 : 1;
}

int EvalCommand(const std::vector<std::string>& paths, double min_pass, bool json) {
  std::string error;
  std::vector<std::string> files = FindScenarioFiles(paths, &error);
  if (!error.empty()) {
    std::cerr << error << "\n";
    return 1;
  }
  if (files.empty()) {
    std::cerr << "no scenario files found (a scenario is a YAML file with a top-level 'turns' list)\n";
    return 1;
  }
  Term term = json ? Term(false) : Term::ForStdout();
  int passed = 0, failed = 0;
  Json runs = Json::array();
  for (const std::string& file : files) {
    Result<Scenario> scenario = LoadScenarioFile(file);
    if (!scenario.ok()) {
      ++failed;
      std::cerr << scenario.status().message();
      if (!json) std::cout << term.Red("FAIL") << " " << file << "  " << term.Dim("(invalid scenario file)") << "\n";
      continue;
    }
    ScenarioRun run = RunScenario(*scenario);
    run.Passed() ? ++passed : ++failed;
    if (json) {
      runs.push_back(ScenarioRunToJson(run, false));
    } else {
      PrintScenarioSummaryLine(std::cout, run, term);
      if (!run.Passed()) PrintScenarioRun(std::cout, run, term, false);
    }
  }
  double rate = static_cast<double>(passed) / static_cast<double>(passed + failed);
  if (json) std::cout << Json{{"runs", runs}, {"passed", passed}, {"failed", failed}}.dump(2) << "\n";
  std::cout << passed << " passed, " << failed << " failed\n";
  if (rate < min_pass) {
    std::cerr << "pass rate " << rate << " is below --min-pass " << min_pass << "\n";
    return 1;
  }
  return 0;
}

int DemoCommand(const std::string& dir) {
  Term term = Term::ForStdout();
  std::string error;
  std::vector<std::string> files = FindScenarioFiles({dir}, &error);
  if (files.empty()) {
    std::cerr << "no scenarios under " << dir << (error.empty() ? "" : ": " + error) << "\n";
    return 1;
  }
  std::cout << term.Bold("reins demo") << " - " << files.size() << " scenarios from " << dir
            << ", scripted model, no API key.\n"
            << term.Dim("Each turn shows what the model proposed, what reins did with each call and why,\n"
                        "and the checks the scenario makes. Invariants are re-checked on every trace.\n\n");
  int passed = 0, failed = 0;
  for (const std::string& file : files) {
    Result<Scenario> scenario = LoadScenarioFile(file);
    if (!scenario.ok()) {
      std::cerr << scenario.status().message();
      ++failed;
      continue;
    }
    ScenarioRun run = RunScenario(*scenario);
    PrintScenarioRun(std::cout, run, term, false);
    std::cout << "\n";
    run.Passed() ? ++passed : ++failed;
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed == 0 ? 0 : 1;
}

}  // namespace reins
