// The runtime's own cost of one two-round turn: the model proposes a call, the tool
// returns, the model answers. Scripted model, fixture tool, in-memory SQLite store, so
// what is measured is reins itself: guards, executor, trace, history, commit.
//
//   make bench    (Release build; prints time and allocations per turn)
//   reins_bench --turns=N   N turns and nothing else (callgrind instruction counts)
//   reins_bench --outside-turns=N | --outside-off-turns=N   the same for a turn that reads
//                           outside data, with untrusted_data on | off
//   reins_bench --file-turns=N | --file-write-turns=N   the same on a SQLite file store,
//                           its call a read | a write (the write-ahead record's cost)
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <string_view>

#include <benchmark/benchmark.h>
#include <unistd.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "config/agent_config_loader.h"
#include "model/scripted_model.h"
#include "reins/runtime.h"
#include "tools/fixture_backend.h"

namespace {

std::atomic<uint64_t> g_allocations{0};

}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace reins {
namespace {

constexpr const char* kAgent = R"(name: bench
system_prompt: You help people find the service times.
model: { provider: scripted }
tools:
  - name: get_service_times
    description: Returns this week's service times.
    annotations: { readOnlyHint: true }
    input_schema:
      type: object
      properties: { day: { type: string, enum: [saturday, sunday] } }
      required: [day]
      additionalProperties: false
)";

constexpr const char* kReplies = R"([
  {"when": {"last": "user"}, "repeat": true,
   "tool_calls": [{"name": "get_service_times", "args": {"day": "sunday"}}]},
  {"when": {"last": "tool"}, "repeat": true, "text": "Sunday services are at 9:00 and 11:00."}])";

constexpr const char* kFixture = R"([{"result": {"success": true, "next_action": "continue",
  "data": {"day": "sunday", "times": ["09:00", "11:00"]}}}])";

// A store that keeps nothing: separates the pipeline's own cost from SQLite's.
class DiscardingStore final : public Store {
 public:
  Status CreateSession(const SessionRecord&) override { return {}; }
  Result<SessionRecord> LoadSession(const std::string&) override { return NotFound("discarding store"); }
  Result<std::vector<SessionRecord>> ListSessions() override { return std::vector<SessionRecord>{}; }
  Result<int64_t> CountSessions(std::optional<std::string>) override { return int64_t{0}; }
  Result<std::vector<Message>> LoadMessages(const std::string&, TurnRange) override { return std::vector<Message>{}; }
  Status CommitTurn(const TurnRecord&) override { return {}; }
  Result<std::vector<StoredTurn>> LoadTurns(const std::string&, TurnRange) override { return std::vector<StoredTurn>{}; }
  Result<std::vector<StoredInvocation>> LoadInvocations(const std::string&, TurnRange) override {
    return std::vector<StoredInvocation>{};
  }
  Result<std::optional<StoredTurn>> FindTurnByKey(const std::string&, const std::string&) override {
    return std::optional<StoredTurn>();
  }
  Status LinkConversation(const std::string&, const std::string&, const std::string&, int64_t) override { return {}; }
  Result<std::vector<std::string>> FindConversation(const std::string&, const std::string&, int) override {
    return std::vector<std::string>();
  }
  Result<bool> ClaimOutbox(const std::string&, int64_t) override { return true; }
  Status StageOutbox(const std::vector<OutboxEntry>&) override { return {}; }
  Status RecordDeferredOutcome(const DeferredOutcome&) override { return {}; }
  Result<std::vector<OutboxEntry>> UnfinishedOutbox() override { return std::vector<OutboxEntry>{}; }
  Result<std::vector<OutboxEntry>> LoadOutbox(const std::string&) override { return std::vector<OutboxEntry>{}; }
  Result<std::vector<Notice>> PendingNotices(const std::string&) override { return std::vector<Notice>{}; }
  Result<Lease> LoadLease(const std::string&) override { return Lease{}; }
  Result<int64_t> SetLease(const std::string&, const Lease&, int64_t v) override { return v + 1; }
};

