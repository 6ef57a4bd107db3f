// The `reins` subcommands. Each returns the process exit code.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reins/json.h"

namespace reins {

struct AgentConfig;
class Term;

struct RunFlags {
  bool json = false;
  bool trace = false;
  std::string store = "sqlite::memory:";
  std::string model;            // "" keeps the scenario's; sim, agent or PROVIDER:MODEL (eval/eval_model.h)
  std::string base_url;         // with a real model
  std::string replay;           // a cassette folder to answer the model from
  std::string record;           // a cassette folder to keep the real model's exchanges in
  int run = 1;                  // which recorded run --replay replays
  uint64_t seed = 1;            // the sim's seed, with --model sim
  std::string governor = "on";  // off: the naive loop
  std::string faults;           // with --model sim: "name=rate,..." over the scenario's, or "none"
};

// "--faults none" or "name=rate,...": the sim's fault rates as JSON; false when malformed.
bool ParseFaults(const std::string& text, Json* out);

struct EvalFlags {
  std::vector<std::string> paths;
  std::string model = "scripted";  // scripted | sim | agent | PROVIDER:MODEL (eval/eval_model.h)
  std::string base_url;            // with a real model
  std::string record;              // cassette folders (eval/cassette.h)
  std::string replay;
  std::string prices;              // a price list file
  std::optional<int64_t> max_tokens;  // the real model's budget
  std::optional<double> max_cost;
  int runs = 1;
  uint64_t seed = 1;
  std::string governor;  // on | off | both; default: both with the sim, on otherwise
  std::string report;    // folder for report.json, report.html, junit.xml
  std::string compare;   // an older report.json
  std::string faults;    // "name=rate,..." over every scenario's, or "none"
  // A gate: exit 1 when the governed pass rate is below it. Without one, eval exits 1
  // when any judged run failed, like a test runner.
  std::optional<double> min_pass;
  std::string min_dimension;  // "hear=0.9,respond=0.8": a gate per dimension average
  std::string max_critical;   // "wrong_recipient=0": a gate per critical tag's failures
  std::string max_harm;       // "0" (all harms) or "internal_name_shown=2,...": a gate on harms
  bool json = false;
  int jobs = 0;
};

struct FuzzFlags {
  std::vector<std::string> paths;
  int runs = 1000;
  uint64_t seed = 1;
  std::string governor = "on";
  std::string out = "fuzz-out";
  int jobs = 0;
  int max_repros = 20;
};

struct ChatFlags {
  std::string config;
  std::string provider;  // overrides model.provider
  std::string model;     // overrides model.model
  std::string base_url;  // overrides model.base_url
  std::string speaker = "user";
  std::string store;  // default: the config's `store`
};

struct ServeFlags {
  std::string config;
  std::string listen = "127.0.0.1:8080";
  std::string store;  // default: the config's `store`
  std::string keys;   // keys.yaml; none: loopback only, no auth
  int threads = 0;    // event loops; 0: one per core
  int shutdown_timeout_ms = 10000;
  int heartbeat_ms = 15000;
  double rate = 20;   // requests per second per key
  double burst = 40;
  size_t max_body_bytes = 1u << 20;
  int max_connections = 20000;  // beyond it: 503 (10,000 turns in flight still fit)
  size_t session_cache = 10000;  // sessions kept in memory between turns
  int max_inflight = 10000;      // turns running at once; beyond it 503
  int max_trace_reads = 4;       // trace, timeline and session-list reads at once per tenant; beyond it 429
  std::vector<std::string> allow_origins;  // browser origins that may call
  std::vector<std::string> allow_hosts;    // without keys: Host names answered besides loopback's
};

struct InjectionBenchFlags {
  std::vector<std::string> paths;
  std::string json;                // write the summary and every case's outcome here
  bool gate = false;               // exit 1 unless the quality bar holds (docs/security.md)
  std::string show;                // run one case and print its transcript instead
  std::string mode = "approve";    // --show's mode: naive | reins_off | approve | refuse
  std::vector<std::string> modes;  // run only these (profiling; no tables, no gate)
  int jobs = 0;
};

// `pin`: also write each agent's MCP lock from its servers' tool lists (PinMcpTools).
int CheckCommand(const std::vector<std::string>& files, bool pin = false);
int PinMcpTools(const std::string& file, const AgentConfig& config, const Term& term);
// Says how many tools the agent's MCP lock pins; 1 when the lock cannot be read.
int SayMcpLock(const std::string& file, const AgentConfig& config);
int InjectionBenchCommand(const InjectionBenchFlags& flags);
int RunCommand(const std::string& file, const RunFlags& flags);
int EvalCommand(const EvalFlags& flags);
int FuzzCommand(const FuzzFlags& flags);
struct TraceFlags {
  std::string store;
  std::string session;
  bool json = false;
  bool events = false;
  std::string check;  // an agent file: check the session against the invariants and harms
  std::string file;   // with check: a session as `trace --json` printed it, instead of a store
};
int TraceCommand(const TraceFlags& flags);
int MigrateCommand(const std::string& store_url);
// reins migrate --from sqlite:PATH --to postgres://...: copies a SQLite store's sessions
// into an empty PostgreSQL database.
int MigrateCopyCommand(const std::string& from_url, const std::string& to_url);
int DemoCommand(const std::string& dir);
int ChatCommand(const ChatFlags& flags);
int ServeCommand(const ServeFlags& flags);
int KeysAddCommand(const std::string& keys_file, const std::string& tenant, const std::vector<std::string>& speakers,
                   const std::vector<std::string>& roles);

// Scenario files under `paths` (files given directly, or *.yaml found recursively
// whose top level has `turns`), sorted.
std::vector<std::string> FindScenarioFiles(const std::vector<std::string>& paths, std::string* error);

// The scenarios under `paths`, loaded; problems go to stderr. False when a file is
// invalid or none was found.
struct Scenario;
bool LoadScenarios(const std::vector<std::string>& paths, std::vector<Scenario>* out);
// Moves the scenarios whose agent needs MCP servers out of `scenarios` (many simulated
// runs would start a server each time; `reins run` runs them) and returns their ids.
std::vector<std::string> SetAsideMcpScenarios(std::vector<Scenario>& scenarios);
// Moves the scenarios `which` picks out of `scenarios` and returns them.
std::vector<Scenario> SetAside(std::vector<Scenario>& scenarios, const std::function<bool(const Scenario&)>& which);

}  // namespace reins
