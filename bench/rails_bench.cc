// What the rails' end-of-reply reading costs (docs/PERFORMANCE.md): ActionReader::Read,
// which act_not_describe and honest_claims each run over a whole streamed reply when it
// ends, on the turn's event loop, with the care-chat agent's tools. Arg: the reply's
// sentences (3: a voice reply; 30: a long chat answer, about 300 words).
#include <benchmark/benchmark.h>

#include <string>

#include "config/agent_config_loader.h"
#include "policy/act/action_talk.h"

namespace {

using namespace reins;

std::string Reply(int sentences) {
  std::string reply;
  for (int s = 0; s < sentences; ++s) {
    reply += "At 1764147000123456 is when the model began this sentence and ended 1764147000456789. ";
  }
  return reply;
}

void BM_ActionReaderReadsAReply(benchmark::State& state) {
  Result<AgentConfig> config = LoadAgentConfigFile("examples/care-chat/agent.yaml");
  if (!config.ok()) {
    state.SkipWithError(("run from the repository root: " + config.status().message()).c_str());
    return;
  }
  const ActionReader reader(config->tools);
  const std::string reply = Reply(static_cast<int>(state.range(0)));
  const std::string said = "Please pray for my mother, she is in the hospital.";
  for (auto _ : state) benchmark::DoNotOptimize(reader.Read(said, reply));
  state.counters["per_sentence"] = benchmark::Counter(static_cast<double>(state.iterations() * state.range(0)),
                                                          benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ActionReaderReadsAReply)->ArgName("sentences")->Arg(3)->Arg(30)->Unit(benchmark::kMicrosecond);

}  // namespace
