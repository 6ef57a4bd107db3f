// reins: the command-line front of the runtime.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"reins - governs the tool-calling loop of LLM agents with deterministic code"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "reins 0.1.0");

  std::vector<std::string> check_files;
  auto* check = app.add_subcommand("check", "Validate agent or scenario files; every problem as file:line:col: message");
  check->add_option("files", check_files, "agent or scenario YAML files")->required()->check(CLI::ExistingFile);
  bool check_pin = false;
  check->add_flag("--pin", check_pin,
                  "start each agent's MCP servers and pin their tools in AGENT.mcp-lock.json beside it: a tool that "
                  "later lists another description, schema, annotations or title is withheld from the model");

  std::string run_file;
  reins::RunFlags run_flags;
  auto* run = app.add_subcommand("run", "Run one scenario: conversation, tool events, every check; exit 0 if all pass");
  run->add_option("file", run_file, "scenario YAML file")->required()->check(CLI::ExistingFile);
  run->add_flag("--json", run_flags.json, "print the machine-readable result");
  run->add_flag("--trace", run_flags.trace, "print the full event trace of each turn");
  run->add_option("--store", run_flags.store, "where to keep the session: sqlite:PATH, sqlite::memory: or postgres://USER@HOST:PORT/DB")
      ->capture_default_str();
  run->add_option("--model", run_flags.model,
                  "scripted (the scenario's own), sim (fault-injecting), agent (the agent's real model) or "
                  "openai:MODEL / anthropic:MODEL");
  run->add_option("--base-url", run_flags.base_url, "with a real --model: the provider's address (an OpenAI-compatible server)");
  run->add_option("--replay", run_flags.replay, "answer the model from the cassettes eval --record kept in this folder")
      ->check(CLI::ExistingDirectory);
  run->add_option("--record", run_flags.record, "keep the real model's exchanges as a cassette in this folder");
  run->add_option("--run", run_flags.run, "with --replay: which recorded run to replay (eval numbers them from 1)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  run->add_option("--seed", run_flags.seed, "the simulated model's seed")->capture_default_str();
  run->add_option("--faults", run_flags.faults, "with --model sim: fault rates name=rate,... or none (as eval takes them)");
  run->add_option("--governor", run_flags.governor, "off: the naive loop (no stop, gate, deferral, checks or rails)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();

  reins::EvalFlags eval_flags;
  auto* eval = app.add_subcommand("eval", "Run every scenario under the given paths, many times, governed and naive; "
                                          "ends with 'N passed, N failed'");
  eval->add_option("paths", eval_flags.paths, "scenario files or folders")->required()->check(CLI::ExistingPath);
  eval->add_option("--model", eval_flags.model,
                   "scripted (the scenarios' own), sim (fault-injecting), agent (each agent's real model) or "
                   "openai:MODEL / anthropic:MODEL (keys from OPENAI_API_KEY / ANTHROPIC_API_KEY)")
      ->capture_default_str();
  eval->add_option("--base-url", eval_flags.base_url, "with a real --model: the provider's address (an OpenAI-compatible server)");
  eval->add_option("--record", eval_flags.record, "keep every real model exchange, one cassette file per scenario in this folder");
  eval->add_option("--replay", eval_flags.replay, "answer every model call from the cassettes in this folder, offline")
      ->check(CLI::ExistingDirectory);
  eval->add_option("--prices", eval_flags.prices,
                   "YAML or JSON: \"provider:model\" or model -> {input_per_mtok, output_per_mtok} in USD, over model.pricing")
      ->check(CLI::ExistingFile);
  eval->add_option("--max-tokens", eval_flags.max_tokens, "stop starting runs once the real model used this many tokens")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  eval->add_option("--max-cost", eval_flags.max_cost, "stop starting runs once the real model cost this many USD (needs prices)")
      ->check(CLI::Range(0.0, 1e9));
  eval->add_option("--runs", eval_flags.runs, "runs per scenario and governor setting")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  eval->add_option("--seed", eval_flags.seed, "seed of the simulated model's runs")->capture_default_str();
  eval->add_option("--governor", eval_flags.governor, "on, off (the naive loop) or both; default both with --model sim")
      ->check(CLI::IsMember({"on", "off", "both"}));
  eval->add_option("--faults", eval_flags.faults, "sim fault rates for every scenario: name=rate,... or none");
  eval->add_option("--report", eval_flags.report, "write report.json, report.html and junit.xml into this folder");
  eval->add_option("--compare", eval_flags.compare, "an earlier report.json: print what changed")->check(CLI::ExistingFile);
  eval->add_option("--min-pass", eval_flags.min_pass,
                   "a gate: exit 1 when the governed pass rate is below this (0..1); without a gate any failed run exits 1")
      ->check(CLI::Range(0.0, 1.0));
  eval->add_option("--min-dimension", eval_flags.min_dimension,
                   "gates: NAME=RATE,... exit 1 when a dimension's average of the governed runs is below its rate");
  eval->add_option("--max-critical", eval_flags.max_critical,
                   "gates: TAG=N,... exit 1 when the governed runs fail more than N checks tagged critical: TAG");
  eval->add_option("--max-harm", eval_flags.max_harm,
                   "a gate: N, or HARM=N,... exit 1 when the governed runs do more than N harms (of that kind)");
  eval->add_option("--jobs,--concurrency", eval_flags.jobs,
                   "runs at once, so real model calls at once (default: one per core)")
      ->check(CLI::Range(0, 256));
  eval->add_flag("--json", eval_flags.json, "print the report as JSON");

  reins::FuzzFlags fuzz_flags;
  auto* fuzz = app.add_subcommand("fuzz", "Random faults and speaker interleavings against the scenarios; reports "
                                          "invariant violations with shrunk reproducing files");
  fuzz->add_option("paths", fuzz_flags.paths, "scenario files or folders")->required()->check(CLI::ExistingPath);
  fuzz->add_option("--runs", fuzz_flags.runs, "how many runs")->check(CLI::Range(1, 10000000))->capture_default_str();
  fuzz->add_option("--seed", fuzz_flags.seed, "seed; the same seed gives the same runs")->capture_default_str();
  fuzz->add_option("--governor", fuzz_flags.governor, "off: fuzz the naive loop (shows the checks have teeth)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  fuzz->add_option("--out", fuzz_flags.out, "folder for the reproducing scenario files")->capture_default_str();
  fuzz->add_option("--max-repros", fuzz_flags.max_repros, "distinct findings to shrink and write")->capture_default_str();
  fuzz->add_option("--jobs", fuzz_flags.jobs, "worker threads (default: one per core)")->check(CLI::Range(0, 256));

  reins::InjectionBenchFlags injection_flags;
  auto* injection = app.add_subcommand("injection-bench", "The prompt-injection benchmark (AgentDojo's shape): every "
                                                          "user task x injection task of the suites, naive and governed");
  injection->add_option("paths", injection_flags.paths, "suite files or folders")->required()->check(CLI::ExistingPath);
  injection->add_option("--json", injection_flags.json, "write the summary and every case's outcome to this file");
  injection->add_flag("--gate", injection_flags.gate, "exit 1 unless the quality bar holds (docs/security.md)");
  injection->add_option("--show", injection_flags.show, "run one case (SUITE/USER_TASK[/INJECTION_TASK]) and print it");
  injection->add_option("--mode", injection_flags.mode, "the mode --show runs")
      ->check(CLI::IsMember({"naive", "reins_off", "approve", "refuse"}))
      ->capture_default_str();
  injection->add_option("--jobs", injection_flags.jobs, "worker threads (default: one per core)")->check(CLI::Range(0, 256));
  injection->add_option("--only", injection_flags.modes, "run every case in these modes only, and print just how many ran "
                                                         "(for a profiler: the tables need all four)")
      ->check(CLI::IsMember({"naive", "reins_off", "approve", "refuse"}))
      ->delimiter(',');

  reins::TraceFlags trace_flags;
  auto* trace = app.add_subcommand("trace", "Print a stored session (or list the sessions of a store); --check it against the invariants");
  auto* trace_store = trace->add_option("--store", trace_flags.store, "sqlite:PATH or postgres://USER@HOST:PORT/DB");
  trace->add_option("--session", trace_flags.session, "session id; omit to list sessions");
  trace->add_flag("--json", trace_flags.json, "print the stored turns and their events as JSON");
  trace->add_flag("--events", trace_flags.events, "print every trace event under each turn's timeline");
  trace->add_option("--check", trace_flags.check,
                    "AGENT.yaml: check the session against every invariant and harm detector, as a scenario run is; "
                    "exit 1 on a violation")
      ->check(CLI::ExistingFile);
  auto* trace_file = trace->add_option("--file", trace_flags.file, "a session as trace --json printed it, instead of --store")
                         ->check(CLI::ExistingFile);
  trace_store->excludes(trace_file);
  trace_file->needs("--check");

  std::string migrate_store, migrate_from, migrate_to;
  auto* migrate = app.add_subcommand("migrate", "Bring a store's schema up to date (serve does it at start, under a lock "
                                                "that replicas share), or copy a SQLite store's sessions into PostgreSQL");
  auto* migrate_store_opt =
      migrate->add_option("--store", migrate_store, "sqlite:PATH or postgres://USER@HOST:PORT/DB: bring its schema up to date");
  auto* migrate_from_opt = migrate->add_option("--from", migrate_from, "sqlite:PATH: the store to copy (stop what serves it first)");
  auto* migrate_to_opt = migrate->add_option("--to", migrate_to, "postgres://USER@HOST:PORT/DB: an empty database to copy into");
  migrate_from_opt->needs(migrate_to_opt)->excludes(migrate_store_opt);
  migrate_to_opt->needs(migrate_from_opt)->excludes(migrate_store_opt);
  migrate->require_option(1, 2);

  std::string demo_dir = "examples";
  auto* demo = app.add_subcommand("demo", "A guided run of one scenario per example, then the before/after table "
                                          "(no API key, no network)");
  demo->add_option("dir", demo_dir, "example folder")->capture_default_str();

  reins::ChatFlags chat_flags;
  auto* chat = app.add_subcommand("chat", "Talk to the configured model in the terminal, every turn governed by reins");
  chat->add_option("--config", chat_flags.config, "agent YAML file")->required()->check(CLI::ExistingFile);
  chat->add_option("--provider", chat_flags.provider, "override the model provider")->check(CLI::IsMember({"openai", "anthropic"}));
  chat->add_option("--model", chat_flags.model, "override the model name");
  chat->add_option("--base-url", chat_flags.base_url, "an OpenAI-compatible server (vLLM, llama.cpp, Ollama...)");
  chat->add_option("--as", chat_flags.speaker, "who speaks first")->capture_default_str();
  chat->add_option("--store", chat_flags.store, "sqlite:PATH or postgres://... to keep the session (default: the config's store)");

  reins::ServeFlags serve_flags;
  auto* serve = app.add_subcommand("serve", "Serve the HTTP API (sessions, turns, SSE, metrics) for one agent");
  serve->add_option("--config", serve_flags.config, "agent YAML file")->required()->check(CLI::ExistingFile);
  serve->add_option("--listen", serve_flags.listen, "HOST:PORT (port 0 picks a free one)")->capture_default_str();
  serve->add_option("--store", serve_flags.store, "sqlite:PATH, sqlite::memory: or postgres://USER@HOST:PORT/DB (default: the config's store); replicas share one PostgreSQL database");
  serve->add_option("--keys", serve_flags.keys, "keys file (reins keys add); without it: loopback only, no auth");
  serve->add_option("--threads", serve_flags.threads, "event loops, one a thread (default 0: one per core): each connection's turns run on its loop, so sessions run in parallel")->check(CLI::Range(0, 256));
  serve->add_option("--shutdown-timeout-ms", serve_flags.shutdown_timeout_ms, "how long in-flight requests may finish")
      ->capture_default_str();
  serve->add_option("--heartbeat-ms", serve_flags.heartbeat_ms, "SSE heartbeat interval")->capture_default_str();
  serve->add_option("--rate", serve_flags.rate, "requests per second per API key")->capture_default_str();
  serve->add_option("--burst", serve_flags.burst, "requests a key may send at once")->capture_default_str();
  serve->add_option("--max-body-bytes", serve_flags.max_body_bytes, "larger request bodies get 413")->capture_default_str();
  serve->add_option("--allow-origin", serve_flags.allow_origins,
                    "a browser origin whose pages may call (https://app.example.com; repeat for more); other origins get 403");
  serve->add_option("--allow-host", serve_flags.allow_hosts,
                    "without --keys: a Host name answered besides localhost, 127.0.0.1 and [::1] (repeat for more)");
  serve->add_option("--max-connections", serve_flags.max_connections, "open connections; one more gets 503")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  serve->add_option("--max-inflight", serve_flags.max_inflight, "turns running at once; one more gets 503 with Retry-After")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  serve->add_option("--max-trace-reads", serve_flags.max_trace_reads,
                    "trace, timeline and session-list reads at once per tenant; one more gets 429 with Retry-After")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  serve->add_option("--session-cache", serve_flags.session_cache,
                    "sessions kept in memory between turns (least recently used evicted; the store keeps all)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000000));

  std::string keys_file = "keys.yaml", keys_tenant;
  std::vector<std::string> keys_speakers, keys_roles;
  auto* keys = app.add_subcommand("keys", "Manage API keys for reins serve");
  keys->require_subcommand(1);
  auto* keys_add = keys->add_subcommand("add", "Create a key for TENANT; prints it once, stores only its hash");
  keys_add->add_option("tenant", keys_tenant, "tenant name ([A-Za-z0-9_-], up to 64)")->required();
  keys_add->add_option("--keys", keys_file, "keys file")->capture_default_str();
  keys_add->add_option("--speaker", keys_speakers,
                       "a speaker this key may speak as (repeat for more); without it: any speaker")
      ->take_first();
  keys_add->add_option("--role", keys_roles, "a role this key acts in, for approvers written role:NAME (repeat for more)")
      ->take_first();

  CLI11_PARSE(app, argc, argv);

  if (*check) return reins::CheckCommand(check_files, check_pin);
  if (*run) return reins::RunCommand(run_file, run_flags);
  if (*eval) return reins::EvalCommand(eval_flags);
  if (*fuzz) return reins::FuzzCommand(fuzz_flags);
  if (*injection) return reins::InjectionBenchCommand(injection_flags);
  if (*trace) {
    if (trace_flags.store.empty() && trace_flags.file.empty()) {
      std::cerr << "trace needs --store (or --file with --check)\n";
      return 2;
    }
    return reins::TraceCommand(trace_flags);
  }
  if (*migrate) {
    return migrate_store.empty() ? reins::MigrateCopyCommand(migrate_from, migrate_to) : reins::MigrateCommand(migrate_store);
  }
  if (*demo) return reins::DemoCommand(demo_dir);
  if (*chat) return reins::ChatCommand(chat_flags);
  if (*serve) return reins::ServeCommand(serve_flags);
  if (*keys_add) return reins::KeysAddCommand(keys_file, keys_tenant, keys_speakers, keys_roles);
  return 2;
}