// The bench agent with `extra` more tools beside the one the turn calls (each with a
// schema of its own, so the model request and the schema guard grow with them).
std::string AgentWithTools(int extra) {
  std::string yaml = kAgent;
  for (int i = 0; i < extra; ++i) {
    const std::string n = std::to_string(i);
    yaml += "  - name: lookup_" + n + "\n    description: Looks up record " + n +
            " of the parish register.\n    annotations: { readOnlyHint: true }\n    input_schema:\n      type: object\n"
            "      properties: { id: { type: string }, year: { type: integer, minimum: 1900 } }\n"
            "      required: [id]\n      additionalProperties: false\n";
  }
  return yaml;
}

// A runtime for an agent (YAML), its scripted replies and a fixture per tool, on `store`.
std::unique_ptr<Runtime> MakeRuntimeOf(const std::string& yaml, const char* replies, std::shared_ptr<Store> store,
                                       const std::map<std::string, std::string>& fixtures) {
  Diagnostics diag;
  LocatedDoc doc = ParseYaml(yaml, "bench.yaml", diag);
  AgentConfig config;
  if (!ParseAgentConfig(doc, "", ".", diag, &config)) std::abort();
  auto clock = std::make_shared<SystemClock>();
  RuntimeParts parts;
  parts.model = std::make_shared<ScriptedModel>(Json::parse(replies));
  parts.clock = clock;
  parts.store = std::move(store);
  for (const auto& [tool, fixture] : fixtures) {
    parts.tool_backends[tool] = std::make_shared<FixtureBackend>(tool, Json::parse(fixture), *clock);
  }
  parts.id_seed = 7;
  return std::move(Runtime::Create(config, parts)).value();
}

std::shared_ptr<Store> InMemorySqlite() { return std::shared_ptr<Store>(OpenStore("sqlite::memory:").value().release()); }

std::unique_ptr<Runtime> MakeRuntime(bool sqlite, int extra_tools = 0) {
  return MakeRuntimeOf(AgentWithTools(extra_tools), kReplies,
                       sqlite ? InMemorySqlite() : std::make_shared<DiscardingStore>(), {{"get_service_times", kFixture}});
}

// Runs one turn of a new session to its end on `io`; true when it completed.
bool CompletesATurn(Runtime& runtime, boost::asio::io_context& io, const std::string& session, const TurnInput& input) {
  bool ok = false;
  boost::asio::co_spawn(io, [&]() -> Task<void> {
    Result<TurnResult> r = co_await runtime.RunTurn(session, input);
    ok = r.ok() && r->status == TurnStatus::kCompleted;
  }, boost::asio::detached);
  io.run();
  io.restart();
  return ok;
}

// state.range(0): 1 = commit to an in-memory SQLite store, 0 = discard (pipeline only).
void BM_TwoRoundTurn(benchmark::State& state) {
  std::unique_ptr<Runtime> runtime = MakeRuntime(state.range(0) == 1);
  boost::asio::io_context io;
  TurnInput input;
  input.say = "What time is service on Sunday?";
  uint64_t allocations = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::string session = runtime->CreateSession().value();
    uint64_t before = g_allocations.load();
    state.ResumeTiming();
    const bool ok = CompletesATurn(*runtime, io, session, input);
    allocations += g_allocations.load() - before;
    if (!ok) state.SkipWithError("turn did not complete");
  }
  state.counters["allocs_per_turn"] =
      benchmark::Counter(static_cast<double>(allocations), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_TwoRoundTurn)->ArgName("sqlite")->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);

