// The audit stage around a runtime: fail-open when the audit model fails, the catalog
// cap, the verdict schema.
#include "pipeline/audit_stage.h"

#include <gtest/gtest.h>

#include "support/runtime_harness.h"

namespace reins {
namespace {

constexpr const char* kAgent = R"(name: ops
model: { provider: scripted }
audit: { enabled: true, on_invalid_verdict: insufficient }
tools:
  - name: state
    description: Mesh overview.
    input_schema: { type: object, properties: { site: { type: string } } }
)";

class AuditTest : public testing::RuntimeHarness {};

TEST_F(AuditTest, AFailingAuditModelFailsOpenAndSaysSo) {
  // No reply for purpose audit: the audit call fails; the candidate still goes out.
  Build(kAgent, R"([{"when": {"purpose": "chat"}, "text": "All 36 nodes are up."}])", {});
  auto r = Say("how is the mesh?");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  EXPECT_EQ(r->reply, "All 36 nodes are up.");
  EXPECT_EQ(r->audit.value("repair", ""), "accept");
  EXPECT_NE(r->audit.value("error", "").find("audit model failed"), std::string::npos) << r->audit.dump();
}

TEST_F(AuditTest, InvalidVerdictsTwiceFollowOnInvalidVerdict) {
  Build(kAgent, R"([{"when": {"purpose": "chat"}, "text": "All up."},
                    {"when": {"purpose": "audit"}, "repeat": true, "raw": "{broken"}])", {});
  auto r = Say("how is the mesh?");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->audit.value("repair", ""), "answer_insufficient");  // on_invalid_verdict: insufficient
  EXPECT_EQ(r->model_calls, 3);                                     // answer, audit, one retry
  EXPECT_NE(r->reply.find("can't answer that reliably"), std::string::npos);
}

TEST(ToolCatalogTest, OneLinePerToolCappedAtTheLimit) {
  AgentConfig config;
  for (int i = 0; i < 50; ++i) {
    ToolDef t;
    t.name = "tool_" + std::to_string(i);
    t.description = "Does thing " + std::to_string(i) + ".\nMore detail that stays out.";
    t.input_schema = Json::parse(R"({"type": "object", "properties": {"a": {}, "b": {}}})");
    config.tools.push_back(t);
  }
  std::string catalog = ToolCatalog(config, 300);
  EXPECT_LE(catalog.size(), 330u);
  EXPECT_NE(catalog.find("- tool_0: Does thing 0. (a, b)"), std::string::npos);
  EXPECT_EQ(catalog.find("More detail"), std::string::npos);
  EXPECT_NE(catalog.find("catalog capped"), std::string::npos);
}

}  // namespace
}  // namespace reins
