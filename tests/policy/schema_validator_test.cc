#include "schema/schema_validator.h"

#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace reins {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

SchemaValidator MustCompile(const Json& schema) {
  auto compiled = SchemaValidator::Compile(schema);
  EXPECT_TRUE(compiled.ok()) << compiled.status().ToString();
  return compiled.ok() ? std::move(compiled).value() : SchemaValidator::Compile(true).value();
}

const Json kTransfer = Json::parse(R"({
  "type": "object",
  "properties": {
    "recipient_id": {"type": "string", "minLength": 3},
    "amount": {"type": "number", "minimum": 0},
    "currency": {"enum": ["EUR", "USD"]},
    "memo": {"type": "string", "pattern": "^[a-z ]*$"}
  },
  "required": ["recipient_id", "amount"],
  "additionalProperties": false
})");

TEST(SchemaValidatorTest, ValidArgumentsPass) {
  SchemaValidator v = MustCompile(kTransfer);
  EXPECT_THAT(v.Validate({{"recipient_id", "acct_42"}, {"amount", 10.5}, {"currency", "EUR"}}), IsEmpty());
  EXPECT_TRUE(v.IsValid({{"recipient_id", "acct_42"}, {"amount", 0}}));
}

TEST(SchemaValidatorTest, WrongTypeNamesThePath) {
  SchemaValidator v = MustCompile(kTransfer);
  EXPECT_THAT(v.Validate({{"recipient_id", 42}, {"amount", 1}}),
              ElementsAre("/recipient_id: Value type not permitted by 'type' constraint."));
}

TEST(SchemaValidatorTest, MissingRequiredProperty) {
  SchemaValidator v = MustCompile(kTransfer);
  EXPECT_THAT(v.Validate({{"amount", 1}}), ElementsAre("(root): Missing required property 'recipient_id'."));
}

TEST(SchemaValidatorTest, EnumMinLengthMinimumAndPattern) {
  SchemaValidator v = MustCompile(kTransfer);
  EXPECT_THAT(v.Validate({{"recipient_id", "ab"}, {"amount", -1}, {"currency", "GBP"}, {"memo", "Hi!"}}),
              ElementsAre(HasSubstr("/amount: "), HasSubstr("/currency: Failed to match against any enum values"),
                          "/memo: String does not match pattern '^[a-z ]*$'.", HasSubstr("/recipient_id: ")));
}

TEST(SchemaValidatorTest, AdditionalPropertiesFalse) {
  SchemaValidator v = MustCompile(kTransfer);
  EXPECT_THAT(v.Validate({{"recipient_id", "acct_42"}, {"amount", 1}, {"extra", true}}),
              ElementsAre(HasSubstr("(root): Object contains a property that could not be validated")));
}

TEST(SchemaValidatorTest, NestedErrorsNameTheirJsonPointer) {
  SchemaValidator v = MustCompile(Json::parse(R"({
    "type": "object",
    "properties": {"lines": {"type": "array", "items": {
      "type": "object", "required": ["sku"], "properties": {"sku": {"type": "string"}, "a/b": {"type": "integer"}}
    }}}
  })"));
  EXPECT_TRUE(v.IsValid(Json::parse(R"({"lines": [{"sku": "x"}, {"sku": "y", "a/b": 2}]})")));
  EXPECT_THAT(v.Validate(Json::parse(R"({"lines": [{"sku": "x"}, {"sku": 7, "a/b": 2.5}, {}]})")),
              ElementsAre("/lines/1/a~1b: Value type not permitted by 'type' constraint.",
                          "/lines/1/sku: Value type not permitted by 'type' constraint.",
                          "/lines/2: Missing required property 'sku'."));
}

TEST(SchemaValidatorTest, MinLengthCountsCodePoints) {
  SchemaValidator v = MustCompile({{"type", "string"}, {"minLength", 2}, {"maxLength", 2}});
  EXPECT_TRUE(v.IsValid("\xc3\xa9\xc3\xa9"));  // two é, four bytes
  EXPECT_FALSE(v.IsValid("\xc3\xa9"));
  EXPECT_FALSE(v.IsValid(""));
}

