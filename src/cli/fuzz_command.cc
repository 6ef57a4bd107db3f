// reins fuzz: random fault mixes and speaker interleavings against every example
// scenario, invariants only; each distinct violation shrunk and written out.
#include <iostream>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/term.h"
#include "eval/eval_model.h"
#include "eval/fuzz.h"
#include "model/sim_model.h"

namespace reins {

int FuzzCommand(const FuzzFlags& flags) {
  std::vector<Scenario> scenarios;
  if (!LoadScenarios(flags.paths, &scenarios)) return 1;
  for (const std::string& id : SetAsideMcpScenarios(scenarios)) {
    std::cerr << "skipped " << id << ": it needs MCP servers\n";
  }
  for (const Scenario& s : SetAside(scenarios, NeedsRealModel)) {
    std::cerr << "skipped " << s.id << ": it has no scripted model for the sim to follow\n";
  }
  if (scenarios.empty()) {
    std::cerr << "no scenario to fuzz\n";
    return 1;
  }
  FuzzOptions options;
  options.runs = flags.runs;
  options.seed = flags.seed;
  options.governor = flags.governor != "off";
  options.threads = flags.jobs;
  options.out_dir = flags.out;
  options.max_repros = flags.max_repros;
  Progress progress("fuzz");
  options.on_progress = [&](int done, int total) { progress.Update(done, total); };
  FuzzReport report = RunFuzz(scenarios, options);
  progress.Finish();

  Term term = Term::ForStdout();
  std::cout << term.Bold("reins fuzz") << " - governor " << (options.governor ? "on" : "off (naive loop)") << ", seed "
            << flags.seed << ", " << scenarios.size() << " scenarios as starting points\n";
  std::cout << "fault mixes covered:";
  for (const auto& [mix, n] : report.mixes) std::cout << " " << mix << " (" << n << ")";
  std::cout << "\nfaults: " << SimFaults::Names().size() << " kinds; " << report.interleaved_runs
            << " runs with another speaker's turns interleaved\n";
  if (!report.by_invariant.empty()) {
    std::cout << "violations by invariant:";
    for (const auto& [id, n] : report.by_invariant) std::cout << " " << id << "=" << n;
    std::cout << "\n";
  }
  int shown = 0;
  for (const FuzzFinding& f : report.findings) {
    if (f.repro_file.empty()) continue;  // past --max-repros: counted below
    ++shown;
    std::cout << term.Red(f.invariant) << " in " << f.scenario_id << " (" << f.occurrences << " runs; first: run "
              << f.run + 1 << ")\n    " << f.message << "\n";
    if (!f.repro_file.empty()) {
      std::cout << term.Dim("    shrunk from " + std::to_string(f.turns) + " turns and " + std::to_string(f.faults) +
                            " faults to " + std::to_string(f.shrunk_turns) + " and " + std::to_string(f.shrunk_faults) +
                            ": reins run " + f.repro_file + (options.governor ? "" : " --governor off"))
                << "\n";
    }
  }
  if (static_cast<size_t>(shown) < report.findings.size()) {
    std::cout << report.findings.size() - static_cast<size_t>(shown)
              << " more distinct findings (scenario, invariant) not shrunk; raise --max-repros to write them\n";
  }
  std::cout << term.Dim(std::to_string(report.runs) + " runs in " + std::to_string(static_cast<int>(report.seconds * 1000)) +
                        " ms on " + std::to_string(report.threads) + " threads (" +
                        std::to_string(static_cast<int>(report.seconds > 0 ? report.runs / report.seconds : 0)) +
                        " runs/s)")
            << "\n";
  std::cout << report.runs << " runs, " << report.violations << " violations\n";
  return report.violations == 0 ? 0 : 1;
}

}  // namespace reins
