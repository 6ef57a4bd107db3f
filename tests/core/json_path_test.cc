#include "domain/json_path.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

TEST(JsonPathTest, SelectsEveryIdUnderAWildcard) {
  auto path = JsonPath::Parse("$.data.contacts[*].id");
  ASSERT_TRUE(path.ok()) << path.status().message();
  Json doc = Json::parse(R"({"data": {"contacts": [{"id": "a"}, {"id": "b"}, {"name": "no id"}]}})");
  auto selected = path->Select(doc);
  ASSERT_EQ(selected.size(), 2u);
  EXPECT_EQ(*selected[0], "a");
  EXPECT_EQ(*selected[1], "b");
}

TEST(JsonPathTest, IndexAndMissingKeysSelectNothingWhenAbsent) {
  auto path = JsonPath::Parse("$.items[1].id");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->Select(Json::parse(R"({"items": [{"id": 1}]})")).size(), 0u);
  Json doc = Json::parse(R"({"items": [{"id": 1}, {"id": 2}]})");
  auto hit = path->Select(doc);
  ASSERT_EQ(hit.size(), 1u);
  EXPECT_EQ(*hit[0], 2);
}

TEST(JsonPathTest, RootAloneSelectsTheDocument) {
  auto path = JsonPath::Parse("$");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->Select(Json(5)).size(), 1u);
}

TEST(JsonPathTest, RejectsSyntaxOutsideTheSubset) {
  for (const char* bad : {"data.id", "$..id", "$.a[?(@.x)]", "$.a[", "$.", "$.a b"}) {
    auto path = JsonPath::Parse(bad);
    EXPECT_FALSE(path.ok()) << bad;
  }
  EXPECT_NE(JsonPath::Parse("$..id").status().message().find("supported"), std::string::npos);
}

}  // namespace
}  // namespace reins
