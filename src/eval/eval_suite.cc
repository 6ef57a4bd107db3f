#include "eval/eval_suite.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <filesystem>
#include <set>

#include "eval/parallel.h"
#include "eval/recovery.h"
#include "eval/scenario_runner.h"

namespace reins {
namespace {

// What one run leaves behind: enough to aggregate, nothing more.
struct RunSummary {
  bool not_run = false;  // the budget was spent before it started
  bool passed = false;
  std::string failure;
  std::vector<std::pair<std::string, bool>> dimensions;  // (dimension, passed) per check
  std::vector<std::string> critical;                     // tags of failed critical checks
  std::vector<InvariantViolation> violations;
  std::vector<Harm> harms;
  std::map<std::string, FaultTally> faults;
  std::map<std::string, DetectorTally> detectors;
  Json transcript;  // a failed run's, when it may be its scenario's first failure
  std::map<std::string, int> not_called;  // tools failed checks wanted run (tools_executed, tools_deferred)
  RecoveryTally recovery;
  ModelUsage usage;
  std::vector<double> turn_ms;
};

void AddCheck(const CheckResult& c, RunSummary& s) {
  if (!c.passed && (c.kind == "tools_executed" || c.kind == "tools_deferred")) {
    for (const Json& item : c.expected.is_array() ? c.expected : Json::array({c.expected})) {
      const Json name = item.is_object() ? item.value("name", Json()) : item;
      if (name.is_string()) ++s.not_called[name.get<std::string>()];
    }
  }
  if (!c.dimension.empty()) s.dimensions.emplace_back(c.dimension, c.passed);
  if (!c.passed && !c.critical.empty()) s.critical.push_back(c.critical);
  if (!c.passed && s.failure.empty()) s.failure = c.kind + ": " + c.detail;
}

// Per turn, the forced retries and what came of act_not_describe's.
RecoveryTally Recovery(const ScenarioRun& run) {
  RecoveryTally r;
  bool recovered = false;
  for (const TurnRun& t : run.turns) {
    int extra = 0;
    std::set<std::string> forced;  // act.retry tools waiting for their call
    for (const TraceEvent& e : t.result.events) {
      if (e.type == "act.retry") {
        ++extra;
        ++r.act_retries;
        forced.insert(e.data.value("tool", ""));
      } else if (e.type == "plan.step.retry" || (e.type == "intent.missing" && e.data.value("retry", false))) {
        ++extra;
      } else if (e.type == "act.missing") {
        ++r.act_missing;
      } else if (e.type == "tool.executed" || e.type == "tool.deferred" || e.type == "approval.requested") {
        if (forced.erase(e.data.value("name", "")) > 0) {
          ++r.act_recovered;
          recovered = true;
        }
      }
    }
    r.extra_calls.push_back(extra);
  }
  r.runs_recovered = recovered && run.Passed() ? 1 : 0;
  return r;
}

RunSummary Summarise(const ScenarioRun& run) {
  RunSummary s;
  s.passed = run.Passed();
  s.recovery = Recovery(run);
  if (!run.error.empty()) s.failure = "error: " + run.error;
  for (const TurnRun& t : run.turns) {
    for (const CheckResult& c : t.checks) {
      AddCheck(c, s);
      if (!c.passed && s.failure.find("turn ") != 0 && s.failure.rfind(c.kind, 0) == 0) {
        s.failure = "turn " + std::to_string(t.number) + " " + s.failure;
      }
    }
  }
  for (const CheckResult& c : run.final_checks) AddCheck(c, s);
  s.violations = run.violations;
  if (s.failure.empty() && !run.violations.empty()) {
    s.failure = run.violations.front().id + ": " + run.violations.front().message;
  }
  s.harms = run.harms;
  s.faults = run.fault_tally;
  s.detectors = run.detectors;
  s.usage = run.usage;
  s.turn_ms = run.turn_ms;
  return s;
}

// How each scenario meets its model: the real model's config and the cassette it
// records into or replays from. A scenario whose model cannot be set up fails each of
// its runs with the reason.
struct ScenarioModel {
  std::optional<ModelConfig> real;
  std::shared_ptr<Cassette> cassette;
  std::string error;
};

ScenarioModel PrepareModel(const Scenario& s, const EvalOptions& options) {
  ScenarioModel m;
  if (!options.replay.empty()) {
    Result<std::shared_ptr<Cassette>> c = Cassette::Open(options.replay, s.id, Cassette::Mode::kReplay);
    if (!c.ok()) {
      m.error = c.status().message();
      return m;
    }
    m.cassette = *c;
  }
  Result<std::optional<ModelConfig>> real = RealModelFor(s, options.model, m.cassette.get(), options.prices);
  if (!real.ok()) {
    m.error = real.status().message();
    return m;
  }
  m.real = std::move(real).value();
  if (!options.record.empty() && m.real) {
    m.cassette = *Cassette::Open(options.record, s.id, Cassette::Mode::kRecord);
    m.cassette->SetModel(m.real->provider, m.real->model);
  }
  return m;
}

// The report's name for the model: the one real model every scenario used, "agent"
// when they used their agents' different ones.
std::string ModelName(const EvalOptions& options, const std::vector<ScenarioModel>& models) {
  std::string name;
  for (const ScenarioModel& m : models) {
    if (!m.real) continue;
    std::string one = m.real->provider + ":" + m.real->model;
    if (!name.empty() && name != one) return "agent";
    name = one;
  }
  if (!name.empty()) return name;
  return options.sim ? "sim" : "scripted";
}

uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

const ModeStats* EvalReport::Mode(bool governor) const {
  for (const ModeStats& m : modes) {
    if (m.governor == governor) return &m;
  }
  return nullptr;
}

uint64_t RunSeed(uint64_t seed, const std::string& scenario_id, int run) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a of the id
  for (unsigned char c : scenario_id) h = (h ^ c) * 1099511628211ULL;
  return Mix(Mix(seed) ^ h ^ Mix(static_cast<uint64_t>(run)));
}

EvalReport RunEval(const std::vector<Scenario>& scenarios, const EvalOptions& options) {
  EvalReport report;
  std::vector<ScenarioModel> models;
  for (const Scenario& s : scenarios) models.push_back(PrepareModel(s, options));
  report.model = ModelName(options, models);
  report.seed = options.seed;
  report.runs = options.runs;
  report.threads = WorkerCount(options.threads);

  struct Job {
    size_t scenario;
    int run;
    bool governor;
    bool scripted = false;  // the scripted baseline of a sim eval (recovery hints)
  };
  std::vector<Job> jobs;
  for (bool governor : options.governors) {
    for (size_t s = 0; s < scenarios.size(); ++s) {
      for (int r = 0; r < options.runs; ++r) jobs.push_back({s, r, governor});
    }
  }
  // Under the sim, each scenario with a scripted model also runs once as written, governed:
  // what its agent could reach, for the recovery hints.
  const bool hints = options.sim && std::count(options.governors.begin(), options.governors.end(), true) > 0;
  for (size_t s = 0; hints && s < scenarios.size(); ++s) {
    if (scenarios[s].model.is_object() && scenarios[s].model.value("provider", "scripted") == "scripted") {
      jobs.push_back({s, 0, true, true});
    }
  }
  std::vector<RunSummary> results(jobs.size());
  std::vector<std::atomic<int>> first_failed(scenarios.size() * 2);
  for (std::atomic<int>& f : first_failed) f = INT_MAX;
  auto started = std::chrono::steady_clock::now();
  ParallelFor(
      jobs.size(), report.threads,
      [&](size_t i) {
        const Job& job = jobs[i];
        const Scenario& scenario = scenarios[job.scenario];
        const ScenarioModel& model = models[job.scenario];
        if (options.budget && options.budget->Spent()) {
          results[i].not_run = true;
          return;
        }
        if (!model.error.empty()) {
          results[i].failure = "error: " + model.error;
          return;
        }
        RunOptions run_options;
        run_options.governor = job.governor;
        run_options.real_model = model.real;
        run_options.cassette = model.cassette;
        run_options.budget = options.budget;
        run_options.run = job.run + 1;
        if (options.sim && !job.scripted) {
          run_options.sim = {{"seed", RunSeed(options.seed, scenario.id, job.run)}};
          if (!options.sim_faults.is_null()) run_options.sim["faults"] = options.sim_faults;
        }
        ScenarioRun run = RunScenario(scenario, run_options);
        results[i] = Summarise(run);
        if (job.scripted) return;  // the baseline is only counted
        // Keep the transcript of a failed run only while it may be the first failure of
        // its scenario and setting: the report shows that one, memory stays small.
        std::atomic<int>& first = first_failed[job.scenario * 2 + job.governor];
        int seen = first.load();
        while (!run.Passed() && job.run < seen && !first.compare_exchange_weak(seen, job.run)) {
        }
        if (!run.Passed() && job.run <= first.load()) results[i].transcript = RunTranscript(run);
      },
      options.on_progress);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (options.budget) {
    if (std::string why = options.budget->Why(); !why.empty()) report.stopped = "budget spent: " + why;
  }
  for (const ScenarioModel& m : models) {
    if (m.cassette && m.cassette->mode() == Cassette::Mode::kRecord) {
      if (Status saved = m.cassette->Save(); !saved.ok()) report.problems.push_back(saved.message());
    }
  }

  for (const Scenario& s : scenarios) {
    if (!options.sim) continue;
    Result<SimOptions> sim = SimOptionsFromJson(s.model);
    SimFaults faults = sim.ok() ? sim->faults : SimFaults::Defaults();
    if (!options.sim_faults.is_null()) {
      if (Result<SimFaults> over = SimFaults::FromJson(options.sim_faults, faults); over.ok()) faults = *over;
    }
    report.assumed_faults[s.id] = faults.ToJson();
  }
  for (bool governor : options.governors) {
    ModeStats mode;
    mode.governor = governor;
    for (const Scenario& s : scenarios) {
      ScenarioStats st;
      st.id = s.id;
      st.title = s.title;
      st.file = s.file;
      st.tags = s.tags;
      mode.scenarios.push_back(std::move(st));
    }
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (jobs[i].governor != governor || jobs[i].scripted) continue;
      const RunSummary& r = results[i];
      ScenarioStats& st = mode.scenarios[jobs[i].scenario];
      if (r.not_run) {
        ++st.not_run;
        ++mode.not_run;
        continue;
      }
      st.usage.Add(r.usage);
      mode.usage.Add(r.usage);
      st.turn_ms.insert(st.turn_ms.end(), r.turn_ms.begin(), r.turn_ms.end());
      mode.turn_ms.insert(mode.turn_ms.end(), r.turn_ms.begin(), r.turn_ms.end());
      ++mode.runs;
      ++st.runs;
      if (r.passed) {
        ++mode.passed;
        ++st.passed;
      } else if (st.first_failure.empty()) {
        st.first_failure = "run " + std::to_string(jobs[i].run + 1) + ": " + r.failure;
        st.failed_run = r.transcript;
        if (st.failed_run.is_object()) st.failed_run["run"] = jobs[i].run + 1;
        const Scenario& s = scenarios[jobs[i].scenario];
        st.reproduce = "reins run " + s.file;
        if (options.sim) st.reproduce += " --model sim --seed " + std::to_string(RunSeed(options.seed, s.id, jobs[i].run));
        if (options.sim && !options.faults_flag.empty()) st.reproduce += " --faults " + options.faults_flag;
        // A real model's run is replayed exactly from its cassette; without one it can
        // only be asked again.
        const std::string& cassettes = !options.replay.empty() ? options.replay : options.record;
        if (models[jobs[i].scenario].real && !cassettes.empty()) {
          st.reproduce += " --replay " + cassettes + " --run " + std::to_string(jobs[i].run + 1);
        } else if (const auto& real = models[jobs[i].scenario].real) {
          st.reproduce += " --model " + real->provider + ":" + real->model;
        }
        if (!governor) st.reproduce += " --governor off";
      }
      for (const auto& [dimension, passed] : r.dimensions) {
        mode.dimensions[dimension].first += passed;
        ++mode.dimensions[dimension].second;
      }
      for (const std::string& tag : r.critical) ++mode.critical[tag];
      st.critical_failures += static_cast<int>(r.critical.size());
      for (const InvariantViolation& v : r.violations) {
        ++mode.violations[v.id];
        if (mode.violation_examples.size() < 20) {
          mode.violation_examples.push_back(st.id + " run " + std::to_string(jobs[i].run + 1) + " turn " +
                                            std::to_string(v.turn) + ": " + v.id + " " + v.message);
        }
      }
      for (const Harm& h : r.harms) {
        if (++mode.harms[h.kind] <= 5) {  // the first few of each kind, so a rare one shows too
          mode.harm_examples.push_back(st.id + " run " + std::to_string(jobs[i].run + 1) + " turn " +
                                       std::to_string(h.turn) + ": " + h.kind + ": " + h.detail);
        }
      }
      st.harms += static_cast<int>(r.harms.size());
      mode.runs_with_harm += !r.harms.empty();
      for (const auto& [harm, tally] : r.detectors) mode.detectors[harm].Add(tally);
      mode.recovery.Add(r.recovery);
      for (const auto& [fault, tally] : r.faults) {
        mode.faults[fault].opportunities += tally.opportunities;
        mode.faults[fault].fired += tally.fired;
      }
    }
    mode.seconds = report.seconds * (static_cast<double>(mode.runs) / std::max<size_t>(1, jobs.size()));
    report.modes.push_back(std::move(mode));
  }
  if (hints) {
    std::map<std::string, AgentEvidence> agents;  // by agent file
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (!jobs[i].governor) continue;
      const Scenario& s = scenarios[jobs[i].scenario];
      const RunSummary& r = results[i];
      if (r.not_run) continue;
      const std::string file = std::filesystem::path(s.agent.source_file).lexically_normal().string();
      AgentEvidence& e = agents[file];
      e.agent = &s.agent;
      e.file = file;
      if (jobs[i].scripted) {
        ++e.scripted_runs;
        e.scripted_passed += r.passed;
        continue;
      }
      ++e.runs;
      e.passed += r.passed;
      for (const Harm& h : r.harms) ++e.harms[h.kind][h.tool];
      for (const auto& [tool, n] : r.not_called) e.not_called[tool] += n;
    }
    std::vector<AgentEvidence> list;
    for (auto& [file, e] : agents) list.push_back(std::move(e));
    report.recovery = RecoveryHints(list);
  }
  return report;
}

}  // namespace reins
