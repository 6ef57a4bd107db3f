// reins eval: many runs of the scenarios under PATH, governed and naive, with a report.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/term.h"
#include "cli/transcript.h"
#include "domain/json_parse.h"
#include "eval/cassette.h"
#include "eval/eval_gates.h"
#include "eval/eval_model.h"
#include "eval/eval_report.h"
#include "eval/eval_suite.h"
#include "eval/scenario_runner.h"
#include "mcp/mcp_hub.h"

namespace reins {
namespace {

bool WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (out) return true;
  std::cerr << "cannot write " << path.string() << "\n";
  return false;
}

// One line per scenario: pass rate with the governor off and on.
void PrintScenarioRates(std::ostream& out, const EvalReport& report, const Term& term) {
  const ModeStats* on = report.Mode(true);
  const ModeStats* off = report.Mode(false);
  const ModeStats* base = on != nullptr ? on : off;
  for (size_t i = 0; i < base->scenarios.size(); ++i) {
    const ScenarioStats& s = base->scenarios[i];
    auto rate = [&](const ModeStats* m) {
      if (m == nullptr) return std::string("    -");
      const ScenarioStats& x = m->scenarios[i];
      char buf[16];
      std::snprintf(buf, sizeof buf, "%5.1f%%", x.runs ? 100.0 * x.passed / x.runs : 0.0);
      return std::string(buf);
    };
    bool ok = on == nullptr || on->scenarios[i].passed == on->scenarios[i].runs;
    out << (ok ? term.Green("PASS") : term.Red("FAIL")) << " ";
    if (off != nullptr) out << term.Dim("off " + rate(off)) << "  ";
    if (on != nullptr) out << "on " << rate(on) << "  ";
    out << s.id;
    if (!ok && on != nullptr) {
      out << "  " << term.Dim(on->scenarios[i].first_failure.substr(0, 160)) << "\n      reproduce: "
          << on->scenarios[i].reproduce;
    }
    out << "\n";
  }
}

// A real model's calls: tokens, cost and latency, per governor setting.
void PrintModelUsage(std::ostream& out, const Json& report, const Term& term) {
  for (const Json& m : report["modes"]) {
    std::string usage = ModelUsageText(m);
    if (usage.empty()) continue;
    out << term.Dim(report.value("model", "") + ", governor " + m.value("governor", "") + ": " + usage) << "\n";
  }
}

// For each agent far behind under the sim, what its governed runs lacked.
void PrintRecovery(std::ostream& out, const Json& report, const Term& term) {
  for (const Json& hint : report.value("recovery", Json::array())) {
    char rates[96];
    std::snprintf(rates, sizeof rates, ": %.0f%% of governed sim runs pass, %.0f%% with the scripted model",
                  hint.value("governed_pass_rate", 0.0) * 100, hint.value("scripted_pass_rate", 0.0) * 100);
    out << term.Bold(hint.value("agent", "")) << rates << "; what would recover it:\n";
    for (const Json& f : hint.value("features", Json::array())) {
      out << "  - " << f.value("feature", "") << ": " << f.value("why", "") << "\n";
    }
  }
}

}  // namespace

// "--faults none" (a model that makes no mistakes of its own and, like any model,
// answers whoever reaches it) or "name=rate,name=rate".
bool ParseFaults(const std::string& text, Json* out) {
  *out = Json::object();
  if (text == "none") {
    for (const std::string& f : SimFaults::Names()) (*out)[f] = f == "answer_other_speaker" ? 1.0 : 0.0;
    return true;
  }
  Result<std::vector<std::pair<std::string, std::string>>> pairs = ParseNameValues(text, "--faults");
  if (!pairs.ok()) return false;
  for (const auto& [name, value] : *pairs) {
    char* end = nullptr;
    const double rate = std::strtod(value.c_str(), &end);
    if (end != value.c_str() + value.size()) return false;
    (*out)[name] = rate;
  }
  return SimFaults::FromJson(*out, SimFaults::Defaults()).ok();
}


bool LoadScenarios(const std::vector<std::string>& paths, std::vector<Scenario>* out) {
  std::string error;
  std::vector<std::string> files = FindScenarioFiles(paths, &error);
  if (!error.empty()) {
    std::cerr << error << "\n";
    return false;
  }
  if (files.empty()) {
    std::cerr << "no scenario files found (a scenario is a YAML file with a top-level 'turns' list)\n";
    return false;
  }
  bool ok = true;
  for (const std::string& file : files) {
    Result<Scenario> scenario = LoadScenarioFile(file);
    if (!scenario.ok()) {
      std::cerr << scenario.status().message();
      ok = false;
      continue;
    }
    out->push_back(std::move(scenario).value());
  }
  return ok;
}

