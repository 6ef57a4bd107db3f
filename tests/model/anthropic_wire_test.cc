// Anthropic Messages wire format: request bodies, whole responses, streams. The payloads
// are our own, written from the wire-format notes (see docs/providers.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

ModelRequest Structured(std::vector<Message> messages = {Message::User("plan")}) {
  ModelRequest r = Request(std::move(messages), nullptr, ToolChoice::None());
  r.response_schema = Json::parse(R"({"type":"object","required":["steps"]})");
  return r;
}

ModelConfig Config() {
  ModelConfig c;
  c.provider = "anthropic";
  c.model = "claude-test";
  return c;
}

Json Body(const ModelRequest& request, const ModelConfig& config = Config(), bool stream = false) {
  return Json::parse(MakeAnthropicWire()->BuildBody(config, request, stream));
}

// ---- Requests --------------------------------------------------------------------------

TEST(AnthropicWireTest, EndpointAndHeaders) {
  auto wire = MakeAnthropicWire();
  EXPECT_EQ(wire->Provider(), "anthropic");
  EXPECT_EQ(wire->DefaultBaseUrl(), "https://api.anthropic.com");
  EXPECT_EQ(wire->Path(), "/v1/messages");
  ModelConfig config = Config();
  auto bare = wire->Headers(config);
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_EQ(bare[0].name, "anthropic-version");
  EXPECT_EQ(bare[0].value, "2023-06-01");
  config.api_key = "sk-ant-test";
  auto headers = wire->Headers(config);
  ASSERT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers[0].name, "x-api-key");
  EXPECT_EQ(headers[0].value, "sk-ant-test");
  EXPECT_EQ(headers[1].name, "anthropic-version");
}

TEST(AnthropicWireTest, BuildsTheWholeRequestBody) {
  ModelConfig config = Config();
  config.temperature = 0.5;
  config.options = {{"max_tokens", 1000}, {"unrelated", true}};
  ModelRequest request = Request({Message::System("Be brief."), Message::User("Weather in Oslo?", "Ana"),
                                  Message::System("Answer in English.")},
                                 WeatherTools());
  EXPECT_EQ(Body(request, config, /*stream=*/true), Json::parse(R"({
    "model": "claude-test",
    "max_tokens": 1000,
    "system": "Be brief.\n\nAnswer in English.",
    "messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]}],
    "tools": [
      {"name": "get_weather", "description": "Current weather",
       "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
      {"name": "get_time", "description": "Local time", "input_schema": {"type": "object", "properties": {}}}],
    "tool_choice": {"type": "auto"},
    "temperature": 0.5,
    "stream": true})"));
}

TEST(AnthropicWireTest, DefaultsMaxTokensAndOmitsWhatIsUnset) {
  for (auto tools : {std::shared_ptr<const std::vector<ToolSpec>>(),
                     std::make_shared<const std::vector<ToolSpec>>()}) {
    Json body = Body(Request({Message::User("hi")}, tools, ToolChoice::Required()));
    EXPECT_EQ(body, Json::parse(R"({"model": "claude-test", "max_tokens": 4096,
      "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})"));
  }
}

TEST(AnthropicWireTest, MapsEveryToolChoiceMode) {
  const std::vector<std::pair<ToolChoice, Json>> cases = {
      {ToolChoice::Auto(), Json::parse(R"({"type":"auto"})")},
      {ToolChoice::Required(), Json::parse(R"({"type":"any"})")},
      {ToolChoice::None(), Json::parse(R"({"type":"none"})")},
      {ToolChoice::Named("get_time"), Json::parse(R"({"type":"tool","name":"get_time"})")},
  };
  for (const auto& [choice, expected] : cases) {
    Json body = Body(Request({Message::User("hi")}, WeatherTools(), choice));
    EXPECT_EQ(body["tool_choice"], expected) << choice.ToString();
  }
  ModelConfig serial = Config();
  serial.options = {{"parallel_tool_calls", false}};
  EXPECT_EQ(Body(Request({Message::User("hi")}, WeatherTools(), ToolChoice::Required()), serial)["tool_choice"],
            Json::parse(R"({"type":"any","disable_parallel_tool_use":true})"));
  EXPECT_EQ(Body(Request({Message::User("hi")}, WeatherTools(), ToolChoice::None()), serial)["tool_choice"],
            Json::parse(R"({"type":"none"})"));
}

// I10 on the wire: the tool_result blocks answer the calls in order, first in the one
// user message after the assistant turn; the next user text joins that message.
TEST(AnthropicWireTest, ToolResultsShareOneUserMessageBeforeTheNextUserText) {
  ModelRequest request = Request({
      Message::System("sys"),
      Message::User("Weather in Oslo and the time?", "Ana"),
      Message::Assistant("Checking both.",
                         {Call("toolu_1", "get_weather", R"({"city": "Oslo"})", {{"city", "Oslo"}}),
                          Call("toolu_2", "get_time", "{tz", Json::object(), false)}),
      Message::Tool("toolu_1", "get_weather", R"({"success":true,"data":{"temp":12}})", false),
      Message::Tool("toolu_2", "get_time", R"({"success":false,"next_action":"error","error":"bad arguments"})",
                    true),
      Message::User("Also Bergen please", "Bo"),
      Message::User("thanks"),
      Message::Assistant(""),  // nothing to send: skipped
      Message::Assistant("It is 12 degrees."),
  });
  EXPECT_EQ(Body(request)["messages"], Json::parse(R"([
    {"role": "user", "content": [{"type": "text", "text": "[Ana]: Weather in Oslo and the time?"}]},
    {"role": "assistant", "content": [
      {"type": "text", "text": "Checking both."},
      {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
      {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}}]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_1", "content": "{\"success\":true,\"data\":{\"temp\":12}}"},
      {"type": "tool_result", "tool_use_id": "toolu_2",
       "content": "{\"success\":false,\"next_action\":\"error\",\"error\":\"bad arguments\"}", "is_error": true},
      {"type": "text", "text": "[Bo]: Also Bergen please"},
      {"type": "text", "text": "thanks"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "It is 12 degrees."}]}])"));
}

