// `reins chat` end to end: the real binary, stdin scripted, its model the mock upstream
// speaking OpenAI Chat Completions on loopback.
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "support/mock_payloads.h"
#include "support/mock_upstream.h"

namespace {

using reins::testing::MockUpstream;
using reins::testing::OpenAIResponse;
using reins::testing::OpenAIStream;

// Runs `command` through the shell; returns its stdout+stderr and sets *rc.
std::string Shell(const std::string& command, int* rc) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  int status = pclose(pipe);
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(ChatCommand, AConversationWithToolsAndAClarification) {
  MockUpstream up;
  // Turn 1: the model calls the contact lookup, which asks which John; turn 2: /select
  // answers it, the model sends (streamed) and then composes the reply.
  up.Enqueue(MockUpstream::Json(200, OpenAIResponse({"", {{"call_1", "lookup_contacts", R"({"query":"John"})"}}})));
  up.Enqueue(MockUpstream::Sse(OpenAIStream({"", {{"call_2", "send_message", R"({"recipient_id":"u_smith","content":"Running late"})"}}})));
  up.Enqueue(MockUpstream::Json(200, OpenAIResponse({"Done - I told John Smith you're running late.", {}})));
  std::string cmd = "printf 'Tell John I am running late\\n/select u_smith\\n/trace\\n/quit\\n' | NO_COLOR=1 " +
                    std::string(REINS_BINARY) + " chat --config examples/messaging/agent.yaml --base-url " +
                    up.base_url() + "/v1 --model test-model";
  int rc = 0;
  std::string out = Shell(cmd, &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("with openai test-model"), std::string::npos) << out;
  EXPECT_NE(out.find("2. John Smith (smith@example.com)"), std::string::npos) << out;  // the options, numbered
  EXPECT_NE(out.find("answer with a number or a name (/select ID works too)"), std::string::npos) << out;
  EXPECT_NE(out.find("proposed 1 call  model chat (test-model)  lookup_contacts("), std::string::npos) << out;
  EXPECT_NE(out.find("agent> "), std::string::npos) << out;
  EXPECT_NE(out.find("turn.started"), std::string::npos) << "/trace printed nothing: " << out;
  EXPECT_EQ(out.find("\033["), std::string::npos) << "colour without a TTY";
  EXPECT_NE(out.find("executed  call send_message  next: complete"), std::string::npos) << out;
  EXPECT_NE(out.find("Done - I told John Smith"), std::string::npos) << out;
  ASSERT_EQ(up.requests().size(), 3u) << out;
  EXPECT_EQ(up.requests()[0].target, "/v1/chat/completions");
}

TEST(ChatCommand, AScriptedAgentReplaysItsScriptOffline) {
  int rc = 0;
  // A key in the environment does not pull it away from its script.
  std::string out = Shell("printf 'hello\\n/quit\\n' | NO_COLOR=1 OPENAI_API_KEY=sk-unused " +
                              std::string(REINS_BINARY) + " chat --config tests/server/agent.yaml",
                          &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("with scripted"), std::string::npos) << out;
  EXPECT_NE(out.find("agent> Hello there."), std::string::npos) << out;
}

TEST(ChatCommand, AnAgentScriptedOnlyByItsScenariosChatsWithTheModelOfTheEnvironment) {
  MockUpstream up;
  up.Enqueue(MockUpstream::Json(200, OpenAIResponse({"Hello from the real model.", {}})));
  int rc = 0;
  std::string out = Shell("printf 'hello\\n/quit\\n' | NO_COLOR=1 env -u ANTHROPIC_API_KEY OPENAI_API_KEY=sk-test OPENAI_BASE_URL=" +
                              up.base_url() + "/v1 " + std::string(REINS_BINARY) +
                              " chat --config examples/messaging/agent.yaml",
                          &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("with openai gpt-4o-mini"), std::string::npos) << out;
  EXPECT_NE(out.find("Hello from the real model."), std::string::npos) << out;
  ASSERT_EQ(up.requests().size(), 1u) << out;
  EXPECT_EQ(up.requests()[0].headers["authorization"], "Bearer sk-test");
}

TEST(ChatCommand, SaysWhichVariableToSetWithoutAKey) {
  int rc = 0;
  std::string out = Shell("env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY " + std::string(REINS_BINARY) +
                            " chat --config examples/care-chat/agent.yaml --provider openai --model gpt-4o-mini </dev/null",
                        &rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("set OPENAI_API_KEY"), std::string::npos) << out;
  EXPECT_NE(out.find("reins demo"), std::string::npos) << out;
}

}  // namespace