// How a turn's cost grows: state.range(0) earlier turns in the session (its history),
// state.range(1) tools in the agent. In-memory SQLite store; the measured turn is the
// session's next one.
void BM_TurnGrowth(benchmark::State& state) {
  const int history = static_cast<int>(state.range(0));
  std::unique_ptr<Runtime> runtime = MakeRuntime(true, static_cast<int>(state.range(1)) - 1);
  boost::asio::io_context io;
  TurnInput input;
  input.say = "What time is service on Sunday?";
  for (auto _ : state) {
    state.PauseTiming();
    std::string session = runtime->CreateSession().value();
    for (int i = 0; i < history; ++i) {
      if (!CompletesATurn(*runtime, io, session, input)) state.SkipWithError("an earlier turn did not complete");
    }
    state.ResumeTiming();
    if (!CompletesATurn(*runtime, io, session, input)) state.SkipWithError("turn did not complete");
  }
}
BENCHMARK(BM_TurnGrowth)
    ->ArgNames({"history", "tools"})
    ->Args({1, 1})->Args({10, 1})->Args({100, 1})->Args({1, 20})->Args({1, 200})
    ->Iterations(200)
    ->Unit(benchmark::kMicrosecond);

// What untrusted_data costs a turn: an agent that reads mail (outside data: about 2 KB
// with addresses, a link and an IBAN) and sends a reply the person asked for, to the
// address they gave. With the defence on (state.range(0) == 1) the mail's values go
// into the session's ledger, the reply is judged (its address is in the mail too, and
// the person's words vouch for it), and the ledger is committed with the session.
constexpr const char* kOutsideAgent = R"(name: bench-mail
system_prompt: You read the person's mail and send replies they ask for.
model: { provider: scripted }
tools:
  - name: read_mail
    description: Returns the newest e-mail.
    annotations: { readOnlyHint: true }
    trust: untrusted
    input_schema: { type: object, properties: {} }
  - name: send_reply
    description: Sends an e-mail.
    timing: immediate
    input_schema:
      type: object
      properties: { to: { type: string }, body: { type: string } }
      required: [to, body]
)";

constexpr const char* kOutsideReplies = R"([
  {"when": {"last": "user"}, "repeat": true, "tool_calls": [{"name": "read_mail", "args": {}}]},
  {"when": {"after_tool": "read_mail"}, "repeat": true,
   "tool_calls": [{"name": "send_reply", "args": {"to": "ana@example.com", "body": "I'll be there at 12:30."}}]},
  {"when": {"after_tool": "send_reply"}, "repeat": true, "text": "I told Ana you'll be there."}])";

std::string OutsideMail() {
  std::string body = "Hi! Lunch on Thursday at 12:30? Reply to ana@example.com or call +1 (555) 123-4567. ";
  for (int i = 0; i < 12; ++i) {
    body += "Minutes item " + std::to_string(i) + ": see https://intranet.example.com/notes/" + std::to_string(i) +
            " and pay GB82 WEST 1234 5698 7654 3" + std::to_string(i % 10) + " by Friday; ask ops" + std::to_string(i) +
            "@example.org. ";
  }
  return Json::array({{{"result", {{"data", {{"from", "ana@example.com"}, {"subject", "Lunch"}, {"body", body}}}}}}}).dump();
}

std::unique_ptr<Runtime> MakeOutsideRuntime(bool defence) {
  return MakeRuntimeOf(std::string(kOutsideAgent) + (defence ? "untrusted_data: {}\n" : ""), kOutsideReplies,
                       InMemorySqlite(),
                       {{"read_mail", OutsideMail()}, {"send_reply", R"([{"result": {"data": {"status": "sent"}}}])"}});
}

TurnInput OutsideRequest() {
  TurnInput input;
  input.say = "Read my mail and email ana@example.com that I'll be there at 12:30.";
  return input;
}

void BM_OutsideDataTurn(benchmark::State& state) {
  std::unique_ptr<Runtime> runtime = MakeOutsideRuntime(state.range(0) == 1);
  boost::asio::io_context io;
  const TurnInput input = OutsideRequest();
  for (auto _ : state) {
    state.PauseTiming();
    std::string session = runtime->CreateSession().value();
    state.ResumeTiming();
    if (!CompletesATurn(*runtime, io, session, input)) state.SkipWithError("turn did not complete");
  }
}
BENCHMARK(BM_OutsideDataTurn)->ArgName("untrusted_data")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// A SQLite file store's files, gone.
void RemoveStoreFiles(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}

