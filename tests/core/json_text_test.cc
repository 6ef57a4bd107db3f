#include "domain/json_text.h"

#include <random>

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

TEST(JsonTextTest, EdgeValues) {
  for (const Json& v : {Json(INT64_MIN), Json(INT64_MAX), Json(UINT64_MAX), Json(0), Json(-0.0), Json(1e300),
                        Json::object(), Json::array(), Json("")}) {
    EXPECT_EQ(JsonText(v), Reference(v)) << v.dump();
  }
}

// Strings are checked eight bytes at a time: every byte value at every place of a
// string longer than two words, so each lane of the word and the tail are covered.
TEST(JsonTextTest, EveryByteAtEveryPlaceOfAString) {
  const std::string plain = "abcdefghijklmnopqrs";
  for (size_t at = 0; at < plain.size(); ++at) {
    for (int byte = 0; byte < 256; ++byte) {
      std::string s = plain;
      s[at] = static_cast<char>(byte);
      std::string out;
      AppendJsonString(out, s);
      ASSERT_EQ(out, Reference(Json(s))) << "byte " << byte << " at " << at;
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

}  // namespace
}  // namespace reins
