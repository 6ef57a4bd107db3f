// OpenAI Chat Completions wire format: request bodies, whole responses, streams. The
// payloads are our own, written from the wire-format notes (see docs/providers.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "domain/history_text.h"
#include "model/openai_answer.h"
#include "model/wire_common.h"
#include "model/wire_format.h"
#include "model/wire_test_util.h"

namespace reins {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using wire_test::Call;
using wire_test::ExpectSameResponse;
using wire_test::Request;
using wire_test::Streamed;
using wire_test::WeatherTools;

ModelConfig Config() {
  ModelConfig c;
  c.provider = "openai";
  c.model = "gpt-test";
  return c;
}

Json Body(const ModelRequest& request, const ModelConfig& config = Config(), bool stream = false) {
  return Json::parse(MakeOpenAIWire()->BuildBody(config, request, stream));
}

// ---- Requests --------------------------------------------------------------------------

TEST(OpenAIWireTest, EndpointAndHeaders) {
  auto wire = MakeOpenAIWire();
  EXPECT_EQ(wire->Provider(), "openai");
  EXPECT_EQ(wire->DefaultBaseUrl(), "https://api.openai.com/v1");
  EXPECT_EQ(wire->Path(), "/chat/completions");
  ModelConfig config = Config();
  EXPECT_TRUE(wire->Headers(config).empty());  // local compatible servers need no key
  config.api_key = "sk-test";
  auto headers = wire->Headers(config);
  ASSERT_EQ(headers.size(), 1u);
  EXPECT_EQ(headers[0].name, "Authorization");
  EXPECT_EQ(headers[0].value, "Bearer sk-test");
}

TEST(OpenAIWireTest, BuildsTheWholeRequestBody) {
  ModelConfig config = Config();
  config.temperature = 0.25;
  config.options = {{"max_tokens", 300}, {"parallel_tool_calls", false}, {"unrelated", "x"}};
  // Two people speak, so each is named.
  ModelRequest request = Request({Message::System("Be brief."), Message::User("Weather in Oslo?", "Ana"),
                                  Message::User("And Bergen?", "Ben")},
                                 WeatherTools());
  EXPECT_EQ(Body(request, config), Json::parse(R"({
    "model": "gpt-test",
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "[Ana]: Weather in Oslo?"},
      {"role": "user", "content": "[Ben]: And Bergen?"}],
    "tools": [
      {"type": "function", "function": {"name": "get_weather", "description": "Current weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
      {"type": "function", "function": {"name": "get_time", "description": "Local time",
        "parameters": {"type": "object", "properties": {}}}}],
    "tool_choice": "auto",
    "temperature": 0.25,
    "max_tokens": 300,
    "parallel_tool_calls": false})"));
}

// One wire builds every request of a provider and keeps the text of the last tools
// vector it wrote (wire::ToolsText): each request still carries its own vector's tools.
TEST(OpenAIWireTest, EachRequestCarriesTheToolsOfItsOwnVector) {
  auto wire = MakeOpenAIWire();
  auto names = [&](const std::shared_ptr<const std::vector<ToolSpec>>& tools) {
    Json body = Json::parse(wire->BuildBody(Config(), Request({Message::User("hi")}, tools), false));
    std::vector<std::string> out;
    for (const Json& t : body["tools"]) out.push_back(t["function"]["name"]);
    return out;
  };
  auto agent = WeatherTools();
  EXPECT_EQ(names(agent), (std::vector<std::string>{"get_weather", "get_time"}));
  EXPECT_EQ(names(agent), (std::vector<std::string>{"get_weather", "get_time"}));
  auto gather = std::make_shared<const std::vector<ToolSpec>>(std::vector<ToolSpec>{{"lookup", "Find it", Json()}});
  EXPECT_EQ(names(gather), std::vector<std::string>{"lookup"});
  EXPECT_EQ(names(agent), (std::vector<std::string>{"get_weather", "get_time"}));
  // A vector that is gone is never taken for a new one, wherever the new one lives.
  for (int i = 0; i < 20; ++i) {
    auto fresh = std::make_shared<const std::vector<ToolSpec>>(
        std::vector<ToolSpec>{{"tool_" + std::to_string(i), "", Json()}});
    EXPECT_EQ(names(fresh), std::vector<std::string>{"tool_" + std::to_string(i)});
  }
}

TEST(ToolsTextTest, WritesEachVectorOnceWhileItIsTheLastOneSeen) {
  static int writes = 0;
  writes = 0;
  wire::ToolsText text([](const std::vector<ToolSpec>& tools) {
    ++writes;
    return std::to_string(tools.size());
  });
  auto one = std::make_shared<const std::vector<ToolSpec>>(std::vector<ToolSpec>{{"a", "", Json()}});
  auto two = std::make_shared<const std::vector<ToolSpec>>(std::vector<ToolSpec>{{"a", "", Json()}, {"b", "", Json()}});
  EXPECT_EQ(*text.Of(one), "1");
  EXPECT_EQ(*text.Of(one), "1");
  EXPECT_EQ(writes, 1);
  EXPECT_EQ(*text.Of(two), "2");
  EXPECT_EQ(*text.Of(one), "1");
  EXPECT_EQ(writes, 3);
}

// A session's earlier messages written once (domain/history_text.h): every body is the
// one written without the kept text, as the history grows, as a speaker joins (user
// messages then name theirs), as a kept message changes and as the oldest are dropped.
TEST(OpenAIWireTest, KeptHistoryTextWritesTheSameBody) {
  auto wire = MakeOpenAIWire();
  HistoryText kept;
  std::vector<Message> history;
  auto expect_same = [&](const std::string& when) {
    ModelRequest plain = Request({Message::System("Be brief.")}, WeatherTools());
    plain.messages.insert(plain.messages.end(), history.begin(), history.end());
    plain.messages.push_back(Message::User("And now?", "Ana"));  // this turn's: never kept
    ModelRequest request = plain;
    request.history_text = &kept;
    request.history_final = history.size();
    EXPECT_EQ(wire->BuildBody(Config(), request, false), wire->BuildBody(Config(), plain, false)) << when;
    EXPECT_EQ(kept.messages(), history.size()) << when;
  };
  expect_same("no earlier messages");
  for (int turn = 0; turn < 3; ++turn) {
    const std::string id = "call_" + std::to_string(turn);
    history.push_back(Message::User("Weather in \"Oslo\"?\n", "Ana"));
    history.push_back(Message::Assistant("", {Call(id, "lookup_weather", R"({"city":"Oslo"})")}));
    history.push_back(Message::Tool(id, "lookup_weather", R"({"temp":3})", turn == 1));
    history.push_back(Message::Assistant("Cold: 3 °C."));
    expect_same("after turn " + std::to_string(turn));
  }
  EXPECT_THAT(kept.text, HasSubstr(R"("content":"Weather in \"Oslo\"?\n")"));
  history.push_back(Message::User("Me too", "Ben"));  // two speakers: every user message named
  expect_same("a second speaker");
  EXPECT_THAT(kept.text, HasSubstr("[Ana]: Weather"));
  kept.Truncate(5);  // message 5 changes in place
  history[5].text = R"({"temp":4})";
  expect_same("a message changed");
  kept.DropFront(4);  // the first turn can no longer reach a call
  history.erase(history.begin(), history.begin() + 4);
  expect_same("the oldest turn dropped");
  kept.DropFront(kept.messages());
  history.clear();
  expect_same("everything dropped");
}

TEST(OpenAIWireTest, MapsEveryToolChoiceMode) {
  const std::vector<std::pair<ToolChoice, Json>> cases = {
      {ToolChoice::Auto(), "auto"},
      {ToolChoice::Required(), "required"},
      {ToolChoice::None(), "none"},
      {ToolChoice::Named("get_time"), Json::parse(R"({"type":"function","function":{"name":"get_time"}})")},
  };
  for (const auto& [choice, expected] : cases) {
    Json body = Body(Request({Message::User("hi")}, WeatherTools(), choice));
    EXPECT_EQ(body["tool_choice"], expected) << choice.ToString();
  }
}

TEST(OpenAIWireTest, OmitsToolsAndToolOptionsWithoutTools) {
  ModelConfig config = Config();
  config.options = {{"parallel_tool_calls", true}};  // rejected by the API without tools
  for (auto tools : {std::shared_ptr<const std::vector<ToolSpec>>(),
                     std::make_shared<const std::vector<ToolSpec>>()}) {
    Json body = Body(Request({Message::User("hi")}, tools, ToolChoice::Required()), config);
    EXPECT_FALSE(body.contains("tools"));
    EXPECT_FALSE(body.contains("tool_choice"));
    EXPECT_FALSE(body.contains("parallel_tool_calls"));
    EXPECT_FALSE(body.contains("temperature"));
    EXPECT_FALSE(body.contains("max_tokens"));
    EXPECT_FALSE(body.contains("stream"));
    EXPECT_FALSE(body.contains("response_format"));
  }
}

TEST(OpenAIWireTest, PairsEachToolCallWithItsResultInCallOrder) {
  ModelRequest request = Request({
      Message::User("Weather in Oslo and the time?"),
      Message::Assistant("", {Call("call_1", "get_weather", R"({"city": "Oslo"})", {{"city", "Oslo"}}),
                              Call("call_2", "get_time", "", {{"tz", "CET"}}),
                              Call("call_3", "get_weather", "{city:", Json::object(), false)}),
      Message::Tool("call_1", "get_weather", R"({"success":true,"data":{"temp":12}})", false),
      Message::Tool("call_2", "get_time", "clock is down", true),
      Message::Tool("call_3", "get_weather", R"({"success":false,"next_action":"error","error":"bad arguments"})",
                    true),
      Message::Assistant("It is 12 degrees."),
      Message::Assistant(""),
  });
  EXPECT_EQ(Body(request)["messages"], Json::parse(R"([
    {"role": "user", "content": "Weather in Oslo and the time?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}},
      {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{\"tz\":\"CET\"}"}},
      {"id": "call_3", "type": "function", "function": {"name": "get_weather", "arguments": "{city:"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"success\":true,\"data\":{\"temp\":12}}"},
    {"role": "tool", "tool_call_id": "call_2", "content": "{\"error\":\"clock is down\"}"},
    {"role": "tool", "tool_call_id": "call_3",
     "content": "{\"success\":false,\"next_action\":\"error\",\"error\":\"bad arguments\"}"},
    {"role": "assistant", "content": "It is 12 degrees."},
    {"role": "assistant", "content": ""}])"));
}

TEST(OpenAIWireTest, TheBodyIsTheCompactSortedTextOfItsJson) {
  // The body is written as text, not dumped from a DOM: it must still be exactly what
  // dumping its DOM gives (sorted keys, compact, the same escapes), every part present.
  ModelConfig config = Config();
  config.temperature = 0.1;
  config.options = {{"max_tokens", 30}, {"max_completion_tokens", 40}, {"parallel_tool_calls", true}};
  ModelRequest request = Request(
      {Message::System("Sé \"brief\"\n"), Message::User("caf\xC3", "Ana"), Message::User("Tab\there", "Ben"),
       Message::Assistant("Checking", {Call("c1", "get_weather", R"({"city": "Oslo"})", {{"city", "Oslo"}}),
                                       Call("c2", "get_time", "", {{"tz", "CET \xF0\x9F\x99\x8F"}})}),
       Message::Tool("c1", "get_weather", R"({"success":true})", false), Message::Tool("c2", "get_time", "down", true),
       Message::Assistant("")},
      WeatherTools(), ToolChoice::Named("get_time"));
  request.response_schema = Json::parse(R"({"type":"object","properties":{"n":{"type":"number","maximum":1.5}}})");
  for (bool stream : {false, true}) {
    std::string body = MakeOpenAIWire()->BuildBody(config, request, stream);
    EXPECT_EQ(body, Json::parse(body).dump()) << "stream " << stream;
  }
}

TEST(OpenAIWireTest, ErrorResultWithoutAnErrorKeyIsWrapped) {
  ModelRequest request = Request({Message::Tool("call_1", "t", R"({"success":false})", true)});
  EXPECT_EQ(Body(request)["messages"][0]["content"], R"({"error":"{\"success\":false}"})");
}

TEST(OpenAIWireTest, StreamingAsksForUsage) {
  Json body = Body(Request({Message::User("hi")}), Config(), /*stream=*/true);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"], Json::parse(R"({"include_usage": true})"));
}

TEST(OpenAIWireTest, StructuredOutputAsksForTheSchema) {
  ModelRequest request = Request({Message::User("plan")});
  request.response_schema = Json::parse(R"({"type":"object","required":["steps"]})");
  EXPECT_EQ(Body(request)["response_format"], Json::parse(R"({"type": "json_schema", "json_schema":
      {"name": "response", "schema": {"type":"object","required":["steps"]}, "strict": false}})"));
}

TEST(OpenAIWireTest, InvalidUtf8InHistoryDoesNotThrow) {
  std::string bad = "caf\xC3";
  std::string body = MakeOpenAIWire()->BuildBody(Config(), Request({Message::User(bad)}), false);
  EXPECT_TRUE(Json::accept(body));
}

// ---- Whole responses -------------------------------------------------------------------

TEST(OpenAIWireTest, ParsesTextAndUsageIgnoringUnknownFields) {
  auto r = MakeOpenAIWire()->ParseBody(R"({"id":"chatcmpl-1","object":"chat.completion","new_field":{"x":1},
    "choices":[{"index":0,"finish_reason":"stop","logprobs":null,
      "message":{"role":"assistant","content":"Grüße 🙏","refusal":null,"annotations":[]}}],
    "usage":{"prompt_tokens":11,"completion_tokens":4,"total_tokens":15,
             "prompt_tokens_details":{"cached_tokens":0}}})",
                                       Request({}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text, "Grüße 🙏");
  EXPECT_TRUE(r->tool_calls.empty());
  EXPECT_FALSE(r->json.has_value());
  EXPECT_EQ(r->usage.input_tokens, 11);
  EXPECT_EQ(r->usage.output_tokens, 4);
}

TEST(OpenAIWireTest, RefusalIsTheTextWhenThereIsNoContent) {
  auto r = MakeOpenAIWire()->ParseBody(
      R"({"choices":[{"message":{"role":"assistant","content":null,"refusal":"I can't help with that."}}]})",
      Request({}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, "I can't help with that.");
  EXPECT_EQ(r->finish, FinishReason::kRefusal) << "a refusal is not an answer to deliver as one";
  EXPECT_EQ(r->usage.input_tokens, 0);
}

TEST(OpenAIWireTest, ParsesParallelCallsAndKeepsBadArgumentsAsInvalid) {
  auto r = MakeOpenAIWire()->ParseBody(R"({"choices":[{"finish_reason":"tool_calls","message":{
    "role":"assistant","content":null,"tool_calls":[
      {"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},
      {"id":"call_b","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Ber"}},
      {"id":"call_c","type":"function","function":{"name":"get_time","arguments":"[1,2]"}},
      {"id":"call_d","type":"function","function":{"name":"get_time","arguments":""}},
      {"id":"call_e","type":"function","function":{"name":"get_time","arguments":7}},
      "not a call"]}}]})",
                                       Request({}, WeatherTools()));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text, "");
  ASSERT_EQ(r->tool_calls.size(), 5u);
  const ToolCall& a = r->tool_calls[0];
  EXPECT_EQ(a.id, "call_a");
  EXPECT_EQ(a.name, "get_weather");
  EXPECT_EQ(a.arguments_text, R"({"city":"Oslo"})");
  EXPECT_EQ(a.args, Json::parse(R"({"city":"Oslo"})"));
  EXPECT_TRUE(a.args_valid);
  const ToolCall& b = r->tool_calls[1];
  EXPECT_EQ(b.id, "call_b");
  EXPECT_EQ(b.arguments_text, R"({"city": "Ber)");
  EXPECT_FALSE(b.args_valid);
  EXPECT_EQ(b.args, Json::object());
  EXPECT_FALSE(r->tool_calls[2].args_valid);  // JSON, but not an object
  EXPECT_EQ(r->tool_calls[2].args, Json::object());
  EXPECT_TRUE(r->tool_calls[3].args_valid);  // no arguments at all: {}
  EXPECT_EQ(r->tool_calls[3].args, Json::object());
  EXPECT_FALSE(r->tool_calls[4].args_valid);
  EXPECT_EQ(r->tool_calls[4].arguments_text, "7");
}

