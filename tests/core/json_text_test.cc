#include "domain/json_text.h"

#include <random>

#include "domain/json_parse.h"
#include "reins/clock.h"
#include "reins/turn.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

std::string Reference(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json RandomValue(std::mt19937& rng, int depth) {
  static const std::vector<std::string> kStrings = {
      "", "plain", "quote \" and \\ backslash", "tab\tnew\nline", "caf\xc3\xa9", "\xe2\x9c\x93 check",
      "bad \xff byte", "ctrl \x01", "emoji \xf0\x9f\x99\x8f", "truncated \xe2\x9c"};
  switch (depth > 3 ? rng() % 6 : rng() % 8) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: return static_cast<int64_t>(rng()) - static_cast<int64_t>(rng());
    case 3: return static_cast<uint64_t>(rng()) << 20;
    case 4: return static_cast<double>(rng() % 100000) / 7.0;
    case 5: return kStrings[rng() % kStrings.size()];
    case 6: {
      Json a = Json::array();
      for (unsigned n = rng() % 4; n > 0; --n) a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      Json o = Json::object();
      for (unsigned n = rng() % 4; n > 0; --n) o[kStrings[rng() % kStrings.size()]] = RandomValue(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonTextTest, MatchesTheLibrarysCompactDumpExactly) {
  std::mt19937 rng(2026);
  for (int i = 0; i < 20000; ++i) {
    Json value = RandomValue(rng, 0);
    ASSERT_EQ(JsonText(value), Reference(value)) << "value #" << i;
  }
}

// Each plain member of random objects is found as the text of its value, whatever the
// members before it hold (quotes, escapes, nested brackets); absent names are not;
// whitespace between the tokens changes nothing.
TEST(MemberTextTest, FindsEachMembersValueWithoutParsingTheRest) {
  std::mt19937 rng(2027);
  for (int i = 0; i < 5000; ++i) {
    Json object = Json::object();
    for (const char* key : {"a", "plain", "b"}) {
      if (rng() % 3 != 0) object[key] = RandomValue(rng, 1);
    }
    object["quote \" and \\ backslash"] = RandomValue(rng, 1);
    object["z"] = RandomValue(rng, 1);
    const std::string text = JsonText(object);
    const std::string spaced = object.dump(2, ' ', false, Json::error_handler_t::replace);  // pretty-printed
    for (const char* key : {"a", "plain", "b", "z", "missing"}) {
      const std::optional<std::string_view> found = MemberText(text, key);
      ASSERT_EQ(found.has_value(), object.contains(key)) << key << " in " << text;
      if (!found) continue;
      ASSERT_EQ(*found, JsonText(object[key])) << key << " in " << text;
      const std::optional<std::string_view> in_spaced = MemberText(spaced, key);
      ASSERT_TRUE(in_spaced.has_value()) << key << " in " << spaced;
      ASSERT_EQ(ParseJsonOrDiscarded(*in_spaced), ParseJsonOrDiscarded(*found)) << key << " in " << spaced;
    }
  }
  EXPECT_FALSE(MemberText("[1]", "a").has_value());
  EXPECT_FALSE(MemberText("{}", "a").has_value());
  EXPECT_FALSE(MemberText("", "a").has_value());
  EXPECT_EQ(MemberText(R"({"a":{"a":1},"b":"}"})", "b"), R"("}")");
}

TEST(MemberTextTest, ReadsAStringOrAnIntegerMember) {
  const std::string object = R"({"q":"say \"hi\" caf\u00e9","s":"plain","n":-12,"f":1.5,"b":true})";
  EXPECT_EQ(MemberString(object, "q"), "say \"hi\" caf\xc3\xa9");
  EXPECT_EQ(MemberString(object, "s"), "plain");
  EXPECT_EQ(MemberString(object, "n"), std::nullopt);
  EXPECT_EQ(MemberInt(object, "n"), -12);
  EXPECT_EQ(MemberInt(object, "f"), std::nullopt);
  EXPECT_EQ(MemberInt(object, "s"), std::nullopt);
  EXPECT_EQ(MemberInt(object, "missing"), std::nullopt);
  // A string's text is its value only when nothing in it is escaped.
  EXPECT_EQ(UnescapedString(*MemberText(object, "s")), "plain");
  EXPECT_EQ(UnescapedString(*MemberText(object, "q")), std::nullopt);
  EXPECT_EQ(UnescapedString(*MemberText(object, "n")), std::nullopt);
}

