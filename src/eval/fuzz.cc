#include "eval/fuzz.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <set>

#include <yaml-cpp/yaml.h>

#include "eval/eval_suite.h"
#include "eval/parallel.h"
#include "eval/scenario_runner.h"
#include "model/sim_model.h"

namespace reins {
namespace {

const char* const kOtherSpeakers[] = {"guest", "intruder"};

// One fuzz run: which scenario, which faults, which conversation.
struct Mutation {
  size_t base = 0;
  int run = 0;
  std::string mix;
  Json faults;
  uint64_t sim_seed = 0;
  struct Turn {
    int original = -1;     // index into the base scenario's turns; -1: another speaker's copy
    int copy_of = -1;      // inserted turns: the turn whose input is replayed by someone else
    std::string speaker;   // "" keeps the original speaker
  };
  std::vector<Turn> turns;
  bool interleaved = false;
};

Mutation Mutate(const std::vector<Scenario>& bases, uint64_t seed, int run) {
  std::mt19937_64 rng(RunSeed(seed, "fuzz", run));
  Mutation m;
  m.run = run;
  m.base = rng() % bases.size();
  const Scenario& s = bases[m.base];
  m.sim_seed = rng() >> 12;  // fits a YAML integer when written out
  SimFaults faults = SimFaults::Defaults();
  const std::vector<std::string>& names = SimFaults::Names();
  switch (rng() % 5) {
    case 0:
      m.mix = "defaults";
      break;
    case 1:
      m.mix = "random";
      for (const std::string& f : names) faults.rates[f] = static_cast<double>(rng() % 1001) / 1000.0;
      break;
    case 2: {
      const std::string& only = names[rng() % names.size()];
      m.mix = "only " + only;
      for (const std::string& f : names) faults.rates[f] = f == only ? 1.0 : 0.0;
      break;
    }
    case 3:
      m.mix = "hostile";
      for (const std::string& f : names) faults.rates[f] = 0.9;
      break;
    default:
      m.mix = "none";
      for (const std::string& f : names) faults.rates[f] = f == "answer_other_speaker" ? 1.0 : 0.0;
  }
  m.faults = faults.ToJson();
  for (size_t i = 0; i < s.turns.size(); ++i) m.turns.push_back({static_cast<int>(i), -1, ""});
  if (rng() % 2 == 0) {
    m.interleaved = true;
    int extra = 1 + static_cast<int>(rng() % 2);
    for (int k = 0; k < extra; ++k) {
      int copy = static_cast<int>(rng() % s.turns.size());
      size_t at = rng() % (m.turns.size() + 1);
      m.turns.insert(m.turns.begin() + static_cast<long>(at), {-1, copy, kOtherSpeakers[rng() % 2]});
    }
    if (rng() % 4 == 0) m.turns[rng() % m.turns.size()].speaker = kOtherSpeakers[rng() % 2];
  }
  return m;
}

Scenario Apply(const Scenario& base, const Mutation& m) {
  Scenario s = base;
  s.turns.clear();
  s.final_checks.clear();
  for (const Mutation::Turn& t : m.turns) {
    ScenarioTurn st = base.turns[static_cast<size_t>(t.original >= 0 ? t.original : t.copy_of)];
    st.expect.clear();
    if (t.original < 0) {
      st.model_replies = Json();
      st.advance_ms = 0;
    }
    if (!t.speaker.empty()) st.input.speaker = t.speaker;
    s.turns.push_back(std::move(st));
  }
  return s;
}

ScenarioRun RunMutation(const Scenario& base, const Mutation& m, bool governor) {
  RunOptions options;
  options.governor = governor;
  options.sim = {{"seed", m.sim_seed}, {"faults", m.faults}};
  return RunScenario(Apply(base, m), options);
}

bool HasViolation(const ScenarioRun& run, const std::string& invariant) {
  for (const InvariantViolation& v : run.violations) {
    if (v.id == invariant) return true;
  }
  return false;
}

int FaultCount(const Json& faults) {
  int n = 0;
  for (const auto& [k, v] : faults.items()) n += v.get<double>() > 0;
  return n;
}

// Fewest turns, then fewest faults, that still violate `invariant`.
Mutation Shrink(const Scenario& base, Mutation m, bool governor, const std::string& invariant) {
  for (size_t i = m.turns.size(); i-- > 0 && m.turns.size() > 1;) {
    Mutation candidate = m;
    candidate.turns.erase(candidate.turns.begin() + static_cast<long>(i));
    if (HasViolation(RunMutation(base, candidate, governor), invariant)) m = std::move(candidate);
  }
  for (const std::string& f : SimFaults::Names()) {
    if (m.faults.value(f, 0.0) == 0.0) continue;
    Mutation candidate = m;
    candidate.faults[f] = 0.0;
    if (HasViolation(RunMutation(base, candidate, governor), invariant)) m = std::move(candidate);
  }
  return m;
}

YAML::Node ToYaml(const Json& j) {
  YAML::Node n;
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) n[k] = ToYaml(v);
  } else if (j.is_array()) {
    n = YAML::Node(YAML::NodeType::Sequence);
    for (const Json& v : j) n.push_back(ToYaml(v));
  } else if (j.is_string()) {
    n = j.get<std::string>();
  } else if (j.is_boolean()) {
    n = j.get<bool>();
  } else if (j.is_number_integer()) {
    n = j.get<int64_t>();
  } else if (j.is_number()) {
    n = j.get<double>();
  }
  return n;
}