TEST(OpenAIWireTest, StructuredOutputGoesToJson) {
  ModelRequest request = Request({Message::User("plan")});
  request.response_schema = Json::parse(R"({"type":"object"})");
  auto wire = MakeOpenAIWire();
  auto ok = wire->ParseBody(R"({"choices":[{"message":{"content":"{\"steps\":[{\"id\":\"s1\"}]}"}}]})", request);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->json, Json::parse(R"({"steps":[{"id":"s1"}]})"));
  EXPECT_EQ(ok->text, R"({"steps":[{"id":"s1"}]})");
  auto fenced = wire->ParseBody(R"({"choices":[{"message":{"content":"```json\n{\"a\":1}\n```"}}]})", request);
  ASSERT_TRUE(fenced.ok());
  EXPECT_EQ(fenced->json, Json::parse(R"({"a":1})"));
  auto bad = wire->ParseBody(R"({"choices":[{"message":{"content":"Here is the plan: {steps"}}]})", request);
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE(bad->json.has_value());
  EXPECT_EQ(bad->text, "Here is the plan: {steps");
  // Without a schema the text is only text.
  auto plain = wire->ParseBody(R"({"choices":[{"message":{"content":"{\"a\":1}"}}]})", Request({}));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->json.has_value());
}

TEST(OpenAIWireTest, MalformedBodiesAreErrorsNotCrashes) {
  auto wire = MakeOpenAIWire();
  const std::vector<std::string> bodies = {
      "", "not json", "[1,2]", "{}", R"({"choices":[]})", R"({"choices":"x"})", R"({"choices":[1]})",
      R"({"choices":[{"message":"hi"}]})", "{\"choices\":[{\"message\":{\"content\":\"\xC3\"}}]}",
  };
  for (const std::string& body : bodies) {
    auto r = wire->ParseBody(body, Request({}));
    EXPECT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << body;
  }
  // Wrong types inside an otherwise fine response are ignored, not fatal.
  auto r = wire->ParseBody(R"({"choices":[{"message":{"content":5,"refusal":[],"tool_calls":{"x":1}}}],
                               "usage":{"prompt_tokens":"many","completion_tokens":-3}})",
                           Request({}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->text, "");
  EXPECT_TRUE(r->tool_calls.empty());
  EXPECT_EQ(r->usage.input_tokens, 0);
}