TEST(JsonTextTest, EdgeValues) {
  for (const Json& v : {Json(INT64_MIN), Json(INT64_MAX), Json(UINT64_MAX), Json(0), Json(-0.0), Json(1e300),
                        Json::object(), Json::array(), Json("")}) {
    EXPECT_EQ(JsonText(v), Reference(v)) << v.dump();
  }
}

// Strings are checked eight bytes at a time, and the last few as one word: every byte
// value at every place of strings of every length up to three words and a tail, so
// each lane of a word, each tail and each short string is covered.
TEST(JsonTextTest, EveryByteAtEveryPlaceOfAString) {
  const std::string letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ";
  for (size_t length = 1; length <= letters.size(); ++length) {
    const std::string plain = letters.substr(0, length);
    for (size_t at = 0; at < length; ++at) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string s = plain;
        s[at] = static_cast<char>(byte);
        std::string out;
        AppendJsonString(out, s);
        ASSERT_EQ(out, Reference(Json(s))) << "byte " << byte << " at " << at << " of " << length;
        std::string key;
        AppendJsonKey(key, s);
        ASSERT_EQ(key, Reference(Json(s)) + ":") << "byte " << byte << " at " << at << " of " << length;
      }
    }
  }
}

// Multi-byte sequences are copied when well-formed and left to the library when not:
// every pair of bytes, and every lead byte with continuation bytes from each boundary
// of Unicode's table (overlong, surrogate, past U+10FFFF), cut short at the end too.
TEST(JsonTextTest, EveryByteSequenceIsCopiedOrReplacedAsTheLibraryDoes) {
  auto check = [](const std::string& s) {
    std::string out;
    AppendJsonString(out, s);
    std::string hex;
    for (unsigned char c : s) hex += "0123456789abcdef"[c >> 4], hex += "0123456789abcdef"[c & 0xF], hex += ' ';
    ASSERT_EQ(out, Reference(Json(s))) << "bytes " << hex;
  };
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string pair = {static_cast<char>(a), static_cast<char>(b)};
      check("x\"" + pair + "y");
      check("x\"" + pair);
    }
  }
  for (const char* run : {"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"", "\\\n\\\t\"\x01\x1f\\\\\"", "{\"a\":\"caf\xC3\xA9\"}{\"b\":[\"\\u00e9\"]}"}) {
    check(run);
  }
  const std::vector<int> kEdges = {0x00, 0x22, 0x41, 0x5C, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xE0, 0xF0, 0xFF};
  for (int lead = 0xC0; lead < 256; ++lead) {
    for (int b : kEdges) {
      for (int c : kEdges) {
        for (int d : kEdges) {
          const std::string seq = {static_cast<char>(lead), static_cast<char>(b), static_cast<char>(c),
                                   static_cast<char>(d)};
          check("\n" + seq + "\\");
          check("q\"" + seq.substr(0, 3));
        }
      }
    }
  }
}

TEST(JsonTextTest, AMessageIsWrittenAsItsJsonWouldBe) {
  ToolCall call;
  call.id = "c1";
  call.name = "lookup";
  call.arguments_text = R"({"city":"Par\u00eds"})";
  ToolCall bare;
  std::vector<Message> messages = {
      Message::System("Be brief."), Message::User("caf\xC3\xA9 \"quoted\"\n", "Ana"), Message::User("no speaker"),
      Message::Assistant(""), Message::Assistant("Looking", {call, bare}),
      Message::Tool("c1", "lookup", R"({"success":true})", false), Message::Tool("", "", "bad \xFF", true)};
  Message odd = Message::Tool("c2", "t", "x", false);
  odd.speaker = "svc";
  odd.tool_calls = {call};  // a tool message never has calls, but its text must still match
  messages.push_back(odd);
  for (const Message& m : messages) {
    std::string text;
    AppendMessageText(text, m);
    EXPECT_EQ(text, Reference(MessageToJson(m)));
  }
}

