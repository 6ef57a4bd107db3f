// FitContext: what one model call carries is bounded, deterministically, and never
// breaks a tool call from its result.
#include "pipeline/context_window.h"

#include <gtest/gtest.h>

#include <random>

namespace reins {
namespace {

// One earlier turn: a person's request, a tool call, its result, the reply.
void AddTurn(std::vector<Message>& h, int n, size_t result_chars) {
  h.push_back(Message::User("request " + std::to_string(n), "user"));
  ToolCall call{"c" + std::to_string(n), "lookup", "{}", Json::object(), true};
  h.push_back(Message::Assistant("", {call}));
  h.push_back(Message::Tool(call.id, "lookup", std::string(result_chars, 'r'), false));
  h.push_back(Message::Assistant("reply " + std::to_string(n)));
}

size_t Chars(const std::vector<Message>& messages) {
  size_t total = 0;
  for (const Message& m : messages) total += MessageChars(m);
  return total;
}

// Every tool call in the window is answered by the messages right after it (I10).
void ExpectPaired(const std::vector<Message>& messages) {
  for (size_t i = 0; i < messages.size(); ++i) {
    for (size_t k = 0; k < messages[i].tool_calls.size(); ++k) {
      ASSERT_LT(i + 1 + k, messages.size());
      EXPECT_EQ(messages[i + 1 + k].tool_call_id, messages[i].tool_calls[k].id);
    }
    if (messages[i].role == Role::kTool) {
      ASSERT_GT(i, 0u) << "a tool result without its call";
    }
  }
}

TEST(FitContext, SendsEverythingWhenItFits) {
  std::vector<Message> h;
  for (int n = 0; n < 3; ++n) AddTurn(h, n, 100);
  ContextWindow w = FitContext(h, h.size(), 400000, 100);
  EXPECT_EQ(w.messages.size(), h.size());
  EXPECT_EQ(w.Note(), "");
}

TEST(FitContext, DropsTheOldestWholeTurnsAndSaysSo) {
  std::vector<Message> h;
  for (int n = 0; n < 40; ++n) AddTurn(h, n, 2000);
  const size_t current = h.size();
  h.push_back(Message::User("the question now", "user"));
  ContextWindow w = FitContext(h, current, 20000, 500);
  EXPECT_LE(Chars(w.messages) + 500, 20000u);
  ASSERT_FALSE(w.messages.empty());
  EXPECT_EQ(w.messages.front().role, Role::kUser) << "a window starts where a person spoke";
  EXPECT_EQ(w.messages.back().text, "the question now");
  EXPECT_GT(w.dropped_messages, 0u);
  EXPECT_EQ(w.dropped_messages % 4, 0u) << "whole turns only";
  EXPECT_NE(w.Note().find("left out"), std::string::npos);
  ExpectPaired(w.messages);
  // Deterministic: the same history gives the same window.
  ContextWindow again = FitContext(h, current, 20000, 500);
  EXPECT_EQ(again.messages.size(), w.messages.size());
}

TEST(FitContext, CutsAHugeResultInsteadOfDroppingEverything) {
  std::vector<Message> h;
  AddTurn(h, 0, 100);
  AddTurn(h, 1, 3000000);  // one ~3 MB tool result
  AddTurn(h, 2, 100);
  const size_t current = h.size();
  h.push_back(Message::User("and now?", "user"));
  ContextWindow w = FitContext(h, current, 400000, 1000);
  EXPECT_LE(Chars(w.messages) + 1000, 400000u);
  EXPECT_EQ(w.dropped_messages, 0u) << "the other turns still fit once the result is cut";
  EXPECT_EQ(w.truncated_messages, 1u);
  EXPECT_NE(w.messages[6].text.find("truncated by reins"), std::string::npos);
  EXPECT_NE(w.messages[6].text.find("of 3000000 characters shown"), std::string::npos);
  ExpectPaired(w.messages);
}

TEST(FitContext, NeverDropsTheCurrentTurnOnlyCutsItsResults) {
  std::vector<Message> h;
  AddTurn(h, 0, 100);
  const size_t current = h.size();
  h.push_back(Message::User("look these up", "user"));
  std::vector<ToolCall> calls;
  for (const char* id : {"a", "b", "c", "d"}) calls.push_back({id, "lookup", "{}", Json::object(), true});
  h.push_back(Message::Assistant("", calls));
  for (const ToolCall& c : calls) h.push_back(Message::Tool(c.id, "lookup", std::string(50000, 'x'), false));
  ContextWindow w = FitContext(h, current, 3000, 1000);
  ASSERT_EQ(w.messages.size(), 6u) << "the earlier turn went, the current one stayed whole";
  EXPECT_EQ(w.messages[0].text, "look these up");
  EXPECT_EQ(w.dropped_messages, 4u);
  EXPECT_EQ(w.truncated_messages, 4u);
  EXPECT_LE(Chars(w.messages) + 1000, 3000u);
  ExpectPaired(w.messages);
}

TEST(FitContext, CutsNeverSplitAUtf8Character) {
  std::vector<Message> h;
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "\xc3\xa9";  // é
  h.push_back(Message::User(text, "user"));
  ContextWindow w = FitContext(h, 0, 10006, 0);  // a cap of 2501 bytes falls inside a character
  ASSERT_EQ(w.messages.size(), 1u);
  const std::string& cut = w.messages[0].text;
  const std::string kept = cut.substr(0, cut.find("\n[... truncated"));
  EXPECT_EQ(kept.size() % 2, 0u);
  EXPECT_TRUE(Json(kept).dump().find("\\ufffd") == std::string::npos);
}

TEST(ReachableStart, TrimmingToItNeverChangesAWindow) {
  // Differential: for random histories, limits and fixed parts, the window built from
  // the trimmed history is the window built from the whole one.
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    std::vector<Message> h;
    const int turns = 1 + static_cast<int>(rng() % 30);
    for (int n = 0; n < turns; ++n) AddTurn(h, n, rng() % 3 == 0 ? rng() % 40000 : rng() % 2000);
    const size_t max_chars = 4000 + rng() % 60000;
    const size_t start = ReachableStart(h, max_chars);
    ASSERT_TRUE(start == 0 || start == h.size() || h[start].role == Role::kUser) << "a cut starts a turn";
    std::vector<Message> kept(h.begin() + static_cast<std::ptrdiff_t>(start), h.end());
    // The next turn arrives, then a call with some fixed part.
    for (std::vector<Message>* history : {&h, &kept}) history->push_back(Message::User("next", "user"));
    const size_t fixed = rng() % (max_chars / 2);
    ContextWindow whole = FitContext(h, h.size() - 1, max_chars, fixed);
    ContextWindow trimmed = FitContext(kept, kept.size() - 1, max_chars, fixed, start > 0);
    ASSERT_EQ(whole.messages.size(), trimmed.messages.size()) << "round " << round;
    for (size_t i = 0; i < whole.messages.size(); ++i) {
      ASSERT_EQ(whole.messages[i].text, trimmed.messages[i].text) << "round " << round << " message " << i;
    }
    EXPECT_EQ(whole.Note(), trimmed.Note()) << "round " << round;
  }
}

TEST(FitsWhole, IsTrueExactlyWhenTheWindowIsTheWholeHistoryUncut) {
  // Differential: a history fits whole when FitContext would neither drop nor cut.
  std::mt19937 rng(5);
  int whole = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<Message> h;
    const int turns = 1 + static_cast<int>(rng() % 12);
    for (int n = 0; n < turns; ++n) AddTurn(h, n, rng() % 4 == 0 ? rng() % 20000 : rng() % 1500);
    const size_t max_chars = 2000 + rng() % 60000;
    const size_t fixed = rng() % (max_chars / 2);
    ContextWindow w = FitContext(h, h.size(), max_chars, fixed);
    const bool uncut = w.dropped_messages == 0 && w.truncated_messages == 0;
    ASSERT_EQ(FitsWhole(h, max_chars, fixed), uncut) << "round " << round;
    whole += uncut ? 1 : 0;
  }
  EXPECT_GT(whole, 30) << "both answers are exercised";
  EXPECT_LT(whole, 270);
}

TEST(ReachableStart, KeepsEverythingWhileItFits) {
  std::vector<Message> h;
  for (int n = 0; n < 5; ++n) AddTurn(h, n, 100);
  EXPECT_EQ(ReachableStart(h, 400000), 0u);
  EXPECT_GT(ReachableStart(h, 400), 0u);
}

}  // namespace
}  // namespace reins