TEST(AnthropicWireTest, AssistantWithOnlyCallsHasNoTextBlock) {
  ModelRequest request = Request({Message::User("time?"), Message::Assistant("", {Call("toolu_1", "get_time", "{}")}),
                                  Message::Tool("toolu_1", "get_time", "", false)});
  Json messages = Body(request)["messages"];
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[1]["content"], Json::parse(R"([{"type":"tool_use","id":"toolu_1","name":"get_time","input":{}}])"));
  // An empty result omits content rather than sending an empty string.
  EXPECT_EQ(messages[2]["content"], Json::parse(R"([{"type":"tool_result","tool_use_id":"toolu_1"}])"));
}

TEST(AnthropicWireTest, StructuredOutputForcesTheRespondTool) {
  ModelRequest request = Structured();
  Json body = Body(request);
  EXPECT_EQ(body["tools"], Json::parse(R"([{"name": "respond",
    "description": "Return the response as a JSON object matching the schema.",
    "input_schema": {"type":"object","required":["steps"]}}])"));
  EXPECT_EQ(body["tool_choice"], Json::parse(R"({"type":"tool","name":"respond"})"));
  // Next to the agent's own tools, still forced.
  request.tools = WeatherTools();
  body = Body(request);
  ASSERT_EQ(body["tools"].size(), 3u);
  EXPECT_EQ(body["tools"][2]["name"], "respond");
  EXPECT_EQ(body["tool_choice"], Json::parse(R"({"type":"tool","name":"respond"})"));
}

// The agent's tools are written once per vector and kept (wire::ToolsText); a request
// asking for a structured answer adds its respond tool to them without changing them.
TEST(AnthropicWireTest, TheKeptToolsAreTheRequestsOwn) {
  auto wire = MakeAnthropicWire();
  auto names = [&](const ModelRequest& request) {
    Json body = Json::parse(wire->BuildBody(Config(), request, false));
    std::vector<std::string> out;
    for (const Json& t : body["tools"]) out.push_back(t["name"]);
    return out;
  };
  auto agent = WeatherTools();
  ModelRequest structured = Structured();
  structured.tools = agent;
  EXPECT_EQ(names(structured), (std::vector<std::string>{"get_weather", "get_time", "respond"}));
  EXPECT_EQ(names(Request({Message::User("hi")}, agent)), (std::vector<std::string>{"get_weather", "get_time"}));
  EXPECT_EQ(names(structured), (std::vector<std::string>{"get_weather", "get_time", "respond"}));
  auto gather = std::make_shared<const std::vector<ToolSpec>>(std::vector<ToolSpec>{{"lookup", "Find it", Json()}});
  EXPECT_EQ(names(Request({Message::User("hi")}, gather)), std::vector<std::string>{"lookup"});
  EXPECT_EQ(names(Request({Message::User("hi")})), std::vector<std::string>{});
}