std::vector<Scenario> SetAside(std::vector<Scenario>& scenarios, const std::function<bool(const Scenario&)>& which) {
  std::vector<Scenario> aside, kept;
  for (Scenario& s : scenarios) (which(s) ? aside : kept).push_back(std::move(s));
  scenarios = std::move(kept);
  return aside;
}

std::vector<std::string> SetAsideMcpScenarios(std::vector<Scenario>& scenarios) {
  std::vector<std::string> ids;
  for (const Scenario& s : SetAside(scenarios, [](const Scenario& x) { return McpHub::Needed(x.agent); })) ids.push_back(s.id);
  return ids;
}

namespace {

Result<EvalGates> ParseGates(const EvalFlags& flags) {
  EvalGates gates;
  gates.min_pass = flags.min_pass;
  if (!flags.min_dimension.empty()) {
    REINS_ASSIGN_OR_RETURN(gates.min_dimension, ParseDimensionGates(flags.min_dimension));
  }
  if (!flags.max_critical.empty()) {
    REINS_ASSIGN_OR_RETURN(gates.max_critical, ParseCriticalGates(flags.max_critical));
  }
  if (!flags.max_harm.empty()) {
    REINS_ASSIGN_OR_RETURN(gates.max_harm, ParseHarmGates(flags.max_harm));
  }
  return gates;
}

Status ChooseEvalModel(const EvalFlags& flags, EvalOptions& options) {
  REINS_ASSIGN_OR_RETURN(options.model, ParseModelChoice(flags.model, flags.base_url));
  options.sim = options.model.kind == ModelChoice::Kind::kSim;
  if (!flags.record.empty() && !flags.replay.empty()) return InvalidArgument("--record and --replay exclude each other");
  if (!flags.record.empty() && !options.model.Real()) {
    return InvalidArgument("--record keeps a real model's exchanges: give --model agent or PROVIDER:MODEL");
  }
  if (!flags.replay.empty() && options.sim) return InvalidArgument("--replay answers as the recorded real model did: not with --model sim");
  options.record = flags.record;
  options.replay = flags.replay;
  if (!flags.prices.empty()) {
    REINS_ASSIGN_OR_RETURN(options.prices, LoadPriceList(flags.prices));
  }
  if (flags.max_tokens || flags.max_cost) options.budget = std::make_shared<ModelBudget>(flags.max_tokens, flags.max_cost);
  return OkStatus();
}

// --max-cost needs a price for every real model it counts.
Status CheckPrices(const std::vector<Scenario>& scenarios, const EvalOptions& options, const EvalFlags& flags) {
  if (!flags.max_cost) return OkStatus();
  for (const Scenario& s : scenarios) {
    std::shared_ptr<Cassette> replay;
    if (!options.replay.empty()) {
      Result<std::shared_ptr<Cassette>> c = Cassette::Open(options.replay, s.id, Cassette::Mode::kReplay);
      if (!c.ok()) continue;  // the scenario's runs fail with it
      replay = *c;
    }
    Result<std::optional<ModelConfig>> real = RealModelFor(s, options.model, replay.get(), options.prices);
    if (real.ok() && *real && !(*real)->pricing) {
      return InvalidArgument("--max-cost needs the price of " + (*real)->provider + ":" + (*real)->model + " (scenario " +
                             s.id + "): set model.pricing in the agent or give --prices FILE");
    }
  }
  return OkStatus();
}

}  // namespace

