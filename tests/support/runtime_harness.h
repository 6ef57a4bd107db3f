// A Runtime wired for tests: an agent from YAML text, the scripted model (wrapped to
// record every request it receives), fixture tools, a virtual clock and a real SQLite
// store (in memory unless a URL is given). Every event a turn emits, and every event
// stored with the session's turns by the end of the test (deferred outcomes included),
// must be listed in docs/trace.md.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/agent_config_loader.h"
#include "model/scripted_model.h"
#include "reins/runtime.h"
#include "support/run_sync.h"
#include "support/trace_doc.h"
#include "tools/fixture_backend.h"

namespace reins::testing {

// Passes calls to the scripted model and keeps a copy of each request.
class RecordingModel final : public ModelProvider {
 public:
  explicit RecordingModel(std::shared_ptr<ScriptedModel> inner) : inner_(std::move(inner)) {}
  std::string_view Name() const override { return "recording"; }
  Task<Result<ModelResponse>> Complete(const ModelRequest& request) override {
    requests.push_back(request);
    co_return co_await inner_->Complete(request);
  }
  std::vector<ModelRequest> requests;

 private:
  std::shared_ptr<ScriptedModel> inner_;
};

class RuntimeHarness : public ::testing::Test {
 protected:
  void Build(const std::string& agent_yaml, const std::string& replies, const std::map<std::string, std::string>& fixtures,
             const std::string& store_url = "sqlite::memory:", std::function<void(RuntimeParts&)> adjust = nullptr) {
    Diagnostics diag;
    LocatedDoc doc = ParseYaml(agent_yaml, "agent.yaml", diag);
    AgentConfig config;
    ASSERT_TRUE(ParseAgentConfig(doc, "", ".", diag, &config)) << diag.Format();
    clock_ = std::make_shared<VirtualClock>(0);
    model_ = std::make_shared<ScriptedModel>(Json::parse(replies));
    recorder_ = std::make_shared<RecordingModel>(model_);
    RuntimeParts parts;
    parts.model = recorder_;
    parts.clock = clock_;
    auto store = OpenStore(store_url);
    ASSERT_TRUE(store.ok()) << store.status().message();
    parts.store = std::move(store).value();
    backends_.clear();
    for (const auto& [tool, entries] : fixtures) {
      auto backend = std::make_shared<FixtureBackend>(tool, Json::parse(entries), *clock_);
      backends_[tool] = backend;
      parts.tool_backends[tool] = backend;
    }
    if (adjust) adjust(parts);
    auto runtime = Runtime::Create(config, parts);
    ASSERT_TRUE(runtime.ok()) << runtime.status().message();
    runtime_ = std::move(runtime).value();
    session_ = runtime_->CreateSession().value();
  }
  Result<TurnResult> Run(TurnInput in) {
    Result<TurnResult> r = RunSync(runtime_->RunTurn(session_, std::move(in)), clock_.get());
    if (r.ok()) ExpectDocumented(r->events);
    return r;
  }
  void TearDown() override {
    if (runtime_ == nullptr || session_.empty()) return;
    auto stored = runtime_->store().LoadTurns(session_);
    if (!stored.ok()) return;  // a test that broke its store on purpose
    for (const StoredTurn& t : *stored) ExpectDocumented(t.events);
  }
  Result<TurnResult> Say(const std::string& text) {
    TurnInput in;
    in.say = text;
    return Run(std::move(in));
  }
  Result<TurnResult> Select(const std::string& id) {
    TurnInput in;
    in.select = id;
    return Run(std::move(in));
  }
  int Calls(const std::string& tool) { return backends_[tool]->calls(); }

  std::shared_ptr<VirtualClock> clock_;
  std::shared_ptr<ScriptedModel> model_;
  std::shared_ptr<RecordingModel> recorder_;
  std::map<std::string, std::shared_ptr<FixtureBackend>> backends_;
  std::unique_ptr<Runtime> runtime_;
  std::string session_;
};

}  // namespace reins::testing
