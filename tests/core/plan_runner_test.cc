#include "pipeline/plan_runner.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

AgentConfig WithSearch() {
  AgentConfig config;
  ToolDef search;
  search.name = "webSearch";
  config.tools = {search};
  config.plan.validation = ValidationMode::kStrict;
  return config;
}

TEST(PlanParseTest, ReadsStepsWithDefaults) {
  auto plan = ParsePlan(Json::parse(R"({"steps": [
      {"id": "s1", "description": "search", "stepType": "tool", "requiredTools": ["webSearch"], "toolValidationMode": "lenient"},
      {"id": "s2", "description": "think"}]})"),
                        WithSearch());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ((*plan)[0].step_type, "tool");
  EXPECT_EQ((*plan)[0].validation_mode, ValidationMode::kLenient);  // the item overrides the plan
  EXPECT_EQ((*plan)[1].step_type, "reasoning");      // no stepType: a reasoning step
  EXPECT_EQ((*plan)[1].validation_mode, ValidationMode::kStrict);
}

TEST(PlanParseTest, RefusesSchemaViolationsWithTheValidatorsMessage) {
  auto empty = ParsePlan(Json::parse(R"({"steps": []})"), WithSearch());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("does not match its schema"), std::string::npos);
  EXPECT_FALSE(ParsePlan(Json::parse(R"({"steps": [{"id": "s1"}]})"), WithSearch()).ok());
  EXPECT_FALSE(ParsePlan(Json::parse(R"({"steps": [{"id": "s1", "description": "d", "stepType": "magic"}]})"),
                         WithSearch()).ok());
  EXPECT_FALSE(ParsePlan(Json::parse(R"([1, 2])"), WithSearch()).ok());
}

TEST(PlanParseTest, RefusesUnknownRequiredTools) {
  auto plan = ParsePlan(Json::parse(R"({"steps": [{"id": "s1", "description": "d", "requiredTools": ["nope"]}]})"),
                        WithSearch());
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("unknown tool 'nope'"), std::string::npos);
}

}  // namespace
}  // namespace reins