// The usual answer is read in one pass, any other as a DOM (model/openai_answer.h): over
// answers of every shape the two must agree. A key twice in the response object sends
// an answer down the DOM path ("error":null twice is no error to either).
TEST(OpenAIWireTest, TheOnePassReaderAgreesWithTheDomOnEveryShape) {
  const std::vector<std::string> contents = {"", R"("content":"Hi",)", R"("content":null,)", R"("content":5,)",
                                             R"("content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],)"};
  const std::vector<std::string> refusals = {"", R"("refusal":null,)", R"("refusal":"No.",)", R"("refusal":[],)"};
  const std::vector<std::string> calls = {
      "",
      R"("tool_calls":null,)",
      R"("tool_calls":[],)",
      R"("tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
                       {"id":"c2","function":{"arguments":"{nope","name":"get_time"}}],)",
      R"("tool_calls":[{"id":"c1","function":{"name":"get_weather","arguments":{"city":"Paris"}}}],)",
      R"("tool_calls":[5,{"id":"c1"},{"function":{"name":"f","arguments":""}}],)",
      R"("tool_calls":[{"id":"c1","id":"c2","function":{"name":"f","arguments":"{}"}}],)",
  };
  const std::vector<std::string> finishes = {"", R"("finish_reason":"stop",)", R"("finish_reason":"length",)",
                                             R"("finish_reason":"content_filter",)", R"("finish_reason":3,)"};
  const std::vector<std::string> usages = {"", R"(,"usage":{"prompt_tokens":23,"completion_tokens":7,"total_tokens":30})",
                                           R"(,"usage":{"prompt_tokens":99999999999,"completion_tokens":1})",
                                           R"(,"usage":{"prompt_tokens":1.5,"completion_tokens":-2})",
                                           R"(,"usage":null)"};
  auto wire = MakeOpenAIWire();
  int read_in_one_pass = 0;
  int answers = 0;
  for (const std::string& content : contents) {
    for (const std::string& refusal : refusals) {
      for (const std::string& call : calls) {
        for (const std::string& finish : finishes) {
          for (const std::string& usage : usages) {
            std::string message = "{" + content + refusal + call + R"("role":"assistant"})";
            std::string rest = R"("choices":[{)" + finish + R"("index":0,"message":)" + message +
                               R"(,"logprobs":{"content":[]}},{"message":{"content":"second"}}])" + usage + "}";
            const std::string body = R"({"id":"x",)" + rest;
            const std::string dom_only = R"({"error":null,"error":null,)" + rest;
            for (bool structured : {false, true}) {
              ModelRequest request = Request({});
              if (structured) request.response_schema = Json::object();
              auto one_pass = wire->ParseBody(body, request);
              auto dom = wire->ParseBody(dom_only, request);
              ++answers;
              ASSERT_EQ(one_pass.ok(), dom.ok()) << body;
              if (!dom.ok()) {
                EXPECT_EQ(one_pass.status().message(), dom.status().message()) << body;
                continue;
              }
              ExpectSameResponse(*one_pass, *dom);
              EXPECT_EQ(one_pass->finish, dom->finish) << body;
              openai::Answer answer;
              if (openai::ReadUsualAnswer(body, answer)) ++read_in_one_pass;
              EXPECT_FALSE(openai::ReadUsualAnswer(dom_only, answer)) << dom_only;
            }
          }
        }
      }
    }
  }
  // About one shape in eight above is a usual one (string or null content and refusal, no
  // calls or calls with text arguments, integer counts): the one-pass reader takes those.
  EXPECT_GT(read_in_one_pass, answers / 10);
  openai::Answer usual;
  ASSERT_TRUE(openai::ReadUsualAnswer(R"({"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,
      "message":{"role":"assistant","content":null,"refusal":null,"annotations":[],"tool_calls":[{"id":"call_1",
      "type":"function","function":{"name":"lookup_weather","arguments":"{\"city\":\"Paris\"}"}}]},"logprobs":null,
      "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":23,"completion_tokens":18,"total_tokens":41,
      "prompt_tokens_details":{"cached_tokens":0}},"system_fingerprint":"fp"})", usual));
  ASSERT_EQ(usual.tool_calls.size(), 1u);
  EXPECT_EQ(usual.tool_calls[0].args, Json::parse(R"({"city":"Paris"})"));
  EXPECT_EQ(usual.input_tokens, 23);
}

