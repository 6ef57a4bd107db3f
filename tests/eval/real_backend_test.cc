// A scenario whose tool is a real HTTP service: simulated time waits for the real call
// (no "timed out" while the service is still placing the order), one outcome gives at
// most one note, and the idempotency keys the service sees differ from run to run while
// the trace's stay reproducible.
#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "eval/scenario.h"
#include "eval/scenario_runner.h"
#include "support/mock_upstream.h"

namespace reins {
namespace {

using testing::MockUpstream;
namespace fs = std::filesystem;

// A scenario whose place_order tool posts to `shop`, run from a file in a fresh folder.
Result<Scenario> OrderScenario(const MockUpstream& shop, const fs::path& dir) {
  fs::create_directories(dir);
  const fs::path file = dir / "order.yaml";
  std::ofstream(file) << R"yaml(id: order
agent:
  name: shop
  model: { provider: scripted }
  deferred: { mode: await, timeout_ms: 3000 }
  tools:
    - name: place_order
      timing: deferred
      timeout_ms: 5000
      failure_note: "(Note: the order failed.)"
      input_schema: { type: object, properties: { book: { type: string } }, required: [book] }
      backend: { http: { url: ")yaml" << shop.base_url() << R"yaml(/orders", timeout_ms: 5000 } }
model:
  provider: scripted
  replies:
    - { when: { last: user }, tool_calls: [ { name: place_order, args: { book: Dune } } ] }
    - { when: { last: tool }, text: "Your order for Dune is on its way." }
turns:
  - say: Order Dune for me
    expect: { status: completed, tools_deferred: [place_order] }
)yaml";
  return LoadScenarioFile(file.string());
}

fs::path TempDir(const std::string& name) {
  return fs::path(::testing::TempDir()) / ("reins_real_backend_" + name + "_" + std::to_string(::getpid()));
}

TEST(RealBackendScenarioTest, SimulatedTimeWaitsForTheRealServiceAndKeysDifferPerRun) {
  MockUpstream shop;
  for (int i = 0; i < 2; ++i) {
    testing::MockReply placed = MockUpstream::Json(200, R"({"success": true, "data": {"order": "o_1"}})");
    placed.first_byte_delay_ms = 400;  // real time; the budgets are simulated time
    shop.Enqueue(placed);
  }
  const fs::path dir = TempDir("ok");
  Result<Scenario> scenario = OrderScenario(shop, dir);
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  std::set<std::string> trace_keys;
  for (int run = 0; run < 2; ++run) {
    ScenarioRun r = RunScenario(*scenario);
    ASSERT_TRUE(r.error.empty()) << r.error;
    ASSERT_EQ(r.turns.size(), 1u);
    for (const CheckResult& c : r.turns[0].checks) EXPECT_TRUE(c.passed) << c.kind << ": " << c.detail;
    for (const InvariantViolation& v : r.violations) ADD_FAILURE() << v.id << ": " << v.message;
    EXPECT_EQ(r.turns[0].result.reply.find("(Note"), std::string::npos) << "no failure note for a placed order";
    for (const TraceEvent& e : r.turns[0].result.events) {
      if (e.type == "tool.deferred") trace_keys.insert(e.data.value("idempotency_key", ""));
    }
  }
  EXPECT_EQ(trace_keys.size(), 1u) << "the trace's keys are reproducible";
  std::vector<testing::RecordedRequest> seen = shop.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NE(seen[0].headers["idempotency-key"], seen[1].headers["idempotency-key"])
      << "a de-duplicating service must not take the second run's order for the first's";
  EXPECT_EQ(seen[0].headers["idempotency-key"].rfind(*trace_keys.begin(), 0), 0u);
  fs::remove_all(dir);
}

TEST(RealBackendScenarioTest, ARealFailureGivesOneNote) {
  MockUpstream shop;
  testing::MockReply down = MockUpstream::Json(503, R"({"error": "warehouse offline"})");
  down.first_byte_delay_ms = 400;
  shop.Enqueue(down);
  const fs::path dir = TempDir("down");
  Result<Scenario> scenario = OrderScenario(shop, dir);
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  ScenarioRun r = RunScenario(*scenario);
  ASSERT_TRUE(r.error.empty()) << r.error;
  ASSERT_EQ(r.turns.size(), 1u);
  for (const InvariantViolation& v : r.violations) ADD_FAILURE() << v.id << ": " << v.message;
  const std::string& reply = r.turns[0].result.reply;
  const size_t first = reply.find("(Note: the order failed.)");
  ASSERT_NE(first, std::string::npos) << reply;
  EXPECT_EQ(reply.find("(Note: the order failed.)", first + 1), std::string::npos) << "told twice: " << reply;
  for (const TraceEvent& e : r.turns[0].result.events) {
    EXPECT_NE(e.name(), "notice.created") << "the note reached the reply; no notice repeats it";
  }
  EXPECT_EQ(shop.requests().size(), 1u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace reins
