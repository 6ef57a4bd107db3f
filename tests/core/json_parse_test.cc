// ParseJson: nesting is bounded while parsing, so no deep value is ever built.
#include "domain/json_parse.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

TEST(ParseJson, StopsAtTheDepthLimitWithAClearError) {
  for (const std::string& open : {std::string("["), std::string("{\"k\":")}) {
    std::string deep;
    for (int i = 0; i < 100000; ++i) deep += open;  // unterminated too: the limit comes first
    Result<Json> parsed = ParseJson(deep);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), "JSON nested deeper than 128 levels");
  }
}

TEST(ParseJson, AcceptsExactlyTheLimit) {
  std::string at = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJson(at).ok());
  std::string over = "[" + at + "]";
  EXPECT_FALSE(ParseJson(over).ok());
  EXPECT_TRUE(ParseJson(over, kMaxJsonDepth + 1).ok());
}

TEST(ParseJson, GivesTheSameValuesAsTheLibrary) {
  for (const char* text : {R"({"a":[1,2.5,-3,"x\u00e9",true,null,{"b":{}}],"c":18446744073709551615})", "[]", "\"s\"",
                           "0", "{\"dup\":1,\"dup\":2}"}) {
    Result<Json> ours = ParseJson(text);
    ASSERT_TRUE(ours.ok()) << text;
    EXPECT_EQ(*ours, Json::parse(text)) << text;
  }
}

TEST(ParseJson, ReportsSyntaxErrorsWithTheirPosition) {
  for (const char* text : {"{", "[1,", "{\"a\" 1}", "", "nul", "\"\xff\"", "[1] x"}) {
    Result<Json> parsed = ParseJson(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().message().rfind("invalid JSON", 0), 0u) << parsed.status().message();
    EXPECT_TRUE(ParseJsonOrDiscarded(text).is_discarded()) << text;
  }
}

}  // namespace
}  // namespace reins