TEST(OpenAIWireTest, ErrorBodies) {
  auto wire = MakeOpenAIWire();
  const char* body =
      R"({"error":{"message":"Rate limit reached for gpt-test","type":"requests","param":null,"code":"rate_limit_exceeded"}})";
  EXPECT_EQ(wire->ErrorMessage(body), "Rate limit reached for gpt-test");
  EXPECT_EQ(wire->ErrorMessage(R"({"error":"model not loaded"})"), "model not loaded");
  EXPECT_EQ(wire->ErrorMessage("<html>502 Bad Gateway</html>"), "");
  EXPECT_EQ(wire->ErrorMessage(R"({"choices":[]})"), "");
  EXPECT_EQ(wire->ErrorMessage(R"({"error":{"code":5}})"), "");
  EXPECT_EQ(wire->ErrorMessage("[]"), "");
  auto parsed = wire->ParseBody(body, Request({}));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(parsed.status().message(), "Rate limit reached for gpt-test");
}

// ---- Streams ---------------------------------------------------------------------------

// An SSE body of `data:` events with CRLF line endings, so that pieces split "\r\n".
std::string Sse(const std::vector<std::string>& data) {
  std::string out = ": keep-alive comment\r\n\r\n";
  for (const std::string& d : data) out += "data: " + d + "\r\n\r\n";
  return out;
}

