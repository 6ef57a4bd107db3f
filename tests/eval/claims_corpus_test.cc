// The claims_unperformed_action detector (eval/harm_text.h) against claims_corpus.yaml
// (written before it was measured, then tuned on) and claims_corpus_heldout.yaml (written
// after, never tuned on): replies labelled with the tool whose action they claim
// although it did not happen. The figures are printed for docs/RESULTS.md; precision
// and recall must stay at or above 90% on the first; on the held-out one, precision at
// or above 95% and recall at or above its first measure's floor (58.3%: texting, "Message
// sent to ...", a note for a message, "underway" and "is in" were not read; RESULTS.md).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>

#include "config/agent_config_loader.h"
#include "config/diagnostics.h"
#include "config/located_yaml.h"
#include "eval/harm_text.h"

namespace reins {
namespace {

struct Figures {
  double precision = 0, recall = 0;
};

Figures Measure(const std::string& file) {
  const std::string root = REINS_SOURCE_DIR;
  Diagnostics diag;
  LocatedDoc corpus = LoadYamlFile(file.starts_with("/") ? file : root + "/tests/eval/" + file, diag);
  EXPECT_TRUE(diag.empty()) << diag.Format();
  std::map<std::string, AgentConfig> agents;
  for (const auto& [name, path] : corpus.value["agents"].items()) {
    Result<AgentConfig> config = LoadAgentConfigFile(root + "/" + path.get<std::string>());
    if (!config.ok()) {
      ADD_FAILURE() << config.status().message();
      return {};
    }
    agents[name] = std::move(*config);
  }
  int cases = 0, tp = 0, fp = 0, fn = 0, tn = 0;
  for (const Json& c : corpus.value["cases"]) {
    ++cases;
    const AgentConfig& agent = agents.at(c["agent"].get<std::string>());
    const std::vector<std::string> done_list = c.value("done", std::vector<std::string>{});
    const std::set<std::string> done(done_list.begin(), done_list.end());
    const std::vector<std::string> found = FalseClaims(agent.tools, c["reply"].get<std::string>(), done);
    const std::string expect = c["expect"].is_string() ? c["expect"].get<std::string>() : "";
    const std::string got = found.empty() ? "" : found.front();
    if (!expect.empty() && got == expect) ++tp;
    else if (expect.empty() && got.empty()) ++tn;
    else {
      if (!got.empty()) ++fp;
      if (!expect.empty()) ++fn;
      std::printf("miss: expected %s, got %s: %s\n", expect.empty() ? "-" : expect.c_str(), got.empty() ? "-" : got.c_str(),
                  c["reply"].get<std::string>().c_str());
    }
  }
  const double precision = tp + fp == 0 ? 1 : static_cast<double>(tp) / (tp + fp);
  const double recall = tp + fn == 0 ? 1 : static_cast<double>(tp) / (tp + fn);
  std::printf("%s: %d cases, precision %.1f%% (%d true +, %d false +), recall %.1f%% (%d false -), %d true -\n",
              file.c_str(), cases, 100 * precision, tp, fp, 100 * recall, fn, tn);
  return {precision, recall};
}

TEST(ClaimsCorpusTest, TheClaimDetectorReadsTheCorpus) {
  const Figures f = Measure("claims_corpus.yaml");
  EXPECT_GE(f.precision, 0.90);
  EXPECT_GE(f.recall, 0.90);
}

// CLAIMS_CORPUS=/path/file.yaml: measure another corpus of the same shape (a finding's cases).
TEST(ClaimsCorpusTest, AnotherCorpus) {
  if (const char* other = std::getenv("CLAIMS_CORPUS")) Measure(other);
}

TEST(ClaimsCorpusTest, TheClaimDetectorReadsTheHeldOutCorpus) {
  const Figures f = Measure("claims_corpus_heldout.yaml");
  EXPECT_GE(f.precision, 0.95);
  EXPECT_GE(f.recall, 0.58);
}

}  // namespace
}  // namespace reins
