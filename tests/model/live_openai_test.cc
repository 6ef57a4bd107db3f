// A smoke test against a real OpenAI-compatible server. It runs only when
// REINS_LIVE_OPENAI_BASE_URL is set (with REINS_LIVE_OPENAI_API_KEY or OPENAI_API_KEY,
// and REINS_LIVE_OPENAI_MODEL, default gpt-4o-mini); otherwise it is skipped with a
// message. Nothing else in the suite needs the network.
#include <cstdlib>

#include <gtest/gtest.h>

#include "model/http_model.h"
#include "support/run_sync.h"

namespace reins {
namespace {

std::string Env(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

TEST(LiveOpenAI, CallsAForcedToolAndStreamsText) {
  std::string base = Env("REINS_LIVE_OPENAI_BASE_URL");
  if (base.empty()) GTEST_SKIP() << "set REINS_LIVE_OPENAI_BASE_URL (and a key) to run the live smoke test";
  ModelConfig c;
  c.provider = "openai";
  c.base_url = base;
  c.model = Env("REINS_LIVE_OPENAI_MODEL", "gpt-4o-mini");
  c.api_key = Env("REINS_LIVE_OPENAI_API_KEY", Env("OPENAI_API_KEY").c_str());
  c.temperature = 0;
  auto model = MakeHttpModel(c, std::make_shared<HttpClient>(), std::make_shared<SystemClock>());
  ASSERT_TRUE(model.ok()) << model.status().message();

  ModelRequest r;
  r.messages = {Message::System("You are a weather assistant."), Message::User("What's the weather in Oslo?")};
  r.tools = std::make_shared<const std::vector<ToolSpec>>(std::vector<ToolSpec>{
      {"get_weather", "Current weather for a city",
       Json::parse(R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})")}});
  r.tool_choice = ToolChoice::Named("get_weather");
  auto forced = testing::RunSync((*model)->Complete(r));
  ASSERT_TRUE(forced.ok()) << forced.status().message();
  ASSERT_FALSE(forced->tool_calls.empty());
  EXPECT_EQ(forced->tool_calls[0].name, "get_weather");
  EXPECT_TRUE(forced->tool_calls[0].args_valid);

  ModelRequest say;
  say.messages = {Message::User("Say hello in three words.")};
  std::string deltas;
  say.on_text_delta = [&](std::string_view t) { deltas.append(t); };
  auto streamed = testing::RunSync((*model)->Complete(say));
  ASSERT_TRUE(streamed.ok()) << streamed.status().message();
  EXPECT_FALSE(streamed->text.empty());
  EXPECT_EQ(deltas, streamed->text);
}

}  // namespace
}  // namespace reins