// The body is written as text (no DOM): it is exactly what a compact dump of it gives,
// keys sorted, whatever the history holds.
TEST(AnthropicWireTest, TheBodyTextIsTheCompactDumpOfItself) {
  ToolCall call{"call_1", "get_weather", R"({"city":"Oslo"})", Json{{"city", "Oslo"}}, true};
  ToolCall bad_args{"call_2", "get_time", "nope", Json::object(), false};
  std::vector<Message> history = {
      Message::System("Be brief."), Message::User("Weather in Oslo?", "Ana"), Message::User("And Bergen?", "Ben"),
      Message::Assistant("Let me look.", {call, bad_args}), Message::Tool("call_1", "get_weather", R"({"temp":3})", false),
      Message::User("also this"), Message::Tool("call_2", "get_time", "", true), Message::Assistant("   ", {}),
      Message::Assistant("done \"quoted\"\n", {})};
  ModelConfig config = Config();
  config.temperature = 0.25;
  ModelRequest structured = Structured(history);
  structured.tools = WeatherTools();
  for (const ModelRequest& request : {Request(history, WeatherTools(), ToolChoice::Named("get_time")), structured}) {
    for (bool stream : {false, true}) {
      const std::string text = MakeAnthropicWire()->BuildBody(config, request, stream);
      EXPECT_EQ(text, Json::parse(text).dump());
    }
  }
  // Tool results come first in their user message, before the text that followed them.
  Json body = Body(Request(history));
  EXPECT_EQ(body["messages"][2]["content"][0]["tool_use_id"], "call_1");
  EXPECT_EQ(body["messages"][2]["content"][1]["tool_use_id"], "call_2");
  EXPECT_EQ(body["messages"][2]["content"][2]["text"], "also this");
}

TEST(AnthropicWireTest, InvalidUtf8InHistoryDoesNotThrow) {
  std::string body = MakeAnthropicWire()->BuildBody(Config(), Request({Message::User("caf\xC3")}), false);
  EXPECT_TRUE(Json::accept(body));
}

// ---- Whole responses -------------------------------------------------------------------

TEST(AnthropicWireTest, ParsesTextToolUseAndUsageIgnoringUnknownBlocks) {
  auto r = MakeAnthropicWire()->ParseBody(R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-test",
    "content":[
      {"type":"thinking","thinking":"hmm","signature":"x"},
      {"type":"text","text":"Grüße 🙏 ","citations":null},
      {"type":"text","text":"checking."},
      {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Oslo"},"caller":{"type":"direct"}},
      {"type":"tool_use","id":"toolu_2","name":"get_time","input":{}},
      {"type":"server_tool_use","id":"srv_1","name":"web_search","input":{"q":"x"}}],
    "stop_reason":"tool_use","stop_sequence":null,"container":null,
    "usage":{"input_tokens":10,"output_tokens":12,"cache_read_input_tokens":0}})",
                                          Request({}, WeatherTools()));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text, "Grüße 🙏 checking.");
  ASSERT_EQ(r->tool_calls.size(), 2u);
  EXPECT_EQ(r->tool_calls[0].id, "toolu_1");
  EXPECT_EQ(r->tool_calls[0].name, "get_weather");
  EXPECT_EQ(r->tool_calls[0].args, Json::parse(R"({"city":"Oslo"})"));
  EXPECT_EQ(r->tool_calls[0].arguments_text, R"({"city":"Oslo"})");
  EXPECT_TRUE(r->tool_calls[0].args_valid);
  EXPECT_EQ(r->tool_calls[1].arguments_text, "{}");
  EXPECT_TRUE(r->tool_calls[1].args_valid);
  EXPECT_FALSE(r->json.has_value());
  EXPECT_EQ(r->usage.input_tokens, 10);
  EXPECT_EQ(r->usage.output_tokens, 12);
}

TEST(AnthropicWireTest, InputThatIsNotAnObjectIsInvalidNotFatal) {
  auto r = MakeAnthropicWire()->ParseBody(R"({"type":"message","content":[
      {"type":"tool_use","id":"toolu_1","name":"get_weather","input":[1,2]},
      {"type":"tool_use","id":"toolu_2","name":"get_weather","input":"{\"city\": \"Os"},
      {"type":"tool_use","id":"toolu_3","name":"get_weather","input":{"city":"Oslo"}}]})",
                                          Request({}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->tool_calls.size(), 3u);
  EXPECT_FALSE(r->tool_calls[0].args_valid);
  EXPECT_EQ(r->tool_calls[0].args, Json::object());
  EXPECT_EQ(r->tool_calls[0].arguments_text, "[1,2]");
  EXPECT_FALSE(r->tool_calls[1].args_valid);
  EXPECT_EQ(r->tool_calls[1].arguments_text, R"({"city": "Os)");
  EXPECT_TRUE(r->tool_calls[2].args_valid);
  EXPECT_EQ(r->usage.output_tokens, 0);
}

