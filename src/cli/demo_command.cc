// reins demo: one scenario per example, told turn by turn, then the before/after table
// from a quick simulated run. No API key, no network.
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/term.h"
#include "cli/transcript.h"
#include "eval/eval_report.h"
#include "eval/eval_suite.h"
#include "eval/scenario_runner.h"

namespace reins {
namespace {

// The scenario an example shows first: one tagged `demo`, else its first.
const Scenario* Showcase(const std::vector<Scenario>& scenarios, const std::string& folder) {
  const Scenario* first = nullptr;
  for (const Scenario& s : scenarios) {
    if (s.file.rfind(folder, 0) != 0) continue;
    if (first == nullptr) first = &s;
    for (const std::string& t : s.tags) {
      if (t == "demo") return &s;
    }
  }
  return first;
}

}  // namespace

int DemoCommand(const std::string& dir) {
  namespace fs = std::filesystem;
  Term term = Term::ForStdout();
  std::vector<Scenario> scenarios;
  if (!LoadScenarios({dir}, &scenarios)) return 1;
  SetAsideMcpScenarios(scenarios);  // the demo needs no network and no npm
  std::vector<std::string> folders;
  for (const Scenario& s : scenarios) {
    std::string folder = fs::path(s.file).parent_path().string();
    if (fs::path(folder).filename() == "scenarios") folder = fs::path(folder).parent_path().string();
    if (std::find(folders.begin(), folders.end(), folder) == folders.end()) folders.push_back(folder);
  }
  std::cout << term.Bold("reins demo") << " - " << folders.size() << " examples, scripted model, no API key.\n"
            << term.Dim("Each turn shows what the model proposed, what reins did with each call and why,\n"
                        "and the checks the scenario makes. Invariants are re-checked on every trace.\n\n");
  int failed = 0;
  for (const std::string& folder : folders) {
    const Scenario* s = Showcase(scenarios, folder);
    if (s == nullptr) continue;
    std::cout << term.Cyan("== " + fs::path(folder).filename().string() + " ==") << "\n";
    ScenarioRun run = RunScenario(*s);
    PrintScenarioRun(std::cout, run, term, false);
    std::cout << "\n";
    failed += !run.Passed();
  }

  std::cout << term.Bold("Before and after") << " - every example scenario, 20 runs each against the simulated\n"
            << "model (faults at the default rates), through the naive loop (before) and through reins (after).\n";
  EvalOptions options;
  options.sim = true;
  options.runs = 20;
  options.seed = 1;
  options.governors = {true, false};
  Progress progress("sim");
  options.on_progress = [&](int done, int total) { progress.Update(done, total); };
  EvalReport report = RunEval(scenarios, options);
  progress.Finish();
  Json json = ReportToJson(report);
  std::cout << GroupTable(json, "seed", false);
  for (const ModeStats& m : report.modes) PrintModeSummary(std::cout, m, term);
  std::cout << term.Dim("Full report: build/reins eval examples/ --model sim --runs 200 --seed 1 --report out/") << "\n";
  const ModeStats* on = report.Mode(true);
  if (on != nullptr && !on->violations.empty()) ++failed;
  return failed == 0 ? 0 : 1;
}

}  // namespace reins
