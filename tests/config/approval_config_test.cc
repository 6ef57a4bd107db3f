// `approval:` (short and long form) and `entities.scope` / `belongs_to` as `reins check`
// reads them: every mistake named at its line and column, against the tool's input schema.
#include <gtest/gtest.h>

#include "config/agent_config_loader.h"

namespace reins {
namespace {

std::string Problems(const std::string& tools, AgentConfig* out = nullptr) {
  Diagnostics diag;
  LocatedDoc doc = ParseYaml("name: demo\nmodel: { provider: scripted }\ntools:\n" + tools, "agent.yaml", diag);
  AgentConfig config;
  if (diag.empty()) ParseAgentConfig(doc, "", ".", diag, &config);
  if (out != nullptr) *out = config;
  return diag.Format();
}

constexpr const char* kSchema =
    "    input_schema: { type: object, properties: { drug: { type: string }, quantity: { type: integer },"
    " order: { type: object, properties: { total: { type: number } } } } }\n";

TEST(ApprovalConfigTest, TheShortAndTheLongFormAreRead) {
  AgentConfig config;
  ASSERT_EQ(Problems("  - name: a\n    approval: required\n" + std::string(kSchema) +
                         "  - name: b\n    approval:\n      when: { quantity: { gt: 90 }, $.order.total: { ge: 100.5 },"
                         " drug: { in: [oxycodone, morphine] } }\n      prompt: 'Refill {drug}: {quantity} units?'\n"
                         "      approvers: [requester, role:pharmacist]\n      ttl_s: 900\n      allow_edit: true\n"
                         "      remember: session\n" + kSchema,
                     &config),
            "");
  EXPECT_TRUE(config.tools[0].approval.required);
  EXPECT_TRUE(config.tools[0].approval.when.empty());
  const ApprovalRule& b = config.tools[1].approval;
  EXPECT_TRUE(b.required) << "a rule given is a rule meant";
  ASSERT_EQ(b.when.size(), 3u);
  EXPECT_EQ(b.prompt, "Refill {drug}: {quantity} units?");
  EXPECT_EQ(b.approvers, (std::vector<std::string>{"requester", "role:pharmacist"}));
  EXPECT_EQ(b.ttl_s, 900);
  EXPECT_TRUE(b.allow_edit);
  EXPECT_EQ(b.remember, RememberScope::kSession);
}

TEST(ApprovalConfigTest, AConditionIsCheckedAgainstTheInputSchema) {
  std::string problems = Problems(
      "  - name: refill\n    approval:\n      when: { qty: { gt: 90 }, drug: { gt: 1 }, quantity: { matches: '^1' },"
      " $.order.total: { in: [] } }\n      prompt: 'Refill {medicine}?'\n" + std::string(kSchema));
  EXPECT_NE(problems.find("'qty' is not an argument of refill"), std::string::npos) << problems;
  EXPECT_NE(problems.find("'gt' compares numbers, but 'drug' is a string"), std::string::npos) << problems;
  EXPECT_NE(problems.find("'matches' reads text, but 'quantity' is a"), std::string::npos) << problems;
  EXPECT_NE(problems.find("'in' takes a non-empty list of values"), std::string::npos) << problems;
  EXPECT_NE(problems.find("the prompt's {medicine} is not an argument of refill"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:6:"), std::string::npos) << "located: " << problems;
}

TEST(ApprovalConfigTest, AnArgumentOfSeveralTypesIsNotJudgedByType) {
  EXPECT_EQ(Problems("  - name: refill\n    approval: { when: { quantity: { gt: 90 } } }\n"
                     "    input_schema: { type: object, properties: { quantity: { type: [integer, \"null\"] } } }\n"),
            "");
}

TEST(ApprovalConfigTest, AMistakeInTheRuleItselfIsNamed) {
  std::string problems = Problems(
      "  - name: refill\n    approval: { approvers: [], ttl_s: 0, remember: forever, when: { quantity: { about: 3 } },"
      " frobnicate: 1 }\n" + std::string(kSchema) + "  - name: note\n    approval: sometimes\n" + kSchema);
  EXPECT_NE(problems.find("approvers must name someone"), std::string::npos) << problems;
  EXPECT_NE(problems.find("ttl_s"), std::string::npos) << problems;
  EXPECT_NE(problems.find("remember"), std::string::npos) << problems;
  EXPECT_NE(problems.find("about"), std::string::npos) << problems;
  EXPECT_NE(problems.find("unknown key 'frobnicate' in approval"), std::string::npos) << problems;
  EXPECT_NE(problems.find("agent.yaml:8:5: 'approval' must be one of required none, got 'sometimes'"),
            std::string::npos) << problems;
}

constexpr const char* kScoped = R"(  - name: find_patient
    entities: { produces: { patient: "$.data.patients[*].id" } }
    input_schema: { type: object }
  - name: list_prescriptions
    entities:
      consumes: { patient_id: patient }
      produces: { prescription: "$.data.prescriptions[*].id" }
      scope: { prescription: patient_id }
    input_schema: { type: object, properties: { patient_id: { type: string } } }
)";

TEST(ApprovalConfigTest, AScopedEntityIsReadAndAConsumerPairsIt) {
  AgentConfig config;
  ASSERT_EQ(Problems(std::string(kScoped) + R"(  - name: refill
    entities:
      consumes: { patient_id: patient, prescription_id: prescription }
      belongs_to: { prescription_id: patient_id }
    input_schema: { type: object, properties: { patient_id: { type: string }, prescription_id: { type: string } } }
)",
                     &config),
            "");
  EXPECT_EQ(config.tools[1].scope.at("prescription"), "patient_id");
  EXPECT_EQ(config.tools[2].belongs_to.at("prescription_id"), "patient_id");
}

TEST(ApprovalConfigTest, AScopeOrAPairingThatCannotHoldIsAnError) {
  std::string problems = Problems(std::string(kScoped) + R"(  - name: refill
    entities:
      consumes: { patient_id: patient, prescription_id: prescription, note_id: patient }
      belongs_to: { prescription_id: owner_id, note_id: patient_id, invoice_id: patient_id }
      scope: { invoice: patient_id }
    input_schema: { type: object, properties: { patient_id: { type: string }, prescription_id: { type: string } } }
)");
  EXPECT_NE(problems.find("entities.scope names 'invoice', which refill does not produce"), std::string::npos)
      << problems;
  EXPECT_NE(problems.find("'owner_id' is not an argument of refill"), std::string::npos) << problems;
  EXPECT_NE(problems.find("entities.belongs_to names 'invoice_id', which is not in refill's entities.consumes"),
            std::string::npos) << problems;
  EXPECT_NE(problems.find("no tool scopes entity 'patient'"), std::string::npos) << problems;
}

}  // namespace
}  // namespace reins