// `count` turns of `input`, each on a new session, and nothing else (the callgrind modes
// below): 0 when every one completed.
int RunCount(Runtime& runtime, const TurnInput& input, long count) {
  boost::asio::io_context io;
  int failed = 0;
  for (long i = 0; i < count; ++i) {
    if (!CompletesATurn(runtime, io, runtime.CreateSession().value(), input)) ++failed;
  }
  return failed == 0 ? 0 : 1;
}

// `--outside-turns=N` / `--outside-off-turns=N`: N of those turns, with the defence on
// or off, and nothing else (callgrind, as --turns).
int RunOutsideTurns(long count, bool defence) {
  return RunCount(*MakeOutsideRuntime(defence), OutsideRequest(), count);
}

// What the write-ahead record costs a write (docs/deployment.md, "Every write once"):
// the same turn on a SQLite file store (WAL, as `reins serve --store sqlite:PATH`), its
// one call annotated read-only (state.range(0) == 0) or a write (1), whose intent is
// committed before it runs and whose outcome after.
std::unique_ptr<Runtime> MakeFileRuntime(bool write, const std::string& path) {
  RemoveStoreFiles(path);
  std::string yaml = AgentWithTools(0);
  const std::string read_only = "    annotations: { readOnlyHint: true }\n";
  if (write) yaml.erase(yaml.find(read_only), read_only.size());
  return MakeRuntimeOf(yaml, kReplies, std::shared_ptr<Store>(OpenStore("sqlite:" + path).value().release()),
                       {{"get_service_times", kFixture}});
}

void BM_WriteTurn(benchmark::State& state) {
  const std::string path = "/tmp/reins_bench_writes_" + std::to_string(::getpid()) + ".db";
  std::unique_ptr<Runtime> runtime = MakeFileRuntime(state.range(0) == 1, path);
  boost::asio::io_context io;
  TurnInput input;
  input.say = "What time is service on Sunday?";
  for (auto _ : state) {
    state.PauseTiming();
    std::string session = runtime->CreateSession().value();
    state.ResumeTiming();
    if (!CompletesATurn(*runtime, io, session, input)) state.SkipWithError("turn did not complete");
  }
  runtime.reset();
  RemoveStoreFiles(path);
}
BENCHMARK(BM_WriteTurn)->ArgName("write")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// `--file-turns=N` / `--file-write-turns=N`: N of those turns, the call a read or a
// write, and nothing else (callgrind, as --turns).
int RunFileTurns(long count, bool write) {
  const std::string path = "/tmp/reins_bench_writes_" + std::to_string(::getpid()) + ".db";
  std::unique_ptr<Runtime> runtime = MakeFileRuntime(write, path);
  TurnInput input;
  input.say = "What time is service on Sunday?";
  const int failed = RunCount(*runtime, input, count);
  runtime.reset();
  RemoveStoreFiles(path);
  return failed;
}

// `--turns=N`: exactly N pipeline-only turns and nothing else, for instruction counts
// that do not depend on timing (callgrind: run N and 2N, the difference over N is the
// cost of one turn without the process's fixed start-up).
int RunTurns(long count) {
  TurnInput input;
  input.say = "What time is service on Sunday?";
  return RunCount(*MakeRuntime(false), input, count);
}

}  // namespace
}  // namespace reins

int main(int argc, char** argv) {
  if (argc == 2 && std::string_view(argv[1]).starts_with("--turns=")) {
    return reins::RunTurns(std::atol(argv[1] + 8));
  }
  for (const std::string_view flag : {"--file-turns=", "--file-write-turns="}) {
    if (argc == 2 && std::string_view(argv[1]).starts_with(flag)) {
      return reins::RunFileTurns(std::atol(argv[1] + flag.size()), flag == "--file-write-turns=");
    }
  }
  for (const std::string_view flag : {"--outside-turns=", "--outside-off-turns="}) {
    if (argc == 2 && std::string_view(argv[1]).starts_with(flag)) {
      return reins::RunOutsideTurns(std::atol(argv[1] + flag.size()), flag == "--outside-turns=");
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