int EvalCommand(const EvalFlags& flags) {
  std::vector<Scenario> scenarios;
  bool loaded = LoadScenarios(flags.paths, &scenarios);
  std::vector<std::string> skipped = SetAsideMcpScenarios(scenarios);
  for (const std::string& id : skipped) {
    std::cerr << "skipped " << id << ": it needs MCP servers; run it with reins run\n";
  }
  EvalOptions options;
  if (Status chosen = ChooseEvalModel(flags, options); !chosen.ok()) {
    std::cerr << chosen.message() << "\n";
    return 1;
  }
  Result<EvalGates> gates = ParseGates(flags);
  if (!gates.ok()) {
    std::cerr << gates.status().message() << "\n";
    return 1;
  }
  // Offline unless asked: a scenario that needs a real model is skipped, never passed.
  if (!options.model.Real() && options.replay.empty()) {
    for (const Scenario& s : SetAside(scenarios, NeedsRealModel)) {
      std::cerr << "skipped " << s.id << ": it runs its agent's model (" << s.agent.model.provider << ":"
                << s.agent.model.model << "); give --model agent or --replay DIR\n";
      skipped.push_back(s.id);
    }
  }
  if (scenarios.empty()) {
    if (skipped.empty()) return 1;
    std::cerr << "0 passed, 0 failed, " << skipped.size() << " skipped\n";
    return loaded ? 0 : 1;
  }
  if (Status priced = CheckPrices(scenarios, options, flags); !priced.ok()) {
    std::cerr << priced.message() << "\n";
    return 1;
  }
  if (!flags.faults.empty() && !ParseFaults(flags.faults, &options.sim_faults)) {
    std::cerr << "--faults takes none or name=rate,... with rates between 0 and 1 and these names:";
    for (const std::string& f : SimFaults::Names()) std::cerr << " " << f;
    std::cerr << "\n";
    return 1;
  }
  options.faults_flag = flags.faults;
  options.runs = flags.runs;
  options.seed = flags.seed;
  options.threads = flags.jobs;
  std::string governor = flags.governor.empty() ? (options.sim ? "both" : "on") : flags.governor;
  options.governors = governor == "both" ? std::vector<bool>{true, false} : std::vector<bool>{governor == "on"};
  Progress progress("eval");
  options.on_progress = [&](int done, int total) { progress.Update(done, total); };
  EvalReport report = RunEval(scenarios, options);
  progress.Finish();

  Term term = flags.json ? Term(false) : Term::ForStdout();
  Json json = ReportToJson(report);
  json["gates"] = JudgeGates(*gates, json);
  if (flags.json) {
    std::cout << json.dump(2) << "\n";
  } else {
    PrintScenarioRates(std::cout, report, term);
    std::cout << "\n";
    if (report.Mode(true) != nullptr && report.Mode(false) != nullptr) std::cout << GroupTable(json, "tag", false) << "\n";
    for (const ModeStats& m : report.modes) PrintModeSummary(std::cout, m, term);
    const ModeStats* on = report.Mode(true);
    if (on != nullptr && !on->violation_examples.empty()) {
      for (const std::string& v : on->violation_examples) std::cout << "  " << term.Red(v) << "\n";
    }
    PrintModelUsage(std::cout, json, term);
    PrintRecovery(std::cout, json, term);
    int total_runs = 0;
    for (const ModeStats& m : report.modes) total_runs += m.runs;
    std::cout << term.Dim(std::to_string(total_runs) + " runs in " + std::to_string(static_cast<int>(report.seconds * 1000)) +
                          " ms on " + std::to_string(report.threads) + " threads (" +
                          std::to_string(static_cast<int>(json.value("runs_per_second", 0.0))) + " runs/s)")
              << "\n";
  }
  if (!flags.compare.empty()) {
    std::ifstream in(flags.compare);
    std::stringstream text;
    text << in.rdbuf();
    Json old = ParseJsonOrDiscarded(text.str(), kMaxStoredJsonDepth);
    if (old.is_discarded() || old.value("schema", "") != "reins.eval.report") {
      std::cerr << flags.compare << " is not a reins eval report.json\n";
      return 1;
    }
    (flags.json ? std::cerr : std::cout) << "\nCompared with " << flags.compare << ":\n" << CompareReports(old, json);
  }
  if (!flags.report.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(flags.report, ec);
    fs::path dir(flags.report);
    if (!WriteFile(dir / "report.json", json.dump(2) + "\n") || !WriteFile(dir / "report.html", ReportToHtml(json)) ||
        !WriteFile(dir / "junit.xml", ReportToJunit(json))) {
      return 1;
    }
    if (!flags.json) std::cout << "report written to " << (dir / "report.html").string() << "\n";
  }

  // The last line counts the governed runs (or the naive ones when only those ran).
  const ModeStats* judged = report.Mode(true) != nullptr ? report.Mode(true) : report.Mode(false);
  int failed = judged->runs - judged->passed;
  std::string ignored;
  int invalid = static_cast<int>(FindScenarioFiles(flags.paths, &ignored).size()) - static_cast<int>(scenarios.size()) -
                static_cast<int>(skipped.size());
  std::ostream& summary = flags.json ? std::cerr : std::cout;  // --json: stdout is the JSON alone
  summary << judged->passed << " passed, " << failed + invalid << " failed";
  if (!skipped.empty()) summary << ", " << skipped.size() << " skipped";
  summary << "\n";
  for (const std::string& problem : report.problems) std::cerr << problem << "\n";
  if (!report.stopped.empty()) {
    std::cerr << "stopped early: " << report.stopped << "; " << judged->not_run
              << " runs did not start (the report holds the runs that did)\n";
  }
  if (!loaded || !report.problems.empty() || !report.stopped.empty()) return 1;
  if (judged->governor && !judged->violations.empty()) return 1;
  if (!gates->Any()) return failed + invalid > 0 ? 1 : 0;  // no gate: like a test runner
  int failed_gates = 0;
  for (const Json& g : json["gates"]) {
    if (g.value("passed", false)) continue;
    std::cerr << "gate failed: " << g.value("gate", "") << " (" << g.value("detail", "") << ")\n";
    ++failed_gates;
  }
  return failed_gates > 0 || invalid > 0 ? 1 : 0;
}

}  // namespace reins