TEST(SchemaValidatorTest, IntegralFloatIsAnInteger) {
  SchemaValidator v = MustCompile({{"type", "integer"}});
  EXPECT_TRUE(v.IsValid(1.0));
  EXPECT_TRUE(v.IsValid(-3));
  EXPECT_FALSE(v.IsValid(1.5));
  EXPECT_FALSE(v.IsValid("1"));
  // Found at any depth (the arguments are copied and normalised only when they hold one).
  SchemaValidator nested = MustCompile(Json::parse(R"({"type": "object", "properties": {
      "n": {"type": "integer"}, "xs": {"type": "array", "items": {"type": "integer"}}}})"));
  EXPECT_TRUE(nested.IsValid(Json::parse(R"({"n": 2.0, "xs": [1, 2.0]})")));
  EXPECT_TRUE(nested.IsValid(Json::parse(R"({"n": 2, "xs": [1, 2]})")));
  const std::vector<std::string> errors = nested.Validate(Json::parse(R"({"n": 2.0, "xs": [1, 2.5]})"));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("/xs/1"), std::string::npos) << errors[0];
}

TEST(SchemaValidatorTest, MultipleOf) {
  SchemaValidator by_int = MustCompile({{"multipleOf", 2}});
  EXPECT_TRUE(by_int.IsValid(10));
  EXPECT_FALSE(by_int.IsValid(4.5));  // valijson alone truncates 4.5 to 4
  EXPECT_TRUE(by_int.IsValid(std::numeric_limits<std::int64_t>::min()));
  EXPECT_TRUE(by_int.IsValid(1e300));  // an exact integer; valijson alone casts it to int64 (UB)
  EXPECT_FALSE(by_int.IsValid(std::numeric_limits<double>::infinity()));
  SchemaValidator by_fraction = MustCompile({{"multipleOf", 0.0001}});
  EXPECT_TRUE(by_fraction.IsValid(0.0075));
  EXPECT_FALSE(by_fraction.IsValid(0.00751));
}

TEST(SchemaValidatorTest, Formats) {
  SchemaValidator date = MustCompile({{"type", "string"}, {"format", "date"}});
  EXPECT_TRUE(date.IsValid("2024-02-29"));
  EXPECT_FALSE(date.IsValid("2023-02-29"));
  EXPECT_FALSE(date.IsValid("2024-13-01"));
  EXPECT_FALSE(date.IsValid("tomorrow"));
  SchemaValidator date_time = MustCompile({{"format", "date-time"}});
  EXPECT_TRUE(date_time.IsValid("2024-05-01T16:52:45.5+02:00"));
  EXPECT_FALSE(date_time.IsValid("2024-05-01 16:52"));
  EXPECT_TRUE(date_time.IsValid(12));  // format only applies to strings
  EXPECT_TRUE(MustCompile({{"format", "email"}}).IsValid("not an email"));  // annotation only
}

TEST(SchemaValidatorTest, EcmaPatternSpellings) {
  EXPECT_TRUE(MustCompile({{"pattern", "^\\u00e9$"}}).IsValid("\xc3\xa9"));
  EXPECT_TRUE(MustCompile({{"pattern", "^(?<year>\\d{4})$"}}).IsValid("2024"));
  auto lookahead = SchemaValidator::Compile({{"pattern", "^(?=a)"}});
  ASSERT_FALSE(lookahead.ok());
  EXPECT_THAT(lookahead.status().message(), HasSubstr("'pattern' ^(?=a) is not supported"));
}

TEST(SchemaValidatorTest, LocalRefsDefinitionsAndEmbeddedIds) {
  SchemaValidator v = MustCompile(Json::parse(R"({
    "$id": "http://example.com/root.json",
    "$defs": {"name": {"type": "string", "minLength": 1}},
    "definitions": {
      "node": {"$id": "node.json", "type": "object", "properties": {"child": {"$ref": "node.json"}},
               "additionalProperties": false},
      "tag": {"$id": "#tag", "enum": ["a", "b"]}
    },
    "properties": {"name": {"$ref": "#/$defs/name"}, "tree": {"$ref": "node.json"},
                   "tag": {"$ref": "#tag"}}
  })"));
  EXPECT_TRUE(v.IsValid(Json::parse(R"({"name": "x", "tree": {"child": {"child": {}}}, "tag": "a"})")));
  EXPECT_THAT(v.Validate(Json::parse(R"({"name": "", "tree": {"child": {"other": 1}}, "tag": "c"})")),
              SizeIs(3));
}

