// CallRequest: a request that carries the turn's history itself gives it back whole,
// however the call ends.
#include "pipeline/call_request.h"

#include <gtest/gtest.h>

#include "domain/history_text.h"
#include "support/policy_context.h"
#include "turn/session_history.h"

#include <optional>
#include <utility>

namespace reins {
namespace {

std::vector<Message> History() {
  ToolCall call{"c1", "lookup", "{}", Json::object(), true};
  return {Message::User("what is on today?", "ann"), Message::Assistant("", {call}),
          Message::Tool("c1", "lookup", "{\"events\":[]}", false)};
}

std::vector<std::string> Texts(const std::vector<Message>& messages) {
  std::vector<std::string> out;
  for (const Message& m : messages) out.push_back(m.tool_calls.empty() ? m.text : m.tool_calls[0].name);
  return out;
}

TEST(CallRequest, TheRequestCarriesTheSystemPromptAndTheHistoryWhichComesBackAsItWas) {
  std::vector<Message> history = History();
  const std::vector<std::string> before = Texts(history);
  CallRequest call(ModelRequest{});
  call.Borrow(history, Message::System("Be brief."));
  EXPECT_TRUE(history.empty()) << "lent, not copied";
  std::vector<std::string> sent = Texts(call.request.messages);
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[0], "Be brief.");
  EXPECT_EQ(std::vector<std::string>(sent.begin() + 1, sent.end()), before);
  call.GiveBack();
  EXPECT_EQ(Texts(history), before);
  EXPECT_TRUE(call.request.messages.empty());
  call.GiveBack();  // once only
  EXPECT_EQ(Texts(history), before);
}

TEST(CallRequest, WhatTheCallAddedStaysWithTheRequest) {
  std::vector<Message> history = History();
  const std::vector<std::string> before = Texts(history);
  CallRequest call(ModelRequest{});
  call.Borrow(history, Message::System("Be brief."));
  call.request.messages.push_back(Message::Assistant("Searching... "));  // a paused answer sent back
  call.request.messages.push_back(Message::User("Make a plan."));        // a plan's instructions
  call.GiveBack();
  EXPECT_EQ(Texts(history), before);
}

TEST(CallRequest, AnAbandonedCallGivesTheHistoryBackWhenItIsDestroyed) {
  std::vector<Message> history = History();
  const std::vector<std::string> before = Texts(history);
  {
    std::optional<CallRequest> call(std::in_place, ModelRequest{});
    call->Borrow(history, Message::System("Be brief."));
    CallRequest moved(std::move(*call));  // into a coroutine's frame
    call.reset();                         // the moved-from one has nothing to give back
    EXPECT_TRUE(history.empty());
  }
  EXPECT_EQ(Texts(history), before);
}

TEST(CallRequest, ABorrowedHistoryKeepsGrowingAsAVectorDoes) {
  // Lent on every call and given back, the history is not reallocated on every call.
  std::vector<Message> history;
  size_t reallocations = 0;
  for (int call_number = 0; call_number < 64; ++call_number) {
    const Message* before = history.data();
    CallRequest call(ModelRequest{});
    call.Borrow(history, Message::System("s"));
    call.GiveBack();
    history.push_back(Message::User("more", "ann"));
    if (history.data() != before) ++reallocations;
  }
  EXPECT_LE(reallocations, 8u);
}

TEST(CallRequest, NothingLentNothingGivenBack) {
  CallRequest call(ModelRequest{});
  call.request.messages.push_back(Message::System("audit"));
  call.GiveBack();
  ASSERT_EQ(call.request.messages.size(), 1u);
  EXPECT_EQ(call.request.messages[0].text, "audit");
}

// A session's messages change only through its SessionHistory, which keeps the request
// text kept for them (domain/history_text.h) in step: an edit drops the text of that
// message and every later one (the next call writes them again from what they now say),
// appending keeps it whole, a rollback and a trim cut it as they cut the messages.
void WriteAll(SessionHistory& history) {  // as a wire writes it: comma-separated
  HistoryText& kept = history.Text();
  for (size_t i = kept.messages(); i < history.size(); ++i) {
    if (!kept.text.empty()) kept.text += ',';
    kept.text += Json(history.messages()[i].text).dump();
    kept.Ended();
  }
}

TEST(SessionHistory, EditingAMessageThroughTheTurnDropsTheTextKeptForItAndForEveryLaterOne) {
  testing::PolicyContext p;
  for (Message& m : History()) p.history.Append(std::move(m));
  WriteAll(p.history);
  p.ctx.Append(Message::Assistant("Nothing today."));
  EXPECT_EQ(p.history.Text().messages(), 3u);
  p.ctx.EditMessage(1).text = "Let me look.";
  EXPECT_EQ(p.ctx.history()[1].text, "Let me look.");
  EXPECT_EQ(p.history.Text().messages(), 1u);
  EXPECT_EQ(p.history.Text().text.size(), p.history.Text().ends.back());
}

TEST(SessionHistory, ARollbackAndATrimCutTheKeptTextAsTheyCutTheMessages) {
  SessionHistory history;
  for (Message& m : History()) history.Append(std::move(m));
  history.Append(Message::Assistant("Nothing today."));
  WriteAll(history);
  history.Truncate(3);  // the last turn rolled back
  EXPECT_EQ(history.size(), 3u);
  EXPECT_EQ(history.Text().messages(), 3u);
  history.DropFront(2);  // what no call can see any more
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history.Text().messages(), 1u);
  EXPECT_EQ(history.Text().text, Json(history.messages()[0].text).dump());
}

TEST(SessionHistory, OlderMessagesPutInFrontLeaveNoKeptTextBehind) {
  SessionHistory history;
  history.Append(Message::Assistant("Nothing today."));
  WriteAll(history);
  history.Prepend(History());
  EXPECT_EQ(history.size(), 4u);
  EXPECT_EQ(history.messages()[0].text, "what is on today?");
  EXPECT_EQ(history.Text().messages(), 0u) << "the text written for the old first message is no one's now";
}

}  // namespace
}  // namespace reins
