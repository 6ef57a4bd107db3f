// act_not_describe's reader against corpora of realistic model replies: act_corpus.yaml
// (written before the reader was tuned, then tuned on), held-out sets each written blind
// after a round of tuning, and the last of them, act_corpus_heldout7.yaml, never tuned
// on. A false positive forces a call nobody wanted, so precision comes first. The
// figures are printed for docs/RESULTS.md; ACT_DEBUG=1 also prints what the reader read
// in each miss.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include "config/agent_config_loader.h"
#include "config/diagnostics.h"
#include "config/located_yaml.h"
#include "policy/act/action_talk.h"

namespace reins {
namespace {

struct Agent {
  AgentConfig config;
  std::unique_ptr<ActionReader> reader;
};

struct Figures {
  double precision = 0, recall = 0;
};

// Runs the reader over one corpus file; prints every miss and the figures.
Figures Measure(const std::string& file) {
  const std::string root = REINS_SOURCE_DIR;
  Diagnostics diag;
  LocatedDoc corpus = LoadYamlFile(file.starts_with("/") ? file : root + "/tests/policy/" + file, diag);
  EXPECT_TRUE(diag.empty()) << diag.Format();
  std::map<std::string, Agent> agents;
  for (const auto& [name, path] : corpus.value["agents"].items()) {
    Result<AgentConfig> config = LoadAgentConfigFile(root + "/" + path.get<std::string>());
    if (!config.ok()) {
      ADD_FAILURE() << config.status().message();
      return {};
    }
    Agent& agent = agents[name];
    agent.config = std::move(*config);
    agent.reader = std::make_unique<ActionReader>(agent.config.tools);
  }
  int true_positive = 0, false_positive = 0, false_negative = 0, true_negative = 0;
  std::map<std::string, std::pair<int, int>> by_kind;  // kind -> right, total
  for (const Json& c : corpus.value["cases"]) {
    const Agent& agent = agents.at(c["agent"].get<std::string>());
    std::vector<std::string> ran = c.value("ran", std::vector<std::string>{});
    std::optional<ActionTalk> found =
        agent.reader->UnmadeCall(c["user"].get<std::string>(), c["reply"].get<std::string>(), ran);
    const std::string expect = c["expect"].is_string() ? c["expect"].get<std::string>() : "";
    const std::string got = found ? found->tool : "";
    const bool right = got == expect;
    auto& [right_of_kind, of_kind] = by_kind[c.value("kind", "")];
    ++of_kind;
    right_of_kind += right ? 1 : 0;
    if (right && !expect.empty()) ++true_positive;
    if (right && expect.empty()) ++true_negative;
    if (!got.empty() && !right) ++false_positive;
    if (!expect.empty() && !right) ++false_negative;
    if (!right) {
      std::printf("  %-15s %-13s expect %-24s got %-24s %s\n", c["agent"].get<std::string>().c_str(),
                  c.value("kind", "").c_str(), expect.empty() ? "-" : expect.c_str(), got.empty() ? "-" : got.c_str(),
                  c["reply"].get<std::string>().c_str());
      if (std::getenv("ACT_DEBUG") != nullptr) {
        std::printf("      user: %s\n", c["user"].get<std::string>().c_str());
        for (const ActionTalk& t : agent.reader->Read(c["user"].get<std::string>(), c["reply"].get<std::string>())) {
          std::printf("      read: %s %s writes=%d requested=%d | %s\n", t.tool.c_str(),
                      std::string(ActionModeName(t.mode)).c_str(), t.writes, t.requested, t.sentence.c_str());
        }
      }
    }
  }
  const double precision = true_positive + false_positive == 0 ? 1.0 : double(true_positive) / (true_positive + false_positive);
  const double recall = true_positive + false_negative == 0 ? 1.0 : double(true_positive) / (true_positive + false_negative);
  for (const auto& [kind, counts] : by_kind) std::printf("  %-18s %3d/%3d\n", kind.c_str(), counts.first, counts.second);
  std::printf("%s: %zu cases, precision %.1f%% (%d true +, %d false +), recall %.1f%% (%d false -), %d true -\n",
              file.c_str(), corpus.value["cases"].size(), 100 * precision, true_positive, false_positive, 100 * recall, false_negative,
              true_negative);
  return {precision, recall};
}

// The corpus written before the reader was tuned, and tuned on: the quality bar.
TEST(ActCorpusTest, PrecisionAndRecallOnRealisticReplies) {
  Figures f = Measure("act_corpus.yaml");
  EXPECT_GE(f.precision, 0.95);
  EXPECT_GE(f.recall, 0.85);
}

// Written after the first tuning and held out then (81.8% recall at 98.2% precision);
// issue 73's tuning was made on its misses, and it holds the bar.
TEST(ActCorpusTest, FirstHeldOutReplies) {
  Figures f = Measure("act_corpus_heldout.yaml");
  EXPECT_GE(f.precision, 0.97);
  EXPECT_GE(f.recall, 0.90);
}

// Each written blind after a round of tuning, measured once as written (docs/RESULTS.md),
// then tuned on in the next round: they guard what those rounds gained.
TEST(ActCorpusTest, HeldOutSetsOfEarlierRounds) {
  for (const char* file : {"act_corpus_heldout2.yaml", "act_corpus_heldout3.yaml", "act_corpus_heldout4.yaml",
                           "act_corpus_heldout5.yaml", "act_corpus_heldout6.yaml"}) {
    Figures f = Measure(file);
    EXPECT_GE(f.precision, 0.95) << file;
    EXPECT_GE(f.recall, 0.75) << file;
  }
}

// Written blind after the last round and never tuned on: how the reader does on
// phrasings nobody tuned it for, at issue 73's bar.
TEST(ActCorpusTest, HeldOutReplies) {
  Figures f = Measure("act_corpus_heldout7.yaml");
  EXPECT_GE(f.precision, 0.97);
  EXPECT_GE(f.recall, 0.90);
}

// ACT_CORPUS=/path/file.yaml: measure another corpus of the same shape (its agents'
// paths relative to the source tree).
TEST(ActCorpusTest, AnotherCorpus) {
  if (const char* other = std::getenv("ACT_CORPUS")) Measure(other);
}

}  // namespace
}  // namespace reins