TEST(AnthropicWireTest, RespondToolIsTheStructuredAnswerNotACall) {
  auto wire = MakeAnthropicWire();
  auto r = wire->ParseBody(R"({"type":"message","content":[
      {"type":"text","text":"Here is the plan."},
      {"type":"tool_use","id":"toolu_9","name":"respond","input":{"steps":[{"id":"s1"}]}}],
    "usage":{"input_tokens":3,"output_tokens":4}})",
                           Structured());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->json, Json::parse(R"({"steps":[{"id":"s1"}]})"));
  EXPECT_TRUE(r->tool_calls.empty());
  EXPECT_EQ(r->text, "Here is the plan.");
  // Without a schema, a tool named respond is an ordinary call.
  auto plain = wire->ParseBody(
      R"({"type":"message","content":[{"type":"tool_use","id":"toolu_9","name":"respond","input":{}}]})", Request({}));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->json.has_value());
  ASSERT_EQ(plain->tool_calls.size(), 1u);
  // A model that answered in text: the text is read as the JSON when it is an object.
  auto text = wire->ParseBody(R"({"type":"message","content":[{"type":"text","text":"{\"steps\":[]}"}]})",
                              Structured());
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->json, Json::parse(R"({"steps":[]})"));
  auto neither = wire->ParseBody(R"({"type":"message","content":[{"type":"text","text":"no plan"}]})", Structured());
  ASSERT_TRUE(neither.ok());
  EXPECT_FALSE(neither->json.has_value());
  EXPECT_EQ(neither->text, "no plan");
}

TEST(AnthropicWireTest, MalformedBodiesAreErrorsNotCrashes) {
  auto wire = MakeAnthropicWire();
  for (const std::string& body :
       std::vector<std::string>{"", "{", "[1]", "{}", R"({"content":"hi"})", "{\"content\":[\"\xC3\"]}"}) {
    auto r = wire->ParseBody(body, Request({}));
    EXPECT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << body;
  }
  auto r = wire->ParseBody(R"({"content":[5,null,{"type":7},{"type":"text","text":["x"]},{"type":"tool_use"}],
                               "usage":{"input_tokens":"ten","output_tokens":1.5}})",
                           Request({}));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->text, "");
  ASSERT_EQ(r->tool_calls.size(), 1u);  // a tool_use without fields is still a call to answer
  EXPECT_EQ(r->tool_calls[0].name, "");
  EXPECT_EQ(r->usage.input_tokens, 0);
  EXPECT_EQ(r->usage.output_tokens, 0);
}

TEST(AnthropicWireTest, ErrorBodies) {
  auto wire = MakeAnthropicWire();
  const char* body =
      R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"})";
  EXPECT_EQ(wire->ErrorMessage(body), "overloaded_error: Overloaded");
  EXPECT_EQ(wire->ErrorMessage(R"({"type":"error","error":{"message":"Overloaded"}})"), "Overloaded");
  EXPECT_EQ(wire->ErrorMessage("upstream connect error"), "");
  EXPECT_EQ(wire->ErrorMessage(R"({"type":"message","content":[]})"), "");
  EXPECT_EQ(wire->ErrorMessage(R"({"error":"x"})"), "");
  auto parsed = wire->ParseBody(body, Request({}));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(parsed.status().message(), "overloaded_error: Overloaded");
}

// ---- Streams ---------------------------------------------------------------------------

// One SSE event per payload, named by its "type", with CRLF line endings so that pieces
// split "\r\n".
std::string Sse(const std::vector<std::string>& data) {
  std::string out;
  for (const std::string& d : data) {
    Json parsed = Json::parse(d, nullptr, false);
    std::string name = parsed.is_object() ? parsed.value("type", "") : "content_block_delta";
    out += "event: " + name + "\r\ndata: " + d + "\r\n\r\n";
  }
  return out;
}