Streamed Stream(const ModelRequest& request, std::string_view sse, size_t piece) {
  return wire_test::Stream(*MakeOpenAIWire(), request, sse, piece);
}

const std::vector<std::string> kTextAndToolsStream = {
    R"({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null})",
    R"({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Grü"},"finish_reason":null}]})",
    R"({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"ße \ud83d\ude4f"},"finish_reason":null}]})",
    R"({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" — checking 🙏"},"finish_reason":null}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{\"tz"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\":"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\":\"CET\"}"}},{"index":0,"function":{"arguments":" \"Zürich\""}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"id":"call_3","function":{"name":"get_time","arguments":"{bad"}}]}}]})",
    R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
    R"({"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":42,"completion_tokens":17,"total_tokens":59}})",
    "[DONE]",
};

// The same response as one body.
const char* kTextAndToolsWhole = R"({"choices":[{"index":0,"message":{"role":"assistant",
  "content":"Grüße 🙏 — checking 🙏","tool_calls":[
    {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Zürich\"}"}},
    {"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"CET\"}"}},
    {"id":"call_3","type":"function","function":{"name":"get_time","arguments":"{bad"}}]}}],
  "usage":{"prompt_tokens":42,"completion_tokens":17}})";

TEST(OpenAIWireTest, StreamSplitAnywhereEqualsTheWholeResponse) {
  ModelRequest request = Request({Message::User("hi")}, WeatherTools());
  auto whole = MakeOpenAIWire()->ParseBody(kTextAndToolsWhole, request);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  std::string sse = Sse(kTextAndToolsStream);
  for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, sse.size()}) {
    SCOPED_TRACE("piece " + std::to_string(piece));
    Streamed s = Stream(request, sse, piece);
    ASSERT_TRUE(s.status.ok()) << s.status.ToString();
    EXPECT_TRUE(s.complete);
    ASSERT_TRUE(s.response.ok()) << s.response.status().ToString();
    ExpectSameResponse(*s.response, *whole);
    EXPECT_EQ(s.text, "Grüße 🙏 — checking 🙏");
    EXPECT_EQ(s.text, s.response->text);
    EXPECT_EQ(s.text_calls, 3);  // one per content delta, in order
    ASSERT_EQ(s.response->tool_calls.size(), 3u);
    EXPECT_EQ(s.response->tool_calls[0].args, Json::parse(R"({"city":"Zürich"})"));
    EXPECT_FALSE(s.response->tool_calls[2].args_valid);
    EXPECT_EQ(s.response->usage.input_tokens, 42);
    EXPECT_EQ(s.response->usage.output_tokens, 17);
  }
}

