// The model a scenario run talks to (docs/evaluation.md, "Against a real model"): the
// scenario's script, the simulated model, or a real provider — `--model
// PROVIDER:MODEL` or `--model agent` (the agent's own) — metered for tokens, cost and
// latency, within a budget, and through a cassette when recording or replaying.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "eval/cassette.h"
#include "eval/scenario.h"
#include "eval/scenario_run.h"
#include "reins/agent_config.h"
#include "reins/clock.h"
#include "reins/model_provider.h"

namespace reins {

// What `--model` names.
struct ModelChoice {
  enum class Kind { kScenario, kSim, kAgent, kProvider };
  Kind kind = Kind::kScenario;
  std::string provider;  // kProvider: openai | anthropic
  std::string model;     // kProvider
  std::string base_url;  // --base-url; "" keeps the agent's or the environment's

  bool Real() const { return kind == Kind::kAgent || kind == Kind::kProvider; }
};

// "scripted" (the scenarios' own), "sim", "agent", "openai:MODEL", "anthropic:MODEL".
Result<ModelChoice> ParseModelChoice(const std::string& text, const std::string& base_url);

// USD per million tokens by model: a YAML or JSON mapping of "provider:model" (or the
// bare model name) to {input_per_mtok, output_per_mtok} (--prices FILE).
using PriceList = std::map<std::string, ModelPricing>;
Result<PriceList> LoadPriceList(const std::string& path);

// True when a scenario has no model of its own and its agent's model is a real provider:
// it runs only with --model or --replay (eval reports it as skipped otherwise).
bool NeedsRealModel(const Scenario& s);

// The real model `s` runs with under `choice` (and a replay's recorded provider and
// model when `choice` names none); nullopt when it runs its script or the sim. The
// price comes from the agent's `model.pricing` when the model is the agent's, else
// from `prices`.
Result<std::optional<ModelConfig>> RealModelFor(const Scenario& s, const ModelChoice& choice,
                                                const Cassette* replay, const PriceList& prices);

// --max-tokens and --max-cost over a whole eval. Runs in flight finish; no run starts
// once a limit is reached.
class ModelBudget {
 public:
  ModelBudget(std::optional<int64_t> max_tokens, std::optional<double> max_cost)
      : max_tokens_(max_tokens), max_cost_(max_cost) {}
  void Add(int64_t tokens, double cost_usd);
  bool Spent() const;
  // "12,345 tokens of --max-tokens 10,000": why it is spent; "" when it is not.
  std::string Why() const;

 private:
  std::optional<int64_t> max_tokens_;
  std::optional<double> max_cost_;
  mutable std::mutex mu_;
  int64_t tokens_ = 0;
  double cost_ = 0;
};

// A real provider as one run uses it: its calls hold the run's simulated time still
// (a real call takes real time), and are metered into `usage` and the budget.
class MeteredModel final : public ModelProvider {
 public:
  MeteredModel(std::shared_ptr<ModelProvider> inner, Clock& run_clock, std::optional<ModelPricing> pricing,
               std::shared_ptr<ModelBudget> budget);
  std::string_view Name() const override { return inner_->Name(); }
  Task<Result<ModelResponse>> Complete(const ModelRequest& request) override;
  const ModelUsage& usage() const { return usage_; }

 private:
  std::shared_ptr<ModelProvider> inner_;
  Clock& run_clock_;
  std::optional<ModelPricing> pricing_;
  std::shared_ptr<ModelBudget> budget_;
  ModelUsage usage_;
};

}  // namespace reins
