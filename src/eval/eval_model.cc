#include "eval/eval_model.h"

#include <chrono>
#include <cstdio>

#include "config/located_yaml.h"

namespace reins {
namespace {

// The scripted and simulated models' own options, which mean nothing to a provider.
void DropScriptOptions(ModelConfig& m) {
  for (const char* key : {"replies", "seed", "intents", "faults"}) m.options.erase(key);
}

std::string Thousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

Result<ModelChoice> ParseModelChoice(const std::string& text, const std::string& base_url) {
  ModelChoice c;
  c.base_url = base_url;
  if (text.empty() || text == "scripted") {
    c.kind = ModelChoice::Kind::kScenario;
  } else if (text == "sim") {
    c.kind = ModelChoice::Kind::kSim;
  } else if (text == "agent") {
    c.kind = ModelChoice::Kind::kAgent;
  } else if (size_t colon = text.find(':'); colon != std::string::npos && colon + 1 < text.size()) {
    c.kind = ModelChoice::Kind::kProvider;
    c.provider = text.substr(0, colon);
    c.model = text.substr(colon + 1);
    if (!IsHttpProvider(c.provider)) {
      return InvalidArgument("--model " + text + ": the provider must be openai or anthropic");
    }
  } else {
    return InvalidArgument("--model takes scripted, sim, agent, openai:MODEL or anthropic:MODEL, got '" + text + "'");
  }
  if (!base_url.empty() && !c.Real()) return InvalidArgument("--base-url goes with --model agent or PROVIDER:MODEL");
  return c;
}

Result<PriceList> LoadPriceList(const std::string& path) {
  Diagnostics diag;
  LocatedDoc doc = LoadYamlFile(path, diag);
  if (!diag.empty()) return InvalidArgument(diag.Format());
  if (!doc.value.is_object()) return InvalidArgument(path + ": prices must map a model to {input_per_mtok, output_per_mtok}");
  PriceList prices;
  for (const auto& [model, entry] : doc.value.items()) {
    const Json& price = entry;  // named: clang before 16 lets no lambda capture a structured binding
    auto number = [&price](const char* key) -> std::optional<double> {
      if (!price.is_object() || !price.contains(key) || !price[key].is_number() || price[key].get<double>() < 0) {
        return std::nullopt;
      }
      return price[key].get<double>();
    };
    std::optional<double> in = number("input_per_mtok"), out = number("output_per_mtok");
    if (!in || !out) {
      return InvalidArgument(path + ": '" + model + "' needs input_per_mtok and output_per_mtok (USD per million tokens, >= 0)");
    }
    prices[model] = ModelPricing{*in, *out};
  }
  return prices;
}

bool NeedsRealModel(const Scenario& s) {
  return s.model.is_null() && IsHttpProvider(s.agent.model.provider);
}

Result<std::optional<ModelConfig>> RealModelFor(const Scenario& s, const ModelChoice& choice, const Cassette* replay,
                                                const PriceList& prices) {
  const ModelConfig& own = s.agent.model;
  std::string provider, model;
  if (choice.kind == ModelChoice::Kind::kProvider) {
    provider = choice.provider;
    model = choice.model;
  } else if (choice.kind == ModelChoice::Kind::kAgent || (choice.kind == ModelChoice::Kind::kScenario && replay == nullptr && NeedsRealModel(s))) {
    if (!IsHttpProvider(own.provider)) {
      return InvalidArgument("scenario '" + s.id + "': --model agent needs an agent whose model is openai or anthropic; its is " +
                             own.provider);
    }
    provider = own.provider;
    model = own.model;
  } else if (replay != nullptr && choice.kind == ModelChoice::Kind::kScenario) {
    provider = replay->provider();  // what the cassette was recorded with
    model = replay->model();
  } else {
    return std::optional<ModelConfig>();
  }
  // The agent's settings (temperature, timeouts, retries, max_tokens...) carry over to
  // the model that replaces its own; its address, key and price only to the same one.
  ModelConfig config = own;
  DropScriptOptions(config);
  const bool same_model = own.provider == provider && own.model == model;
  if (own.provider != provider) {
    config.base_url.clear();
    config.api_key.clear();
  }
  if (!same_model) config.pricing.reset();
  config.provider = provider;
  config.model = model;
  if (!choice.base_url.empty()) config.base_url = choice.base_url;
  for (const std::string& name : {provider + ":" + model, model}) {
    if (auto it = prices.find(name); it != prices.end()) {
      config.pricing = it->second;
      break;
    }
  }
  return std::optional<ModelConfig>(std::move(config));
}

void ModelBudget::Add(int64_t tokens, double cost_usd) {
  std::lock_guard lock(mu_);
  tokens_ += tokens;
  cost_ += cost_usd;
}

bool ModelBudget::Spent() const { return !Why().empty(); }

std::string ModelBudget::Why() const {
  std::lock_guard lock(mu_);
  if (max_tokens_ && tokens_ >= *max_tokens_) {
    return Thousands(tokens_) + " tokens of --max-tokens " + Thousands(*max_tokens_);
  }
  if (max_cost_ && cost_ >= *max_cost_) {
    char text[96];
    std::snprintf(text, sizeof text, "$%.4f of --max-cost %.4f", cost_, *max_cost_);
    return text;
  }
  return "";
}

MeteredModel::MeteredModel(std::shared_ptr<ModelProvider> inner, Clock& run_clock, std::optional<ModelPricing> pricing,
                           std::shared_ptr<ModelBudget> budget)
    : inner_(std::move(inner)), run_clock_(run_clock), pricing_(pricing), budget_(std::move(budget)) {
  if (pricing_) usage_.cost_usd = 0.0;
}

Task<Result<ModelResponse>> MeteredModel::Complete(const ModelRequest& request) {
  RealWorkScope real(run_clock_);  // simulated time waits for the real call
  const auto started = std::chrono::steady_clock::now();
  Task<Result<ModelResponse>> call = inner_->Complete(request);
  Result<ModelResponse> response = co_await std::move(call);
  usage_.call_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  ++usage_.calls;
  if (response.ok()) {
    const Usage& u = response->usage;
    usage_.input_tokens += u.input_tokens;
    usage_.output_tokens += u.output_tokens;
    const double cost = pricing_ ? pricing_->Cost(u.input_tokens, u.output_tokens) : 0.0;
    if (pricing_) *usage_.cost_usd += cost;
    if (budget_) budget_->Add(u.input_tokens + u.output_tokens, cost);
  }
  co_return response;
}

}  // namespace reins