TEST(OpenAIWireTest, TextDeltasReachTheCallerBeforeTheStreamEnds) {
  auto assembler = MakeOpenAIWire()->NewAssembler(Request({}), nullptr);  // a null callback is allowed
  ASSERT_TRUE(assembler->OnEvent({"", kTextAndToolsStream[1], ""}).ok());
  std::string seen;
  auto watched = MakeOpenAIWire()->NewAssembler(Request({}), [&](std::string_view t) { seen += t; });
  ASSERT_TRUE(watched->OnEvent({"", kTextAndToolsStream[1], ""}).ok());
  EXPECT_EQ(seen, "Grü");
  EXPECT_FALSE(watched->Complete());
}

TEST(OpenAIWireTest, StreamedStructuredOutput) {
  ModelRequest request = Request({Message::User("plan")});
  request.response_schema = Json::parse(R"({"type":"object"})");
  Streamed s = Stream(request,
                      Sse({R"({"choices":[{"index":0,"delta":{"content":"{\"steps\":"}}]})",
                           R"({"choices":[{"index":0,"delta":{"content":"[]}"}}]})", "[DONE]"}),
                      5);
  ASSERT_TRUE(s.response.ok());
  EXPECT_EQ(s.response->json, Json::parse(R"({"steps":[]})"));
  EXPECT_EQ(s.response->usage.input_tokens, 0);  // no usage chunk: an older server
}

