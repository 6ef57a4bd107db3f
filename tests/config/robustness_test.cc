// Untrusted input never crashes: random and truncated YAML, random JSON tool results,
// random model arguments. Deterministic (seeded), so a failure reproduces.
#include <cstdio>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "config/agent_config_loader.h"
#include "schema/schema_validator.h"
#include "reins/envelope.h"
#include "reins/message.h"

namespace reins {
namespace {

constexpr const char* kAgent = R"(name: messaging
model: { provider: scripted }
tools:
  - name: lookup_contacts
    may_clarify: true
    entities: { produces: { contact: "$.data.contacts[*].id" } }
    input_schema: { type: object, properties: { query: { type: string } }, required: [query] }
intents: [ { name: x, match: '(?i)tell', required_tools: [lookup_contacts] } ]
)";

std::string Mutate(std::string text, std::mt19937& rng) {
  std::uniform_int_distribution<int> op(0, 3), byte(0, 255);
  int edits = 1 + static_cast<int>(rng() % 8);
  for (int i = 0; i < edits && !text.empty(); ++i) {
    size_t at = rng() % text.size();
    switch (op(rng)) {
      case 0: text[at] = static_cast<char>(byte(rng)); break;
      case 1: text.erase(at, 1 + rng() % 10); break;
      case 2: text.insert(at, 1, "{}[]:-'\"\n #&*!|>"[rng() % 16]); break;
      default: text = text.substr(0, at); break;
    }
  }
  return text;
}

TEST(RobustnessTest, MutatedAgentYamlNeverCrashesAndErrorsHavePositions) {
  std::mt19937 rng(1234);
  int rejected = 0;
  for (int i = 0; i < 2000; ++i) {
    Diagnostics diag;
    LocatedDoc doc = ParseYaml(Mutate(kAgent, rng), "fuzz.yaml", diag);
    AgentConfig config;
    if (diag.empty()) ParseAgentConfig(doc, "", ".", diag, &config);
    if (!diag.empty()) {
      ++rejected;
      for (const Diagnostic& d : diag.items()) {
        EXPECT_EQ(d.mark.file, "fuzz.yaml");
        EXPECT_FALSE(d.message.empty());
      }
    }
  }
  EXPECT_GT(rejected, 500);  // the mutations really do break things
}

Json RandomJson(std::mt19937& rng, int depth) {
  static const char* kKeys[] = {"success", "next_action", "data", "clarification", "options", "id",
                                "question", "error", "lease", "ttl_s", "domain", "title"};
  switch (depth > 3 ? rng() % 4 : rng() % 7) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: return static_cast<int>(rng() % 200) - 100;
    case 3: return std::string(1 + rng() % 3, static_cast<char>('a' + rng() % 26));
    case 4: return "clarification_needed";
    case 5: {
      Json a = Json::array();
      for (unsigned n = rng() % 4; n > 0; --n) a.push_back(RandomJson(rng, depth + 1));
      return a;
    }
    default: {
      Json o = Json::object();
      for (unsigned n = rng() % 5; n > 0; --n) o[kKeys[rng() % 12]] = RandomJson(rng, depth + 1);
      return o;
    }
  }
}

TEST(RobustnessTest, RandomToolResultsAlwaysNormaliseToAConsistentEnvelope) {
  std::mt19937 rng(99);
  for (int i = 0; i < 20000; ++i) {
    const Json raw = RandomJson(rng, 0);
    ResultEnvelope e = NormaliseToolResult(Json(raw));  // the result moved in
    // Moved in or read, the same envelope.
    EXPECT_EQ(EnvelopeToJson(e), EnvelopeToJson(NormaliseToolResult(raw))) << raw.dump();
    if (e.next_action == NextAction::kError) {
      EXPECT_FALSE(e.success);
    }
    if (!e.success) {
      EXPECT_FALSE(e.error.empty());
    }
    if (e.next_action == NextAction::kClarificationNeeded) {
      ASSERT_TRUE(e.clarification.has_value());
      EXPECT_FALSE(e.clarification->options.empty());
      for (const ClarificationOption& o : e.clarification->options) EXPECT_FALSE(o.id.empty());
    }
  }
}