TEST(SchemaValidatorTest, BadSchemaIsReported) {
  for (const char* bad : {R"({"type": 5})", R"({"required": "x"})", R"({"properties": []})",
                          R"({"minLength": -1})", R"({"multipleOf": 0})", R"({"pattern": "["})",
                          R"({"patternProperties": {"[": {}}})", R"({"$ref": "#/definitions/missing"})", "[]",
                          R"({"$ref": "#"})", R"({"anyOf": [{"$ref": "#/definitions/a"}], "definitions": {"a":
                             {"not": {"$ref": "#"}}}})"}) {
    auto compiled = SchemaValidator::Compile(Json::parse(bad));
    ASSERT_FALSE(compiled.ok()) << bad;
    EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(compiled.status().message(), HasSubstr("schema: ")) << bad;
  }
  EXPECT_EQ(SchemaValidator::Compile({{"type", 5}}).status().message(), "schema: 'type' must be a string or array");
}

TEST(SchemaValidatorTest, RemoteRefIsRefusedWithoutFetching) {
  auto remote = SchemaValidator::Compile({{"$ref", "http://json-schema.org/draft-07/schema#"}});
  ASSERT_FALSE(remote.ok());
  EXPECT_EQ(remote.status().message(), "remote $ref is not supported: http://json-schema.org/draft-07/schema#");
  auto nested = SchemaValidator::Compile(
      Json::parse(R"({"$id": "https://x.test/a/s.json", "properties": {"p": {"$ref": "other.json#/q"}}})"));
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().message(), "remote $ref is not supported: https://x.test/a/other.json#/q");
}

TEST(SchemaValidatorTest, BooleanSchemas) {
  EXPECT_TRUE(MustCompile(true).IsValid({{"anything", 1}}));
  EXPECT_THAT(MustCompile(false).Validate(1), ElementsAre("(root): value does not match the schema"));
}

Json Nest(int depth, bool objects) {
  Json value = 1;
  for (int i = 0; i < depth; ++i) {
    Json outer = objects ? Json::object() : Json::array();
    if (objects) {
      outer["a"] = std::move(value);
    } else {
      outer.push_back(std::move(value));
    }
    value = std::move(outer);
  }
  return value;
}

TEST(SchemaValidatorTest, DeeplyNestedGarbageDoesNotCrash) {
  SchemaValidator recursive = MustCompile(Json::parse(R"({"anyOf": [{"type": "integer"},
      {"type": "array", "items": {"$ref": "#"}}, {"type": "object", "additionalProperties": {"$ref": "#"}}]})"));
  EXPECT_TRUE(recursive.IsValid(Nest(127, false)));  // 128 levels: the most accepted
  EXPECT_TRUE(recursive.IsValid(Nest(127, true)));
  EXPECT_THAT(recursive.Validate(Nest(128, true)), ElementsAre("(root): value nests deeper than 128 levels"));
  for (bool objects : {false, true}) {
    Json deep = Nest(200000, objects);
    EXPECT_THAT(recursive.Validate(deep), ElementsAre("(root): value nests deeper than 128 levels"));
    EXPECT_FALSE(MustCompile({{"uniqueItems", true}, {"enum", {1, 2}}}).IsValid(deep));
  }
  EXPECT_FALSE(SchemaValidator::Compile(Nest(100000, true)).ok());
}