TEST(OpenAIWireTest, StreamCutBeforeDoneIsAnError) {
  std::vector<std::string> cut(kTextAndToolsStream.begin(), kTextAndToolsStream.end() - 1);
  Streamed s = Stream(Request({}), Sse(cut), 3);
  EXPECT_TRUE(s.status.ok());
  EXPECT_FALSE(s.complete);
  ASSERT_FALSE(s.response.ok());
  EXPECT_THAT(s.response.status().message(), HasSubstr("stream ended before"));
  // Cut inside the [DONE] event itself: the blank line that completes it never came.
  std::string sse = Sse(kTextAndToolsStream);
  Streamed mid = Stream(Request({}), sse.substr(0, sse.size() - 3), 2);
  EXPECT_FALSE(mid.complete);
  EXPECT_FALSE(mid.response.ok());
}

TEST(OpenAIWireTest, ErrorChunkMidStreamFailsWithTheProvidersMessage) {
  Streamed s = Stream(Request({}),
                      Sse({kTextAndToolsStream[1],
                           R"({"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}})",
                           kTextAndToolsStream[2], "[DONE]"}),
                      7);
  EXPECT_EQ(s.status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.status.message(), "The server had an error while processing your request.");
  EXPECT_EQ(s.text, "Grü");
  EXPECT_FALSE(s.complete);
  EXPECT_FALSE(s.response.ok());
}