Streamed Stream(const ModelRequest& request, std::string_view sse, size_t piece) {
  return wire_test::Stream(*MakeAnthropicWire(), request, sse, piece);
}

const std::vector<std::string> kTextAndToolsStream = {
    R"({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":25,"output_tokens":1}}})",
    R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
    R"({"type":"ping"})",
    R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Grü"}})",
    R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ße \ud83d\ude4f"}})",
    R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" — checking 🙏"}})",
    R"({"type":"content_block_stop","index":0})",
    R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}})",
    R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}})",
    R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"ci"}})",
    R"({"type":"ping"})",
    R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ty\": \"Zür"}})",
    R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ich\"}"}})",
    R"({"type":"content_block_stop","index":1})",
    R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_2","name":"get_time","input":{}}})",
    R"({"type":"content_block_stop","index":2})",
    R"({"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_3","name":"get_time","input":{}}})",
    R"({"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"tz\": "}})",
    R"({"type":"content_block_stop","index":3})",
    R"({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}})",
    R"({"type":"message_stop"})",
};

// The same response as one body; the cut-off arguments of toolu_3 cannot be written
// as a whole-response input object, so that call is checked separately.
const char* kTextAndToolsWhole = R"({"type":"message","content":[
    {"type":"text","text":"Grüße 🙏 — checking 🙏"},
    {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Zürich"}},
    {"type":"tool_use","id":"toolu_2","name":"get_time","input":{}}],
  "usage":{"input_tokens":25,"output_tokens":30}})";

TEST(AnthropicWireTest, StreamSplitAnywhereEqualsTheWholeResponse) {
  ModelRequest request = Request({Message::User("hi")}, WeatherTools());
  auto whole = MakeAnthropicWire()->ParseBody(kTextAndToolsWhole, request);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  std::string sse = Sse(kTextAndToolsStream);
  for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, sse.size()}) {
    SCOPED_TRACE("piece " + std::to_string(piece));
    Streamed s = Stream(request, sse, piece);
    ASSERT_TRUE(s.status.ok()) << s.status.ToString();
    EXPECT_TRUE(s.complete);
    ASSERT_TRUE(s.response.ok()) << s.response.status().ToString();
    ASSERT_EQ(s.response->tool_calls.size(), 3u);
    const ToolCall bad = s.response->tool_calls.back();
    EXPECT_EQ(bad.id, "toolu_3");
    EXPECT_FALSE(bad.args_valid);
    EXPECT_EQ(bad.args, Json::object());
    EXPECT_EQ(bad.arguments_text, R"({"tz": )");
    s.response->tool_calls.pop_back();
    ExpectSameResponse(*s.response, *whole);
    EXPECT_EQ(s.response->tool_calls[0].arguments_text, R"({"city":"Zürich"})");
    EXPECT_EQ(s.text, "Grüße 🙏 — checking 🙏");
    EXPECT_EQ(s.text, s.response->text);
    EXPECT_EQ(s.text_calls, 3);
  }
}

TEST(AnthropicWireTest, ThePayloadTypeWinsOverTheEventName) {
  // No event: lines at all (a proxy that drops them), and one misnamed event.
  std::string sse;
  for (const std::string& d : kTextAndToolsStream) sse += "data: " + d + "\n\n";
  sse = "event: ping\n" + sse;
  Streamed s = Stream(Request({}), sse, 5);
  ASSERT_TRUE(s.status.ok()) << s.status.ToString();
  ASSERT_TRUE(s.response.ok());
  EXPECT_EQ(s.response->text, "Grüße 🙏 — checking 🙏");
  EXPECT_EQ(s.response->usage.input_tokens, 25);
}

TEST(AnthropicWireTest, StreamedStructuredOutput) {
  Streamed s = Stream(
      Structured(),
      Sse({R"({"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}})",
           R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"respond","input":{}}})",
           R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"steps\":"}})",
           R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" []}"}})",
           R"({"type":"content_block_stop","index":0})",
           R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}})",
           R"({"type":"message_stop"})"}),
      3);
  ASSERT_TRUE(s.response.ok()) << s.response.status().ToString();
  EXPECT_EQ(s.response->json, Json::parse(R"({"steps":[]})"));
  EXPECT_TRUE(s.response->tool_calls.empty());
  EXPECT_EQ(s.text, "");
  EXPECT_EQ(s.response->usage.input_tokens, 5);
  EXPECT_EQ(s.response->usage.output_tokens, 9);
}