// The shrunk run as a scenario file that `reins run` replays: the base file's agent,
// fixtures and scripted replies, the sim with the run's seed and faults, the turns.
Result<std::string> WriteRepro(const Scenario& base, const Mutation& m, bool governor, const std::string& invariant,
                               const std::string& message, uint64_t fuzz_seed, const std::string& dir) {
  namespace fs = std::filesystem;
  YAML::Node root;
  try {
    root = YAML::LoadFile(base.file);
  } catch (const std::exception& e) {
    return InvalidArgument("cannot reread " + base.file + ": " + e.what());
  }
  std::string id = base.id + "-" + invariant + "-run" + std::to_string(m.run + 1);
  root["id"] = id;
  root["title"] = invariant + " found by reins fuzz in " + base.id;
  YAML::Node tags(YAML::NodeType::Sequence);
  tags.push_back("fuzz");
  tags.push_back(invariant);
  root["tags"] = tags;
  if (root["agent"] && root["agent"].IsScalar()) {
    fs::path agent = fs::path(base.file).parent_path() / root["agent"].as<std::string>();
    root["agent"] = fs::absolute(agent).lexically_normal().string();
  }
  Json model = base.model;
  model["provider"] = "sim";
  model["seed"] = m.sim_seed;
  model["faults"] = m.faults;
  root["model"] = ToYaml(model);
  YAML::Node turns(YAML::NodeType::Sequence);
  for (const Mutation::Turn& t : m.turns) {
    YAML::Node turn = YAML::Clone(root["turns"][static_cast<size_t>(t.original >= 0 ? t.original : t.copy_of)]);
    turn.remove("expect");
    if (t.original < 0) {
      turn.remove("model");
      turn.remove("advance_ms");
    }
    if (!t.speaker.empty()) turn["speaker"] = t.speaker;
    turns.push_back(turn);
  }
  root["turns"] = turns;
  root.remove("final");
  YAML::Emitter out;
  out << root;
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string path = (fs::path(dir) / (id + ".yaml")).string();
  std::ofstream file(path);
  file << "# Found by: reins fuzz --seed " << fuzz_seed << (governor ? "" : " --governor off") << " (run " << m.run + 1
       << ", fault mix: " << m.mix << ", then shrunk)\n# " << invariant << ": " << message << "\n# Reproduce: reins run " << path
       << (governor ? "" : " --governor off") << "\n"
       << out.c_str() << "\n";
  if (!file) return Unavailable("cannot write " + path);
  return path;
}

}  // namespace

FuzzReport RunFuzz(const std::vector<Scenario>& bases, const FuzzOptions& options) {
  FuzzReport report;
  report.threads = WorkerCount(options.threads);
  if (bases.empty()) return report;
  struct Outcome {
    Mutation mutation;
    std::vector<InvariantViolation> violations;
  };
  std::vector<Outcome> outcomes(static_cast<size_t>(options.runs));
  auto started = std::chrono::steady_clock::now();
  ParallelFor(
      outcomes.size(), options.threads,
      [&](size_t i) {
        Mutation m = Mutate(bases, options.seed, static_cast<int>(i));
        ScenarioRun run = RunMutation(bases[m.base], m, options.governor);
        outcomes[i] = {std::move(m), std::move(run.violations)};
      },
      options.on_progress);

  // Distinct findings: the first run of each (scenario, invariant), shrunk and written.
  std::map<std::pair<std::string, std::string>, size_t> first;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& o = outcomes[i];
    const Scenario& base = bases[o.mutation.base];
    ++report.runs;
    ++report.mixes[o.mutation.mix];
    ++report.scenarios[base.id];
    report.interleaved_runs += o.mutation.interleaved;
    if (o.violations.empty()) continue;
    ++report.violating_runs;
    std::set<std::string> seen;
    for (const InvariantViolation& v : o.violations) {
      ++report.violations;
      ++report.by_invariant[v.id];
      if (!seen.insert(v.id).second) continue;
      auto key = std::make_pair(base.id, v.id);
      if (first.count(key)) {
        ++report.findings[first[key]].occurrences;
        continue;
      }
      first[key] = report.findings.size();
      FuzzFinding f;
      f.scenario_id = base.id;
      f.invariant = v.id;
      f.run = static_cast<int>(i);
      f.occurrences = 1;
      f.message = v.message;
      report.findings.push_back(f);
    }
  }
  std::vector<size_t> to_shrink;
  for (size_t k = 0; k < report.findings.size() && static_cast<int>(k) < options.max_repros; ++k) to_shrink.push_back(k);
  ParallelFor(to_shrink.size(), options.threads, [&](size_t k) {
    FuzzFinding& f = report.findings[to_shrink[k]];
    const Outcome& o = outcomes[static_cast<size_t>(f.run)];
    const Scenario& base = bases[o.mutation.base];
    Mutation small = Shrink(base, o.mutation, options.governor, f.invariant);
    f.turns = static_cast<int>(o.mutation.turns.size());
    f.faults = FaultCount(o.mutation.faults);
    f.shrunk_turns = static_cast<int>(small.turns.size());
    f.shrunk_faults = FaultCount(small.faults);
    ScenarioRun shrunk = RunMutation(base, small, options.governor);
    for (const InvariantViolation& v : shrunk.violations) {
      if (v.id == f.invariant) {
        f.message = "turn " + std::to_string(v.turn) + ": " + v.message;
        break;
      }
    }
    Result<std::string> path = WriteRepro(base, small, options.governor, f.invariant, f.message, options.seed, options.out_dir);
    if (path.ok()) f.repro_file = *path;
  });
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace reins