TEST(OpenAIWireTest, MalformedChunkIsInvalidArgument) {
  for (const std::string& chunk :
       std::vector<std::string>{R"({"choices":[{"index":0,"delta":{"content":"Hi"})", "[1]", "\"text\"", "nul"}) {
    Streamed s = Stream(Request({}), Sse({kTextAndToolsStream[1], chunk, "[DONE]"}), 1);
    EXPECT_EQ(s.status.code(), StatusCode::kInvalidArgument) << chunk;
    EXPECT_THAT(s.status.message(), StartsWith("malformed stream chunk: ")) << chunk;
  }
}

TEST(OpenAIWireTest, OddButValidChunksAreIgnored) {
  Streamed s = Stream(Request({}),
                      Sse({R"({"choices":null})", R"({"choices":[{"index":0,"delta":null}]})",
                           R"({"choices":[{"index":1,"delta":{"content":"second choice"}}]})",
                           R"({"choices":[{"index":0,"delta":{"content":"ok","tool_calls":[5,"x"],"refusal":null}}]})",
                           R"({"choices":[],"usage":null})", "[DONE]",
                           R"({"choices":[{"index":0,"delta":{"content":"after done"}}]})"}),
                      4);
  ASSERT_TRUE(s.status.ok()) << s.status.ToString();
  ASSERT_TRUE(s.response.ok());
  EXPECT_EQ(s.response->text, "ok");
  EXPECT_EQ(s.text, "ok");
  EXPECT_TRUE(s.response->tool_calls.empty());
}

TEST(OpenAIWireTest, OnePersonsMessagesGoWithoutASpeakerLabel) {
  // Only one person ever spoke: "[user]: " in front of each message would only puzzle
  // the model. Labels start when a second person speaks, for the whole history.
  Json one = Body(Request({Message::User("Hi", "user"), Message::User("Still there?", "user")}));
  EXPECT_EQ(one["messages"][0]["content"], "Hi");
  EXPECT_EQ(one["messages"][1]["content"], "Still there?");
  Json two = Body(Request({Message::User("Hi", "user"), Message::User("Me too", "bob")}));
  EXPECT_EQ(two["messages"][0]["content"], "[user]: Hi");
  EXPECT_EQ(two["messages"][1]["content"], "[bob]: Me too");
}

TEST(OpenAIWireTest, FinishReasonsSayWhetherTheAnswerIsFinished) {
  auto wire = MakeOpenAIWire();
  auto stop = wire->ParseBody(R"({"choices":[{"finish_reason":"stop","message":{"content":"Done."}}]})", Request({}));
  auto cut = wire->ParseBody(R"({"choices":[{"finish_reason":"length","message":{"content":"The answer is"}}]})",
                             Request({}));
  auto filtered = wire->ParseBody(R"({"choices":[{"finish_reason":"content_filter","message":{"content":""}}]})",
                                  Request({}));
  ASSERT_TRUE(stop.ok() && cut.ok() && filtered.ok());
  EXPECT_EQ(stop->finish, FinishReason::kStop);
  EXPECT_EQ(cut->finish, FinishReason::kLength);
  EXPECT_EQ(filtered->finish, FinishReason::kRefusal);
  // Streamed: the finish_reason of the last chunk.
  std::string sse = Sse({R"({"choices":[{"index":0,"delta":{"content":"The answer"}}]})",
                         R"({"choices":[{"index":0,"delta":{},"finish_reason":"length"}]})", "[DONE]"});
  Streamed s = Stream(Request({}), sse, 5);
  ASSERT_TRUE(s.response.ok()) << s.response.status().ToString();
  EXPECT_EQ(s.response->finish, FinishReason::kLength);
}

}  // namespace
}  // namespace reins