TEST(RobustnessTest, RandomArgumentsNeverCrashTheValidator) {
  auto validator = SchemaValidator::Compile(Json::parse(
      R"({"type": "object", "properties": {"id": {"type": "string", "pattern": "^u_[a-z]+$"},
          "n": {"type": "integer", "minimum": 0}, "tags": {"type": "array", "items": {"enum": ["a", "b"]}}},
          "required": ["id"], "additionalProperties": false})"));
  ASSERT_TRUE(validator.ok());
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) validator->Validate(RandomJson(rng, 0));
  // Garbage argument text from a model parses to "discarded", never throws.
  for (int i = 0; i < 2000; ++i) {
    std::string text = Mutate(R"({"id": "u_doe", "n": 3, "tags": ["a"]})", rng);
    Message m;
    Json j = {{"role", "assistant"}, {"tool_calls", Json::array({{{"id", "c"}, {"name", "x"}, {"arguments", text}}})}};
    ASSERT_TRUE(MessageFromJson(j, &m));
    if (m.tool_calls[0].args_valid) validator->Validate(m.tool_calls[0].args);
  }
}

TEST(RobustnessTest, AYamlAliasBombIsRefusedNotExpanded) {
  // "Billion laughs": each level repeats the one before nine times; 9^9 values once expanded.
  std::string bomb = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    const char prev = static_cast<char>(c - 1);
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 9; ++i) bomb += std::string(i ? ", *" : "*") + prev;
    bomb += "]\n";
  }
  ASSERT_LT(bomb.size(), 1000u);
  Diagnostics diag;
  ParseYaml(bomb, "bomb.yaml", diag);
  ASSERT_FALSE(diag.empty());
  EXPECT_NE(diag.Format().find("expands to more than 200000 values"), std::string::npos) << diag.Format();
}

// Issue 74, finding 9: `store: sqlite::memory:` as the docs wrote it is "illegal map
// value"; the error says to quote it, and how.
TEST(RobustnessTest, AnUnquotedValueWithAColonGetsAQuotingHint) {
  Diagnostics diag;
  ParseYaml("name: x\nstore: sqlite::memory:\n", "agent.yaml", diag);
  ASSERT_FALSE(diag.empty());
  EXPECT_NE(diag.Format().find("must be quoted: store: \"sqlite::memory:\""), std::string::npos) << diag.Format();
  Diagnostics quoted;
  LocatedDoc doc = ParseYaml("name: x\nstore: \"sqlite::memory:\"\n", "agent.yaml", quoted);
  EXPECT_TRUE(quoted.empty()) << quoted.Format();
  EXPECT_EQ(doc.value["store"], "sqlite::memory:");
}

TEST(RobustnessTest, DeepYamlNestingIsADiagnosticNotACrash) {
  for (const std::string& deep : {std::string(100000, '[') + std::string(100000, ']'),
                                  std::string(100000, '{') + std::string(100000, '}')}) {
    Diagnostics diag;
    ParseYaml(deep, "deep.yaml", diag);
    EXPECT_FALSE(diag.empty());
  }
  std::string nested = "v";
  for (int i = 0; i < 70; ++i) nested = "[" + nested + "]";
  Diagnostics diag;
  ParseYaml("x: " + nested, "deep.yaml", diag);
  EXPECT_NE(diag.Format().find("deeper than 64 levels"), std::string::npos) << diag.Format();
}

TEST(RobustnessTest, OversizedAndOddFilesAreRefusedBeforeParsing) {
  const std::string path = ::testing::TempDir() + "reins_big.yaml";
  {
    std::ofstream out(path);
    out << "name: big\nsystem_prompt: \"" << std::string(5 << 20, 'x') << "\"\n";
  }
  Diagnostics diag;
  LoadYamlFile(path, diag);
  EXPECT_NE(diag.Format().find("larger than 4 MiB"), std::string::npos) << diag.Format();
  std::remove(path.c_str());
  Diagnostics dir;
  LoadYamlFile(::testing::TempDir(), dir);
  EXPECT_NE(dir.Format().find("is a directory"), std::string::npos) << dir.Format();
}

}  // namespace
}  // namespace reins