TEST(AnthropicWireTest, StreamCutBeforeMessageStopIsAnError) {
  std::vector<std::string> cut(kTextAndToolsStream.begin(), kTextAndToolsStream.end() - 1);
  Streamed s = Stream(Request({}), Sse(cut), 2);
  EXPECT_TRUE(s.status.ok());
  EXPECT_FALSE(s.complete);
  ASSERT_FALSE(s.response.ok());
  EXPECT_EQ(s.response.status().code(), StatusCode::kAborted);
  EXPECT_THAT(s.response.status().message(), HasSubstr("stream ended before"));
  std::string sse = Sse(kTextAndToolsStream);
  Streamed mid = Stream(Request({}), sse.substr(0, sse.size() - 2), 7);  // no blank line after message_stop
  EXPECT_FALSE(mid.complete);
  EXPECT_FALSE(mid.response.ok());
}

TEST(AnthropicWireTest, ErrorEventMidStreamFailsWithTheProvidersMessage) {
  std::vector<std::string> events(kTextAndToolsStream.begin(), kTextAndToolsStream.begin() + 4);
  events.push_back(R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
  events.push_back(kTextAndToolsStream[4]);
  Streamed s = Stream(Request({}), Sse(events), 3);
  EXPECT_EQ(s.status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.status.message(), "overloaded_error: Overloaded");
  EXPECT_EQ(s.text, "Grü");
  EXPECT_FALSE(s.complete);
  EXPECT_FALSE(s.response.ok());
}

TEST(AnthropicWireTest, MalformedChunkIsInvalidArgument) {
  for (const std::string& chunk : std::vector<std::string>{"{not json}", "[]", "42", R"({"type":"content_block_delta")"}) {
    std::vector<std::string> events(kTextAndToolsStream.begin(), kTextAndToolsStream.begin() + 4);
    events.push_back(chunk);
    Streamed s = Stream(Request({}), Sse(events), 1);
    EXPECT_EQ(s.status.code(), StatusCode::kInvalidArgument) << chunk;
    EXPECT_THAT(s.status.message(), StartsWith("malformed stream chunk: ")) << chunk;
  }
}

TEST(AnthropicWireTest, OddButValidEventsAreIgnored) {
  Streamed s = Stream(
      Request({}),
      Sse({R"({"type":"message_start","message":null})", R"({"type":"content_block_start","index":0})",
           R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}})",
           R"({"type":"content_block_delta","index":0,"delta":null})",
           R"({"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"hmm"}})",
           R"({"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}})",
           R"({"type":"brand_new_event","x":1})", R"({"type":"message_delta","usage":{"output_tokens":"many"}})",
           R"({"type":"message_stop"})",
           R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"after stop"}})"}),
      4);
  ASSERT_TRUE(s.status.ok()) << s.status.ToString();
  ASSERT_TRUE(s.response.ok()) << s.response.status().ToString();
  EXPECT_EQ(s.response->text, "ok");
  EXPECT_EQ(s.text, "ok");
  EXPECT_TRUE(s.response->tool_calls.empty());
  EXPECT_EQ(s.response->usage.output_tokens, 0);
}

TEST(AnthropicWireTest, StopReasonsSayWhetherTheAnswerIsFinished) {
  auto wire = MakeAnthropicWire();
  auto body = [&](const char* stop) {
    return wire->ParseBody(std::string(R"({"type":"message","content":[{"type":"text","text":"Hm"}],"stop_reason":")") +
                               stop + "\"}",
                           Request({}));
  };
  EXPECT_EQ(body("end_turn")->finish, FinishReason::kStop);
  EXPECT_EQ(body("tool_use")->finish, FinishReason::kStop);
  EXPECT_EQ(body("max_tokens")->finish, FinishReason::kLength);
  EXPECT_EQ(body("refusal")->finish, FinishReason::kRefusal);
  EXPECT_EQ(body("pause_turn")->finish, FinishReason::kPaused);
  // Streamed: message_delta carries it.
  std::string sse = Sse({R"({"type":"message_start","message":{"id":"m","usage":{"input_tokens":1}}})",
                         R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})",
                         R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Searching"}})",
                         R"({"type":"message_delta","delta":{"stop_reason":"pause_turn"},"usage":{"output_tokens":2}})",
                         R"({"type":"message_stop"})"});
  Streamed s = Stream(Request({}), sse, 4);
  ASSERT_TRUE(s.response.ok()) << s.response.status().ToString();
  EXPECT_EQ(s.response->finish, FinishReason::kPaused);
}

}  // namespace
}  // namespace reins