TEST(SchemaValidatorTest, HostileValuesDoNotCrash) {
  SchemaValidator v = MustCompile(Json::parse(R"({
    "type": "object",
    "properties": {"s": {"type": "string", "pattern": "^[a-z]+$", "format": "date-time", "maxLength": 5}},
    "patternProperties": {"^x-[a-z]+$": {"type": "integer"}},
    "additionalProperties": {"type": ["string", "number", "null", "array"], "multipleOf": 3, "uniqueItems": true}
  })"));
  // std::regex would overflow the stack on these (one frame per character).
  EXPECT_THAT(v.Validate({{"s", std::string(1 << 20, 'a')}}), SizeIs(2));  // maxLength and format
  EXPECT_THAT(v.Validate({{std::string(1 << 20, 'x'), 1}}), ElementsAre(HasSubstr("property name longer")));
  Json garbage = {{"s", "\xff\xfe\xc3"},
                  {"n", std::numeric_limits<double>::quiet_NaN()},
                  {"i", std::numeric_limits<double>::infinity()},
                  {"u", std::numeric_limits<std::uint64_t>::max()},
                  {"m", std::numeric_limits<std::int64_t>::min()},
                  {"a", Json::array({1, 1.0, "1", nullptr, Json::array(), Json::object()})},
                  {"x-y", -0.0}};
  EXPECT_THAT(v.Validate(garbage), Not(IsEmpty()));
  for (const Json& value : {Json(), Json(true), Json("str"), Json::array(), Json::binary({1, 2, 3})}) {
    EXPECT_NO_THROW(v.Validate(value));
  }
}

TEST(SchemaValidatorTest, PatternPropertiesNeverBacktrack) {
  // std::regex takes seconds on a 27-character name against ^(a+)+$, and doubles with
  // every character more; under RE2 this is linear.
  SchemaValidator v = MustCompile(Json::parse(R"({
    "type": "object",
    "patternProperties": {"^(a+)+$": {"type": "integer"}, "^(a|aa)+$": {"type": "integer"}},
    "additionalProperties": false
  })"));
  const std::string evil = std::string(200, 'a') + "!";
  EXPECT_THAT(v.Validate({{evil, 1}}), Not(IsEmpty())) << "not matched, so additional: refused";
  EXPECT_THAT(v.Validate({{std::string(200, 'a'), 1}}), IsEmpty());
  EXPECT_THAT(v.Validate({{std::string(200, 'a'), "x"}}), ElementsAre(HasSubstr("/aaaa")));
}

TEST(SchemaValidatorTest, PatternPropertiesKeepTheirMeaning) {
  SchemaValidator v = MustCompile(Json::parse(R"({
    "type": "object",
    "properties": {"id": {"type": "string"}},
    "patternProperties": {"^x-": {"type": "integer"}, "[0-9]$": {"$ref": "#/patternProperties/%5Ex-"}},
    "additionalProperties": false
  })"));
  EXPECT_THAT(v.Validate({{"id", "a"}, {"x-a", 1}, {"b9", 2}, {"x-9", 3}}), IsEmpty());
  EXPECT_THAT(v.Validate({{"x-a", "no"}}), SizeIs(1));
  EXPECT_THAT(v.Validate({{"b9", "no"}}), SizeIs(1)) << "a $ref into patternProperties follows the renamed key";
  EXPECT_THAT(v.Validate({{"other", 1}}), SizeIs(1));
  EXPECT_THAT(v.Validate({{"a.b|c", 1}}), SizeIs(1)) << "regex syntax in a name is only text";
  EXPECT_FALSE(SchemaValidator::Compile(Json::parse(R"js({"patternProperties": {"(?=x)": {}}})js")).ok())
      << "RE2 cannot express lookarounds: refused when compiled, as for 'pattern'";
}

TEST(SchemaValidatorTest, CopiesShareStateAndAreThreadSafe) {
  const SchemaValidator original = MustCompile(kTransfer);
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([copy = original, &wrong, t] {
      for (int i = 0; i < 300; ++i) {
        Json args = {{"recipient_id", "acct_" + std::to_string(i)}, {"amount", i}, {"memo", i % 2 ? "ok" : "NO"}};
        if (copy.IsValid(args) != (i % 2 == 1)) ++wrong[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(wrong, ::testing::Each(0));
}

}  // namespace
}  // namespace reins
