#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/term.h"
#include "cli/transcript.h"
#include "domain/detail_log.h"
#include "eval/cassette.h"
#include "eval/eval_model.h"
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

namespace {

// The model of a single run: the scenario's, the sim, or a real one (--model agent or
// PROVIDER:MODEL, or the agent's own when the scenario has none), live, recorded or
// replayed.
Status ChooseRunModel(const Scenario& scenario, const RunFlags& flags, RunOptions& options) {
  REINS_ASSIGN_OR_RETURN(ModelChoice choice, ParseModelChoice(flags.model, flags.base_url));
  if (!flags.replay.empty() && !flags.record.empty()) return InvalidArgument("--record and --replay exclude each other");
  if (!flags.replay.empty()) {
    REINS_ASSIGN_OR_RETURN(options.cassette, Cassette::Open(flags.replay, scenario.id, Cassette::Mode::kReplay));
  }
  REINS_ASSIGN_OR_RETURN(options.real_model, RealModelFor(scenario, choice, options.cassette.get(), {}));
  options.run = flags.run;
  if (!flags.record.empty() && !options.real_model) {
    return InvalidArgument("--record keeps a real model's exchanges: give --model agent or PROVIDER:MODEL");
  }
  if (!flags.replay.empty() && choice.kind == ModelChoice::Kind::kSim) {
    return InvalidArgument("--replay answers as the recorded real model did: not with --model sim");
  }
  if (!flags.record.empty()) {
    REINS_ASSIGN_OR_RETURN(options.cassette, Cassette::Open(flags.record, scenario.id, Cassette::Mode::kRecord));
    options.cassette->SetModel(options.real_model->provider, options.real_model->model);
  }
  if (options.real_model && !flags.json) {
    std::cerr << "model: " << options.real_model->provider << ":" << options.real_model->model
              << (options.cassette && options.cassette->mode() == Cassette::Mode::kReplay ? " (replayed from " + options.cassette->path() + ")" : std::string())
              << "\n";
  }
  return OkStatus();
}

}  // namespace

int RunCommand(const std::string& file, const RunFlags& flags) {
  // Where a failed call really went (hidden from replies and traces) is for this user.
  SetDetailSink([](std::string_view source, std::string_view message) {
    std::cerr << "reins: " << source << ": " << message << "\n";
  });
  Result<Scenario> scenario = LoadScenarioFile(file);
  if (!scenario.ok()) {
    std::cerr << scenario.status().message();
    return 1;
  }
  RunOptions options;
  options.store_url = flags.store;
  // A kept session gets ids of its own, so runs of any scenarios can share one store
  // (a seeded id would be the same for every run).
  if (flags.store != "sqlite::memory:") options.id_seed = 0;
  options.governor = flags.governor != "off";
  if (Status chosen = ChooseRunModel(*scenario, flags, options); !chosen.ok()) {
    std::cerr << chosen.message() << "\n";
    return 1;
  }
  if (flags.model == "sim") options.sim = {{"seed", flags.seed}};
  if (!flags.faults.empty()) {
    Json faults;
    if (flags.model != "sim" || !ParseFaults(flags.faults, &faults)) {
      std::cerr << "--faults goes with --model sim and takes none or name=rate,... with rates between 0 and 1\n";
      return 1;
    }
    options.sim["faults"] = std::move(faults);
  }
  ScenarioRun run = RunScenario(*scenario, options);
  if (options.cassette && options.cassette->mode() == Cassette::Mode::kRecord) {
    if (Status saved = options.cassette->Save(); !saved.ok()) std::cerr << saved.message() << "\n";
  }
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

}  // namespace reins
