// CPU cost of the wire formats: parsing a whole response, and assembling a streamed
// one per token (SSE framing + chunk JSON + delta assembly), for both providers.
// Run: make bench (or build-release/bench/reins_bench --benchmark_filter=Wire).
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "model/wire_format.h"
#include "net/sse.h"
#include "reins/json.h"

namespace reins {
namespace {

constexpr int kTokens = 200;

std::string Token(int i) { return i % 7 == 0 ? " café" : " word" + std::to_string(i % 10); }

std::string OpenAIStreamBytes() {
  std::string out;
  for (int i = 0; i < kTokens; ++i) {
    Json chunk = {{"object", "chat.completion.chunk"},
                  {"choices", {{{"index", 0}, {"delta", {{"content", Token(i)}}}, {"finish_reason", nullptr}}}}};
    out += "data: " + chunk.dump() + "\n\n";
  }
  out += R"(data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})" "\n\n";
  out += R"(data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":200}})" "\n\ndata: [DONE]\n\n";
  return out;
}

std::string AnthropicStreamBytes() {
  std::string out =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\","
      "\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n"
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
      "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
  for (int i = 0; i < kTokens; ++i) {
    Json e = {{"type", "content_block_delta"}, {"index", 0}, {"delta", {{"type", "text_delta"}, {"text", Token(i)}}}};
    out += "event: content_block_delta\ndata: " + e.dump() + "\n\n";
  }
  out += "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
         "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
         "\"usage\":{\"output_tokens\":200}}\n\n"
         "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  return out;
}

void StreamPerToken(benchmark::State& state, std::unique_ptr<WireFormat> wire, const std::string& bytes) {
  ModelRequest request;
  size_t received = 0;
  for (auto _ : state) {
    auto assembler = wire->NewAssembler(request, [&](std::string_view t) { received += t.size(); });
    SseParser parser;
    // Network reads arrive in pieces of a few hundred bytes.
    for (size_t i = 0; i < bytes.size(); i += 512) {
      parser.Feed(std::string_view(bytes).substr(i, 512), [&](SseEvent&& e) { (void)assembler->OnEvent(e); });
    }
    auto response = assembler->Finish();
    benchmark::DoNotOptimize(response);
  }
  state.SetItemsProcessed(state.iterations() * kTokens);
  state.counters["per_token"] = benchmark::Counter(static_cast<double>(state.iterations()) * kTokens,
                                                      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_WireOpenAIStreamPerToken(benchmark::State& state) { StreamPerToken(state, MakeOpenAIWire(), OpenAIStreamBytes()); }
void BM_WireAnthropicStreamPerToken(benchmark::State& state) {
  StreamPerToken(state, MakeAnthropicWire(), AnthropicStreamBytes());
}
BENCHMARK(BM_WireOpenAIStreamPerToken);
BENCHMARK(BM_WireAnthropicStreamPerToken);

// A typical tool-calling response: some text and two calls.
void BM_WireOpenAIParseResponse(benchmark::State& state) {
  auto wire = MakeOpenAIWire();
  const std::string body = R"({"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,
    "finish_reason":"tool_calls","message":{"role":"assistant","content":"Checking the schedule and saving that.",
    "tool_calls":[{"id":"call_1","type":"function","function":{"name":"service_times","arguments":"{\"day\":\"sunday\"}"}},
    {"id":"call_2","type":"function","function":{"name":"submit_prayer_request","arguments":"{\"name\":\"Anna\",\"request\":\"for my mother in hospital\"}"}}]}}],
    "usage":{"prompt_tokens":812,"completion_tokens":64,"total_tokens":876}})";
  ModelRequest request;
  for (auto _ : state) benchmark::DoNotOptimize(wire->ParseBody(body, request));
}
BENCHMARK(BM_WireOpenAIParseResponse);

void BM_WireAnthropicParseResponse(benchmark::State& state) {
  auto wire = MakeAnthropicWire();
  const std::string body = R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[
    {"type":"text","text":"Checking the schedule and saving that."},
    {"type":"tool_use","id":"toolu_1","name":"service_times","input":{"day":"sunday"}},
    {"type":"tool_use","id":"toolu_2","name":"submit_prayer_request","input":{"name":"Anna","request":"for my mother in hospital"}}],
    "stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":812,"output_tokens":64}})";
  ModelRequest request;
  for (auto _ : state) benchmark::DoNotOptimize(wire->ParseBody(body, request));
}
BENCHMARK(BM_WireAnthropicParseResponse);

// Serialising a 20-message history with tool results (every model call pays this).
void BM_WireBuildRequest(benchmark::State& state) {
  auto wire = state.range(0) == 0 ? MakeOpenAIWire() : MakeAnthropicWire();
  ModelConfig config;
  config.model = "m";
  ModelRequest request;
  request.messages.push_back(Message::System(std::string(2000, 's')));
  for (int i = 0; i < 5; ++i) {
    request.messages.push_back(Message::User("Please pray for my mother, she is in hospital."));
    ToolCall call{"call_" + std::to_string(i), "submit_prayer_request", R"({"request":"for my mother"})",
                  Json{{"request", "for my mother"}}, true};
    request.messages.push_back(Message::Assistant("", {call}));
    request.messages.push_back(Message::Tool(call.id, call.name, R"({"success":true,"data":{"id":"pr_1"}})", false));
    request.messages.push_back(Message::Assistant("I'm so sorry to hear that. The team will pray for her."));
  }
  for (auto _ : state) benchmark::DoNotOptimize(wire->BuildBody(config, request, true));
}
BENCHMARK(BM_WireBuildRequest)->Arg(0)->Arg(1)->ArgName("anthropic");

// An agent's tools: `n` of them, each with a schema of four properties, as a catalogue
// of real actions has.
std::shared_ptr<const std::vector<ToolSpec>> Tools(int n) {
  auto tools = std::make_shared<std::vector<ToolSpec>>();
  for (int i = 0; i < n; ++i) {
    Json schema = {{"type", "object"},
                   {"properties",
                    {{"customer_id", {{"type", "string"}, {"description", "The customer, as the CRM names them"}}},
                     {"amount", {{"type", "number"}, {"minimum", 0}}},
                     {"reason", {{"type", "string"}, {"enum", {"damaged", "late", "wrong_item"}}}},
                     {"notify", {{"type", "boolean"}}}}},
                   {"required", {"customer_id", "amount"}}};
    tools->push_back({"tool_" + std::to_string(i), "Refunds part of an order and tells the customer why.", schema});
  }
  return tools;
}

// The same request with an agent's tools (every call carries every tool's schema):
// range(0) the provider as above, range(1) the number of tools.
void BM_WireBuildRequestTools(benchmark::State& state) {
  auto wire = state.range(0) == 0 ? MakeOpenAIWire() : MakeAnthropicWire();
  ModelConfig config;
  config.model = "m";
  ModelRequest request;
  request.messages = {Message::System("You are a helpful assistant."), Message::User("What is the weather in Paris?")};
  request.tools = Tools(static_cast<int>(state.range(1)));
  for (auto _ : state) benchmark::DoNotOptimize(wire->BuildBody(config, request, false));
}
BENCHMARK(BM_WireBuildRequestTools)->ArgsProduct({{0, 1}, {1, 20, 200}})->ArgNames({"anthropic", "tools"});

}  // namespace
}  // namespace reins