TEST(JsonObjectTest, IsTheValueOfTheInitializerList) {
  const std::string name = "lookup";
  const Json args = {{"city", "Paris"}};
  std::string_view status = "executed";
  EXPECT_EQ(JsonObject("name", name, "args", args, "status", status, "n", 3, "ok", true, "none", nullptr),
            Json({{"name", name}, {"args", args}, {"status", status}, {"n", 3}, {"ok", true}, {"none", nullptr}}));
  EXPECT_EQ(JsonObject(), Json::object());
  EXPECT_EQ(JsonObject("k", 1, "k", 2), Json({{"k", 1}, {"k", 2}}));  // the first of two equal keys
  EXPECT_EQ(JsonObject("k", 1, "k", 2)["k"], 1);
}

// The turn result's text is the HTTP API's shape, members in key order (as a DOM of it
// would be written), every member a turn can have filled in.
TEST(JsonTextTest, ATurnResultIsWrittenAsTheApiShapesIt) {
  TurnResult r;
  r.turn_id = "t_1";
  r.status = TurnStatus::kAwaitingClarification;
  r.reply = "Which \"Ana\"?";
  r.error = "none";
  r.blocked_reason = "held";
  r.lease = Lease{"ana", "prayer", 0, 3};
  PendingClarification pc;
  pc.id = "c_1";
  pc.clarification.type = "choose";
  pc.clarification.question = "Which one?";
  pc.clarification.options = {{"p1", "Ana", "", 0.9, nullptr}};
  r.clarification = pc;
  r.approval = PendingApproval{"a_1", "send", {{"to", "x"}}, "", {}};
  PlanStep step;
  step.id = "s1";
  r.plan = {step};
  r.audit = {{"verdict", "ok"}};
  ToolOutcome ran;
  ran.name = "lookup";
  ran.args = {{"city", "Par\xC3\xADs"}};
  ran.status = ToolOutcome::Status::kExecuted;
  ran.latency_ms = 7;
  ran.result = ResultEnvelope{};
  ran.result->success = false;
  ToolOutcome refused;
  refused.name = "send";
  refused.status = ToolOutcome::Status::kRejected;
  refused.reason = "schema";
  refused.message = "'to' is missing";
  r.tools = {ran, refused};
  r.rails = {"empathy_first"};
  r.notices = {"n1", "n2"};

  Json clarification = ClarificationToJson(pc.clarification);
  clarification["id"] = "c_1";
  Json expected = {
      {"approval",
       {{"id", "a_1"}, {"tool", "send"}, {"args", {{"to", "x"}}}, {"reason", "policy"}, {"approvers", Json::array({"requester"})}}},
      {"audit", {{"verdict", "ok"}}},
      {"blocked_reason", "held"},
      {"clarification", clarification},
      {"error", "none"},
      {"lease", {{"owner", "ana"}, {"domain", "prayer"}, {"expires_at", FormatIsoTime(0)}}},
      {"notices", {"n1", "n2"}},
      {"plan", {{"steps", {PlanStepToJson(step)}}}},
      {"rails", {"empathy_first"}},
      {"reply", "Which \"Ana\"?"},
      {"status", "awaiting_clarification"},
      {"tools",
       {{{"name", "lookup"}, {"args", {{"city", "Par\xC3\xADs"}}}, {"status", "executed"}, {"success", false},
         {"next_action", "continue"}, {"latency_ms", 7}},
        {{"name", "send"}, {"args", nullptr}, {"status", "rejected"}, {"reason", "schema"}, {"message", "'to' is missing"}}}},
      {"turn_id", "t_1"}};
  EXPECT_EQ(TurnResultText(r, true), Reference(expected));
  EXPECT_EQ(TurnResultToJson(r, true), expected);
  expected["tools"] = Json::array();
  EXPECT_EQ(TurnResultText(r, false), Reference(expected));

  Json deep = "bottom";  // arguments as deep as a model's may be, a few levels down in the result
  for (int i = 0; i < kMaxJsonDepth - 1; ++i) deep = Json::array({deep});
  r.tools[0].args = deep;
  EXPECT_EQ(TurnResultToJson(r, true)["tools"][0]["args"], deep);

  TurnResult plain;  // only the members every result has
  EXPECT_EQ(TurnResultText(plain, true),
            R"({"notices":[],"rails":[],"reply":"","status":"completed","tools":[],"turn_id":""})");
}

}  // namespace
}  // namespace reins
