// reins_peer_job: the peer job (bench/peer_job/README.md) run by reins, embedded and
// served, by a bare Node loop of our own and by a hand-written C++ loop without
// governance (the machine's floor), against the same mock, in one run. Each
// measurement runs in a fresh process and prints one JSON line; `--table` prints the
// figures side by side with their ratios (what `make bench-peers` shows).
//
//   reins_peer_job [--table] [--only cpu,tput,mem,scale,crash,growth] [--node PATH|none] [--turns N] [--reps N]
//                  [--serve-arg FLAG ...] [--load-threads K] [--tput-width W] [--tput-turns N]
//
// The tput run's client and mock are one thread each unless --load-threads K gives each
// K threads (on a machine of many cores, where one thread of each would bound the
// server); --tput-width and --tput-turns change its 64 turns in flight and 3,000 measured
// turns (reins' run only; the Node loop keeps its own).
//
// `growth` (not in the default set: about six minutes with the Node loop) measures how a
// turn's cost grows with the session's earlier turns and the agent's tools, embedded and
// by the Node loop.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/open_files.h"
#include "peer_job/child_process.h"
#include "peer_job/job_client.h"
#include "peer_job/peer_job.h"

namespace reins::peer_job {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr int kTputWarm = 500;
constexpr int kTputTurns = 3000;
constexpr int kTputWidth = 64;
constexpr int kMemTurns = 1000;
constexpr int kScaleTurns = 10000;
constexpr int kScaleArrivalMs = 5000;
constexpr int kSlowModelMs = 2000;
constexpr int kGrowthSamples = 100;  // measured turns in each cell of the growth grid
constexpr int kGrowthHistory[] = {0, 1, 10, 100};
constexpr int kGrowthTools[] = {1, 20, 200};

struct Options {
  std::vector<std::string> only = {"cpu", "tput", "mem", "scale", "crash"};  // "growth" when asked for
  std::string node = REINS_BARE_LOOP;
  int turns = 2000;
  int reps = 1;  // every measurement this many times, interleaved; the table shows medians
  std::vector<std::string> serve_args;  // more flags for `reins serve` (--serve-arg, repeatable)
  int load_threads = 1;  // the tput run's client threads and mock threads (--load-threads)
  int tput_width = kTputWidth;  // the tput run's turns in flight (--tput-width)
  int tput_turns = kTputTurns;  // the tput run's measured turns (--tput-turns)
  bool table = false;
  bool Wants(const std::string& mode) const { return std::find(only.begin(), only.end(), mode) != only.end(); }
};

// The words of REINS_PEER_JOB_SERVE_WRAP, put in front of `reins serve` (a profiler:
// `valgrind --tool=callgrind`); none when unset.
std::vector<std::string> ServeWrapper() {
  std::vector<std::string> words;
  const char* wrap = std::getenv("REINS_PEER_JOB_SERVE_WRAP");
  std::istringstream in(wrap ? wrap : "");
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The command line of a fresh `reins serve` over the job's agent and a SQLite file store,
// on one event loop unless --serve-arg says otherwise: the bare Node loop is one thread,
// and every round since the first measured one (docs/PERFORMANCE.md).
std::vector<std::string> ServeArgv(const Options& o, const std::string& dir) {
  std::vector<std::string> argv = ServeWrapper();
  argv.insert(argv.end(), {REINS_BINARY, "serve", "--config", REINS_JOB_AGENT, "--store", "sqlite:" + dir + "/reins.db",
                                   "--listen", "127.0.0.1:0", "--rate", "1000000000", "--burst", "1000000000"});
  if (std::find(o.serve_args.begin(), o.serve_args.end(), "--threads") == o.serve_args.end()) {
    argv.insert(argv.end(), {"--threads", "1"});
  }
  argv.insert(argv.end(), o.serve_args.begin(), o.serve_args.end());
  return argv;
}

struct Server {
  Server(const Options& o, const Mock& mock, const std::string& dir)
      : process(ServeArgv(o, dir), {{"REINS_JOB_MOCK", mock.url() + "/v1"}}, "http://127.0.0.1:", dir + "/serve.log"),
        log(dir + "/serve.log") {}
  std::string url() const { return "http://127.0.0.1:" + std::to_string(process.port()); }
  // Why the server did not start (its log), or "" when it listens.
  std::string NotStarted() const {
    if (process.port() != 0) return "";
    std::ifstream in(log);
    return "reins serve did not start: " + std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ChildProcess process;
  std::string log;
};

// A run counts only if the model saw exactly 2 requests per turn (the replies are
// checked turn by turn where they arrive).
Json Checked(Json result, double requests, int turns) {
  result["model_requests_per_turn"] = requests / turns;
  if (requests != 2.0 * turns && !result.contains("error")) {
    result["error"] = "the mock saw " + std::to_string(requests / turns) + " requests per turn, not 2";
  }
  return result;
}

// The memory a batch of turns parked on the slow model holds in process `pid`: its RSS
// before the batch, the peak while `batch` runs (sampled every 10 ms), and the difference
// per turn, added to `result`. The model is fast again afterwards.
Json WhileParked(Json result, int pid, Mock& mock, const std::function<bool()>& batch) {
  const long baseline = StatusKiB(pid, "VmRSS:");
  mock.SetDelay(kSlowModelMs);
  RssSampler sampler(pid);
  const bool ok = batch();
  const long peak = sampler.Stop();
  mock.SetDelay(0);
  if (!ok) return result;
  result["baseline_mib"] = baseline / 1024.0;
  result["peak_mib"] = peak / 1024.0;
  result["kib_per_turn"] = static_cast<double>(peak - baseline) / kMemTurns;
  return result;
}

// `created_first`: the client creates each session with a request of its own first.
Json ServedCpuOf(const Options& o, Mock& mock, const std::string& dir, bool created_first) {
  Server server(o, mock, dir);
  if (std::string why = server.NotStarted(); !why.empty()) return Json{{"error", why}};
  JobClient client(server.url(), created_first);
  if (!client.RunSequential(kWarmTurns)) return Json{{"error", client.error()}};
  const Json before = mock.Stats();
  const CpuUse cpu0 = server.process.Cpu();
  if (!client.RunSequential(o.turns)) return Json{{"error", client.error()}};
  const CpuUse cpu = server.process.Cpu() - cpu0;
  return Checked(Json{{"runtime", "reins served"}, {"mode", "cpu"}, {"turns", o.turns},
                      {"cpu_us_per_turn", cpu.total() * 1e6 / o.turns}, {"kernel_us_per_turn", cpu.system * 1e6 / o.turns}},
                 mock.RequestsSince(before), o.turns);
}
Json ServedCpu(const Options& o, Mock& mock, const std::string& dir) { return ServedCpuOf(o, mock, dir, false); }
Json ServedCreateFirstCpu(const Options& o, Mock& mock, const std::string& dir) {
  return ServedCpuOf(o, mock, dir, true);
}

Json ServedTput(const Options& o, Mock& mock, const std::string& dir) {
  Server server(o, mock, dir);
  if (std::string why = server.NotStarted(); !why.empty()) return Json{{"error", why}};
  JobClient client(server.url());
  if (!client.RunConcurrent(kTputWarm, o.tput_width, o.load_threads)) return Json{{"error", client.error()}};
  const Json before = mock.Stats();
  const double cpu0 = server.process.Cpu().total();
  const double client0 = OwnCpuSeconds();
  const auto start = SteadyClock::now();
  if (!client.RunConcurrent(o.tput_turns, o.tput_width, o.load_threads)) return Json{{"error", client.error()}};
  const double wall = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const double cpu = server.process.Cpu().total() - cpu0;
  const double client_cpu = OwnCpuSeconds() - client0;
  // The client and the mock share the two cores with the server: their CPU bounds turns/s too.
  const Json after = mock.Stats();
  const double mock_us = static_cast<double>(after.value("cpuUserUs", 0L) + after.value("cpuSystemUs", 0L) -
                                             before.value("cpuUserUs", 0L) - before.value("cpuSystemUs", 0L));
  const int turns = o.tput_turns;
  return Checked(Json{{"runtime", "reins served"}, {"mode", "tput"}, {"turns", turns}, {"turns_per_s", turns / wall},
                      {"cpu_us_per_turn", cpu * 1e6 / turns}, {"client_cpu_us_per_turn", client_cpu * 1e6 / turns},
                      {"mock_cpu_us_per_turn", mock_us / turns}, {"load_threads", o.load_threads}, {"width", o.tput_width}},
                 mock.RequestsSince(before), turns);
}

Json ServedMem(const Options& o, Mock& mock, const std::string& dir) {
  const Json before = mock.Stats();
  Server server(o, mock, dir);
  if (std::string why = server.NotStarted(); !why.empty()) return Json{{"error", why}};
  JobClient client(server.url());
  if (!client.RunSequential(kWarmTurns)) return Json{{"error", client.error()}};
  Json result = WhileParked(Json{{"runtime", "reins served"}, {"mode", "mem"}, {"turns", kMemTurns}},
                            server.process.pid(), mock, [&] { return client.RunConcurrent(kMemTurns, kMemTurns); });
  if (!client.error().empty()) return Json{{"error", client.error()}};
  return Checked(result, mock.RequestsSince(before), kWarmTurns + kMemTurns);
}

// The value below which a fraction `p` of `values` lies (1.0: the largest); sorts them.
double Percentile(std::vector<double>& values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

Json ServedScale(const Options& o, Mock& mock, const std::string& dir) {
  const Json before = mock.Stats();
  Server server(o, mock, dir);
  if (std::string why = server.NotStarted(); !why.empty()) return Json{{"error", why}};
  JobClient client(server.url());
  if (!client.RunSequential(kWarmTurns)) return Json{{"error", client.error()}};
  mock.SetDelay(kSlowModelMs);
  std::vector<JobClient::Paced> turns;
  const bool ok = client.RunPaced(kScaleTurns, kScaleArrivalMs, &turns);
  mock.SetDelay(0);
  if (!ok) return Json{{"error", client.error()}};
  // What reins adds to the model's own time, over all turns and by the second in which
  // they arrived (where a queue forms: docs/PERFORMANCE.md, round 8).
  if (const char* dump = std::getenv("REINS_PEER_JOB_SCALE_DUMP")) {  // each turn: arrival, added ms
    std::ofstream out(dump);
    for (const JobClient::Paced& t : turns) out << t.started_ms << ' ' << t.took_ms - 2 * kSlowModelMs << '\n';
  }
  std::vector<double> added;
  std::vector<std::vector<double>> added_by_second(kScaleArrivalMs / 1000);
  for (const JobClient::Paced& t : turns) {
    added.push_back(t.took_ms - 2 * kSlowModelMs);
    const size_t second = std::min(added_by_second.size() - 1, static_cast<size_t>(t.started_ms / 1000));
    added_by_second[second].push_back(added.back());
  }
  Json p99_by_second = Json::array();
  for (std::vector<double>& those : added_by_second) p99_by_second.push_back(those.empty() ? 0.0 : Percentile(those, 0.99));
  return Checked(Json{{"runtime", "reins served"}, {"mode", "scale"}, {"turns", kScaleTurns}, {"completed", added.size()},
                      {"added_p50_ms", Percentile(added, 0.50)}, {"added_p99_ms", Percentile(added, 0.99)},
                      {"added_max_ms", Percentile(added, 1.0)}, {"added_p99_ms_by_arrival_second", p99_by_second}},
                 mock.RequestsSince(before), kWarmTurns + kScaleTurns);
}

// Nothing acknowledged is lost: turns run 64 at a time until the server is killed
// (SIGKILL, mid-commit as likely as not); a new server on the same store must have every
// turn the first one answered.
Json ServedCrash(const Options& o, Mock& mock, const std::string& dir) {
  auto server = std::make_unique<Server>(o, mock, dir);
  if (std::string why = server->NotStarted(); !why.empty()) return Json{{"error", why}};
  JobClient client(server->url());
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    kill(server->process.pid(), SIGKILL);
  });
  client.RunConcurrent(1000000, kTputWidth);  // until the first turn the kill cuts
  killer.join();
  server.reset();
  Server again(o, mock, dir);
  if (std::string why = again.NotStarted(); !why.empty()) return Json{{"error", why}};
  JobClient check(again.url());
  const int lost = check.CountMissing(client.answered());
  Json result = {{"runtime", "reins served"}, {"mode", "crash"}, {"answered", client.answered().size()}, {"lost", lost}};
  if (client.answered().empty()) result["error"] = "no turn was answered before the kill";
  if (lost > 0) result["error"] = std::to_string(lost) + " answered turn(s) missing after the restart";
  return result;
}

// The bare Node loop: its own process, its own measurement (process.cpuUsage, turns/s);
// its memory is sampled from here, the same way as the server's. `more`: the growth
// mode's flags, and `all` the turns it runs.
Json Node(const Options& o, const std::string& mode, Mock& mock, const std::vector<std::string>& more = {}, int all = 0) {
  const Json before = mock.Stats();
  std::vector<std::string> argv = {"/usr/bin/env", "node", "--expose-gc", o.node, "--mode", mode, "--url",
                                   mock.url() + "/v1", "--turns", std::to_string(o.turns)};
  argv.insert(argv.end(), more.begin(), more.end());
  ChildProcess node(argv, {{"NODE_ENV", "production"}}, "");
  // Every turn the loop ran, its warm-up included.
  if (all == 0) all = mode == "cpu" ? kWarmTurns + o.turns : mode == "tput" ? kTputWarm + kTputTurns : kWarmTurns + kMemTurns;
  if (mode != "mem") {
    Json result = node.ReadJsonLine();  // first: the loop has finished
    return Checked(result, mock.RequestsSince(before), all);
  }
  if (node.ReadLine().rfind("warm", 0) != 0) return Json{{"error", "the node loop did not warm up"}};
  Json done;
  Json result = WhileParked(Json::object(), node.pid(), mock, [&] {
    node.WriteLine("go");
    done = node.ReadJsonLine();  // when the loop has finished the batch
    return !done.contains("error");
  });
  if (done.contains("error")) return done;
  result.update(done);
  return Checked(result, mock.RequestsSince(before), all);
}

// This program again, in `mode` (--embedded or --floor) against `mock`: its one JSON
// line, checked against the `turns` turns it must have run, warm-ups included.
Json OwnChild(const Options& o, Mock& mock, const std::string& dir, std::vector<std::string> mode, int turns) {
  const Json before = mock.Stats();
  std::vector<std::string> args = {REINS_PEER_JOB, "--mock", mock.url(), "--dir", dir, "--turns", std::to_string(o.turns)};
  args.insert(args.begin() + 1, mode.begin(), mode.end());
  ChildProcess run(args, {}, "");
  Json result = run.ReadJsonLine();
  return Checked(result, mock.RequestsSince(before), turns);
}

// Each turn begins its session (Runtime::StartSession: one transaction).
Json EmbeddedCpu(const Options& o, Mock& mock, const std::string& dir) {
  return OwnChild(o, mock, dir, {"--embedded"}, kWarmTurns + o.turns);
}
// Each turn in a session CreateSession made first (two transactions), as a server's
// client does and as rounds 1 to 17 measured.
Json EmbeddedCreateFirstCpu(const Options& o, Mock& mock, const std::string& dir) {
  return OwnChild(o, mock, dir, {"--embedded", "--create-first"}, kWarmTurns + o.turns);
}

// The machine's floor (floor.cc): the job by a hand-written C++ loop, without and with
// its SQLite commit, each kWarmTurns + `turns` turns.
Json FloorCpu(const Options& o, Mock& mock, const std::string& dir) {
  return OwnChild(o, mock, dir, {"--floor"}, 2 * (kWarmTurns + o.turns));
}

// The job's agent with `tools` tools, written into `dir` (its path): lookup_weather and
// `tools - 1` refund tools the model never calls, each with a schema of four properties
// as a catalogue of real actions has. Every model request carries them all. The Node
// loop's growth mode declares the same ones (bare_loop.mjs).
std::string AgentWithTools(const std::string& dir, int tools) {
  std::ifstream in(REINS_JOB_AGENT);
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (int i = 2; i <= tools; ++i) {
    yaml += "  - name: refund_order_" + std::to_string(i) +
            "\n"
            "    description: Refunds part of an order and tells the customer why.\n"
            "    input_schema:\n"
            "      type: object\n"
            "      properties:\n"
            "        customer_id: { type: string, description: 'The customer, as the CRM names them' }\n"
            "        amount: { type: number, minimum: 0 }\n"
            "        reason: { type: string, enum: [damaged, late, wrong_item] }\n"
            "        notify: { type: boolean }\n"
            "      required: [customer_id, amount]\n"
            "    backend:\n"
            "      fixture:\n"
            "        - result: { refunded: true }\n";
  }
  const std::string path = dir + "/agent-" + std::to_string(tools) + "-tools.yaml";
  std::ofstream(path) << yaml;
  return path;
}

// A scratch directory for one measurement's store, removed afterwards.
struct ScratchDir {
  ScratchDir() {
    char name[] = "/tmp/reins-peer-job-XXXXXX";
    path = mkdtemp(name) != nullptr ? name : "/tmp";
  }
  ~ScratchDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string path;
};

// One cell of the growth grid: the next turn of sessions with `history` earlier turns,
// the agent with `tools` tools, by reins embedded or by the Node loop.
Json Growth(const Options& o, bool node, int history, int tools) {
  Mock mock;
  ScratchDir dir;
  const int all = kWarmTurns + kGrowthSamples * (history + 1);
  const std::vector<std::string> cell = {"--history", std::to_string(history), "--samples", std::to_string(kGrowthSamples)};
  if (node) {
    std::vector<std::string> more = cell;
    more.insert(more.end(), {"--tools", std::to_string(tools)});
    return Node(o, "growth", mock, more, all);
  }
  std::vector<std::string> mode = {"--embedded", "--agent", AgentWithTools(dir.path, tools)};
  mode.insert(mode.end(), cell.begin(), cell.end());
  return OwnChild(o, mock, dir.path, mode, all);
}

std::string GrowthName(bool node, int history, int tools) {
  return std::string(node ? "node" : "reins embedded") + " growth, " + std::to_string(history) + " earlier turns, " +
         std::to_string(tools) + " tools";
}

// One result whose every number, and every number of an array of them, is the median of
// `runs`' (an error in any run stays).
Json Median(const std::vector<Json>& runs) {
  Json out = runs.front();
  for (const Json& r : runs) {
    if (r.contains("error")) return r;
  }
  auto median = [&](const std::function<double(const Json&)>& of) {
    std::vector<double> all;
    for (const Json& r : runs) all.push_back(of(r));
    std::sort(all.begin(), all.end());
    return all[all.size() / 2];
  };
  for (auto& [key, value] : out.items()) {
    if (value.is_number()) value = median([&](const Json& r) { return r.value(key, 0.0); });
    if (!value.is_array()) continue;
    for (size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_number()) continue;
      value[i] = median([&](const Json& r) {
        const Json& items = r.contains(key) ? r[key] : Json::array();
        return i < items.size() && items[i].is_number() ? items[i].get<double>() : 0.0;
      });
    }
  }
  return out;
}

// The CPU time of this machine so far, from /proc/stat's first line: all of it, and what
// the host took for others (steal: a virtual machine's CPU given to another guest).
struct CpuTimes {
  long long steal = 0;
  long long total = 0;
};
CpuTimes ReadCpuTimes() {
  CpuTimes t;
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;
  // user nice system idle iowait irq softirq steal (guest time is within user's)
  long long value = 0;
  for (int field = 0; field < 8 && in >> value; ++field) {
    t.total += value;
    if (field == 7) t.steal = value;
  }
  return t;
}

// The share of the CPU time the host took between `before` and now, in percent: on a
// shared machine, what the other figures of a measurement are to be read with.
double StealPercent(const CpuTimes& before) {
  const CpuTimes now = ReadCpuTimes();
  const long long total = now.total - before.total;
  return total > 0 ? 100.0 * static_cast<double>(now.steal - before.steal) / static_cast<double>(total) : 0.0;
}

using Measure = Json (*)(const Options&, Mock&, const std::string&);

// Each measurement with a fresh mock, a fresh store and a fresh process.
Json Fresh(const Options& o, Measure measure) {
  Mock mock(o.load_threads);
  ScratchDir dir;
  return measure(o, mock, dir.path);
}

std::string Figure(const Json& j, const char* key, const char* format) {
  if (!j.contains(key)) return j.contains("error") ? "error" : "-";
  char text[64];
  std::snprintf(text, sizeof text, format, j[key].get<double>());
  return text;
}

std::string Ratio(const Json& slower, const Json& faster, const char* key, bool higher_is_better) {
  if (!slower.contains(key) || !faster.contains(key)) return "-";
  const double a = slower[key].get<double>(), b = faster[key].get<double>();
  char text[32];
  std::snprintf(text, sizeof text, "%.1f×", higher_is_better ? b / a : a / b);
  return text;
}

// "K of T": the part of a run's CPU per turn spent in the kernel, of all of it.
std::string KernelShare(const Json& j, const std::string& suffix = "") {
  const std::string kernel = "kernel_us_per_turn" + suffix, all = "cpu_us_per_turn" + suffix;
  if (!j.contains(kernel) || !j.contains(all)) return "-";
  char text[48];
  std::snprintf(text, sizeof text, "%.0f of %.0f", j[kernel].get<double>(), j[all].get<double>());
  return text;
}

// Where the CPU of a turn goes: in the kernel (the system calls, and the loopback's
// network stack, which a send runs for both ends) or in user space, the part a runtime's
// own code decides. What reins spends above the C++ floor, split the same way.
void PrintKernelShares(const Json& embedded, const Json& served, const Json& node, const Json& floor) {
  std::printf("in the kernel (system CPU, µs a turn, of the whole): reins embedded %s, reins served %s, "
              "the Node loop %s, the C++ floor %s with its commit (%s without)\n",
              KernelShare(embedded).c_str(), KernelShare(served).c_str(), KernelShare(node).c_str(),
              KernelShare(floor).c_str(), KernelShare(floor, "_without_store").c_str());
  if (embedded.contains("kernel_us_per_turn") && floor.contains("kernel_us_per_turn")) {
    const double kernel = embedded["kernel_us_per_turn"].get<double>() - floor["kernel_us_per_turn"].get<double>();
    const double all = embedded["cpu_us_per_turn"].get<double>() - floor["cpu_us_per_turn"].get<double>();
    std::printf("reins embedded above the floor with its commit: %+.0f µs a turn, by the kernel's split (tens of µs "
                "uncertain) %+.0f in user space and %+.0f in the kernel\n",
                all, all - kernel, kernel);
  }
}

// `r` gives a measurement's median by its name (RunAll), an empty object when it was not run.
void PrintTable(const std::function<Json(const char*)>& r) {
  const Json floor = r("C++ floor cpu"), embedded = r("reins embedded cpu"), created = r("reins embedded cpu, created first");
  const Json served_created = r("reins served cpu, created first");
  const Json cpu = r("reins served cpu"), tput = r("reins served tput"), mem = r("reins served mem");
  const Json scale = r("reins served scale"), crash = r("reins served crash");
  const Json node_cpu = r("node cpu"), node_tput = r("node tput"), node_mem = r("node mem");
  std::printf("\n| the peer job | CPU µs/turn | turns/s @%d | KiB per in-flight turn (%d on a %d ms model) |\n",
              kTputWidth, kMemTurns, kSlowModelMs);
  std::printf("|---|---:|---:|---:|\n");
  std::printf("| reins embedded | %s | - | - |\n", Figure(embedded, "cpu_us_per_turn", "%.0f").c_str());
  std::printf("| reins served | %s | %s | %s |\n", Figure(cpu, "cpu_us_per_turn", "%.0f").c_str(),
              Figure(tput, "turns_per_s", "%.0f").c_str(), Figure(mem, "kib_per_turn", "%.1f").c_str());
  std::printf("| bare Node loop (fetch) | %s | %s | %s |\n", Figure(node_cpu, "cpu_us_per_turn", "%.0f").c_str(),
              Figure(node_tput, "turns_per_s", "%.0f").c_str(), Figure(node_mem, "kib_per_turn", "%.1f").c_str());
  std::printf("| bare Node loop / reins embedded | %s | | |\n", Ratio(node_cpu, embedded, "cpu_us_per_turn", false).c_str());
  std::printf("| bare Node loop / reins served | %s | %s | %s |\n", Ratio(node_cpu, cpu, "cpu_us_per_turn", false).c_str(),
              Ratio(node_tput, tput, "turns_per_s", true).c_str(), Ratio(node_mem, mem, "kib_per_turn", false).c_str());
  if (floor.contains("cpu_us_per_turn") && embedded.contains("cpu_us_per_turn")) {
    std::printf("\nfloor: the job by a hand-written C++ loop without governance (blocking socket, nlohmann) %.0f µs a "
                "turn, %.0f µs with a SQLite commit per turn; reins embedded is %.2f× the latter\n",
                floor["cpu_us_per_turn_without_store"].get<double>(), floor["cpu_us_per_turn"].get<double>(),
                embedded["cpu_us_per_turn"].get<double>() / floor["cpu_us_per_turn"].get<double>());
  }
  if (embedded.contains("kernel_us_per_turn") || cpu.contains("kernel_us_per_turn")) {
    PrintKernelShares(embedded, cpu, node_cpu, floor);
  }
  if (created.contains("cpu_us_per_turn")) {
    std::printf("embedded with each session created before its turn (CreateSession, then RunTurn: two transactions): "
                "%.0f µs a turn\n",
                created["cpu_us_per_turn"].get<double>());
  }
  if (served_created.contains("cpu_us_per_turn")) {
    std::printf("served with each session created by a request of its own (POST /v1/sessions, then POST .../turns: "
                "two requests, two transactions): %.0f µs a turn (%s under the Node loop)\n",
                served_created["cpu_us_per_turn"].get<double>(),
                Ratio(node_cpu, served_created, "cpu_us_per_turn", false).c_str());
  }
  if (scale.contains("added_p99_ms")) {
    std::printf("\nscale: %d turns arriving over %d ms on a %d ms model: %s completed, added latency p50 %.1f ms, "
                "p99 %.1f ms, max %.1f ms\n",
                kScaleTurns, kScaleArrivalMs, kSlowModelMs, std::to_string(scale["completed"].get<long>()).c_str(),
                scale["added_p50_ms"].get<double>(), scale["added_p99_ms"].get<double>(),
                scale["added_max_ms"].get<double>());
    if (scale.contains("added_p99_ms_by_arrival_second")) {
      std::string seconds;
      for (const Json& p99 : scale["added_p99_ms_by_arrival_second"]) {
        seconds += (seconds.empty() ? "" : " / ") + std::to_string(static_cast<long>(p99.get<double>()));
      }
      std::printf("scale: added p99 of the turns arriving in each second: %s ms\n", seconds.c_str());
    }
  } else if (scale.contains("error")) {
    std::printf("\nscale: %s\n", scale["error"].dump().c_str());
  }
  if (crash.contains("answered")) {
    std::printf("crash: reins serve killed (SIGKILL) with %d turns in flight after %ld answered turns; after the "
                "restart %ld of them missing\n",
                kTputWidth, crash["answered"].get<long>(), crash["lost"].get<long>());
  }
  std::string steal;
  for (const char* name : {"reins embedded cpu", "reins served cpu", "node cpu", "reins served tput", "reins served scale"}) {
    const Json run = r(name);
    if (!run.contains("host_steal_pct")) continue;
    char figure[96];
    std::snprintf(figure, sizeof figure, "%s%s %.1f %%", steal.empty() ? "" : ", ", name, run["host_steal_pct"].get<double>());
    steal += figure;
  }
  if (!steal.empty()) std::printf("host: CPU time taken by the host for other guests (steal) during %s\n", steal.c_str());
}

// The growth grid: each cell reins embedded's CPU per turn, the Node loop's, and their ratio.
void PrintGrowthTable(const std::function<Json(const std::string&)>& r) {
  std::printf("\nhow a turn's cost grows, CPU µs per turn: reins embedded / bare Node loop (ratio)\n\n");
  std::printf("| earlier turns in the session \\ tools |");
  for (int tools : kGrowthTools) std::printf(" %d |", tools);
  std::printf("\n|---|");
  for (size_t i = 0; i < std::size(kGrowthTools); ++i) std::printf("---:|");
  std::printf("\n");
  for (int history : kGrowthHistory) {
    std::printf("| %d |", history);
    for (int tools : kGrowthTools) {
      const Json reins = r(GrowthName(false, history, tools)), node = r(GrowthName(true, history, tools));
      std::printf(" %s / %s (%s) |", Figure(reins, "cpu_us_per_turn", "%.0f").c_str(),
                  Figure(node, "cpu_us_per_turn", "%.0f").c_str(), Ratio(node, reins, "cpu_us_per_turn", false).c_str());
    }
    std::printf("\n");
  }
}

int RunAll(const Options& o) {
  const bool node = o.node != "none";
  Json results = Json::object();
  std::map<std::string, std::vector<Json>> runs;
  int rep = 1;
  auto run = [&](const std::string& name, auto measure) {
    std::fprintf(stderr, "peer job: %s (%d of %d) ...\n", name.c_str(), rep, o.reps);
    const CpuTimes before = ReadCpuTimes();
    Json result = measure();
    if (result.is_object() && !result.contains("error")) result["host_steal_pct"] = StealPercent(before);
    runs[name].push_back(std::move(result));
    std::cout << runs[name].back().dump() << std::endl;
  };
  for (; rep <= o.reps; ++rep) {  // interleaved: a drift of the machine touches every runtime alike
    if (o.Wants("cpu")) {
      run("reins embedded cpu", [&] { return Fresh(o, EmbeddedCpu); });
      run("reins embedded cpu, created first", [&] { return Fresh(o, EmbeddedCreateFirstCpu); });
      run("C++ floor cpu", [&] { return Fresh(o, FloorCpu); });
      run("reins served cpu", [&] { return Fresh(o, ServedCpu); });
      run("reins served cpu, created first", [&] { return Fresh(o, ServedCreateFirstCpu); });
      if (node) run("node cpu", [&] { Mock mock; return Node(o, "cpu", mock); });
    }
    if (o.Wants("tput")) {
      run("reins served tput", [&] { return Fresh(o, ServedTput); });
      if (node) run("node tput", [&] { Mock mock; return Node(o, "tput", mock); });
    }
    if (o.Wants("mem")) {
      run("reins served mem", [&] { return Fresh(o, ServedMem); });
      if (node) run("node mem", [&] { Mock mock; return Node(o, "mem", mock); });
    }
    if (o.Wants("scale")) run("reins served scale", [&] { return Fresh(o, ServedScale); });
    if (o.Wants("crash")) run("reins served crash", [&] { return Fresh(o, ServedCrash); });
    if (o.Wants("growth")) {
      for (int tools : kGrowthTools) {
        for (int history : kGrowthHistory) {
          run(GrowthName(false, history, tools), [&] { return Growth(o, false, history, tools); });
          if (node) run(GrowthName(true, history, tools), [&] { return Growth(o, true, history, tools); });
        }
      }
    }
  }
  for (const auto& [name, all] : runs) results[name] = Median(all);
  if (o.table) {
    if (o.only != std::vector<std::string>{"growth"}) {
      PrintTable([&](const char* name) { return results.value(name, Json::object()); });
    }
    if (o.Wants("growth")) PrintGrowthTable([&](const std::string& name) { return results.value(name, Json::object()); });
  }
  for (const auto& [name, result] : results.items()) {
    if (result.contains("error")) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace reins::peer_job

int main(int argc, char** argv) {
  using namespace reins::peer_job;
  Options o;
  std::string mock_url, dir, agent;
  bool embedded = false, floor = false, create_first = false;
  int history = -1, samples = kGrowthSamples;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--table") {
      o.table = true;
    } else if (a == "--only") {
      o.only = Split(next(), ',');
    } else if (a == "--node") {
      o.node = next();
    } else if (a == "--turns") {
      o.turns = std::stoi(next());
    } else if (a == "--reps") {
      o.reps = std::max(1, std::stoi(next()));
    } else if (a == "--load-threads") {
      o.load_threads = std::max(1, std::stoi(next()));
    } else if (a == "--tput-width") {
      o.tput_width = std::max(1, std::stoi(next()));
    } else if (a == "--tput-turns") {
      o.tput_turns = std::max(1, std::stoi(next()));
    } else if (a == "--serve-arg") {
      o.serve_args.push_back(next());
    } else if (a == "--embedded") {
      embedded = true;
    } else if (a == "--create-first") {
      create_first = true;
    } else if (a == "--agent") {
      agent = next();
    } else if (a == "--history") {
      history = std::stoi(next());
    } else if (a == "--samples") {
      samples = std::max(1, std::stoi(next()));
    } else if (a == "--floor") {
      floor = true;
    } else if (a == "--mock") {
      mock_url = next();
    } else if (a == "--dir") {
      dir = next();
    } else {
      std::cerr << "usage: reins_peer_job [--table] [--only cpu,tput,mem,scale,crash,growth] [--node PATH|none] [--turns N] [--reps N] "
                   "[--serve-arg FLAG ...] [--load-threads K] [--tput-width W] [--tput-turns N]\n";
      return 2;
    }
  }
  reins::RaiseOpenFileLimit();
  if (embedded && history >= 0) return RunEmbeddedGrowth(mock_url, dir, agent, history, samples);
  if (embedded) return RunEmbedded(mock_url, dir, o.turns, create_first);
  if (floor) return RunFloor(mock_url, dir, o.turns);
  return RunAll(o);
}
