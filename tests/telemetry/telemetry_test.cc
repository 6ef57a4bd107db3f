// OpenTelemetry in reins (src/telemetry): the trace context, a turn's events as spans
// (the GenAI conventions, governance as span events, contents only when asked), their
// OTLP JSON, and an exporter whose collector is dead or whose queue is full.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "telemetry/otlp_exporter.h"
#include "telemetry/otlp_json.h"
#include "telemetry/turn_spans.h"
#include "telemetry/turn_telemetry.h"

namespace reins::telemetry {
namespace {

TraceEvent Event(EventType type, int64_t at_ms, Json data) { return TraceEvent{type, 3, at_ms, std::move(data)}; }

// One turn as the pipeline records it: two model calls, a tool that ran, a call the
// schema refused, a deferral, a rail, a clarification and the floor.
std::vector<TraceEvent> ATurn(const std::string& traceparent = "") {
  Json input = {{"speaker", "alice"}, {"say", "refund order o_1"}};
  if (!traceparent.empty()) input["traceparent"] = traceparent;
  return {
      Event(EventType::kTurnStarted, 1000, {{"turn_id", "t_9"}, {"speaker", "alice"}, {"input", input}}),
      Event(EventType::kModelCall, 1001, {{"purpose", "chat"}, {"model", "gpt-x"}}),
      Event(EventType::kModelResponse, 1201,
            {{"response", 1}, {"text", "Let me look."}, {"tool_calls", Json::array({{{"id", "c1"}, {"name", "lookup"}, {"arguments", R"({"id":"o_1"})"}}})},
             {"usage", {{"input_tokens", 120}, {"output_tokens", 30}}}}),
      Event(EventType::kToolExecuted, 1251,
            {{"call_id", "c1"}, {"name", "lookup"}, {"args", {{"id", "o_1"}}}, {"response", 1}, {"position", 0},
             {"result", {{"success", true}, {"data", {{"total", 12}}}}}, {"success", true}, {"next_action", "continue"},
             {"latency_ms", 50}}),
      Event(EventType::kToolRejected, 1252,
            {{"call_id", "c2"}, {"name", "refund"}, {"args", {{"id", 7}}}, {"response", 1}, {"position", 1},
             {"reason", "schema"}, {"guard", "schema"}, {"message", "id must be a string"}}),
      Event(EventType::kToolDeferred, 1253,
            {{"call_id", "c3"}, {"name", "note"}, {"args", {{"text", "refund asked"}}}, {"response", 1}, {"position", 2},
             {"idempotency_key", "t_9:1:2"}}),
      Event(EventType::kModelCall, 1260, {{"purpose", "chat"}, {"model", "gpt-x"}}),
      Event(EventType::kModelResponse, 1400,
            {{"response", 2}, {"text", "Done, Alice."}, {"model", "gpt-x-0613"}, {"provider_finish", "end_turn"},
             {"usage", {{"input_tokens", 200}, {"output_tokens", 8}}}}),
      Event(EventType::kRailFired, 1401, {{"rail", "names"}, {"before", "Done, Alice."}, {"after", "Done."}}),
      Event(EventType::kClarification, 1402, {{"id", "c_1"}, {"type", "contact"}, {"question", "Which one?"}, {"tool", "lookup"}}),
      Event(EventType::kLeaseOpened, 1403, {{"owner", "alice"}, {"domain", "orders"}, {"expires_at", "2026-01-01T00:00:00Z"}}),
      Event(EventType::kReplyFinal, 1404, {{"text", "Done."}}),
      Event(EventType::kTurnCompleted, 1405, {{"status", "awaiting_clarification"}, {"phase", "awaiting_clarification"}}),
  };
}

std::map<std::string, Json> Attrs(const Attributes& attributes) {
  std::map<std::string, Json> out;
  for (const auto& [k, v] : attributes) out[k] = v;
  return out;
}

const SpanEvent* FindEvent(const Span& s, const std::string& name) {
  for (const SpanEvent& e : s.events) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

TEST(TraceContext, ReadsAWellFormedTraceparentAndIgnoresTheRest) {
  auto c = ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(c->span_id, "00f067aa0ba902b7");
  EXPECT_TRUE(c->sampled);
  EXPECT_EQ(FormatTraceparent(*c), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  EXPECT_FALSE(ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")->sampled);
  for (const char* bad : {"", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                          "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                          "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                          "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01"}) {
    EXPECT_FALSE(ParseTraceparent(bad)) << bad;
  }
}

TEST(TraceContext, DerivedIdsAreStableHexAndDistinct) {
  EXPECT_EQ(DerivedTraceId("s_1#3"), DerivedTraceId("s_1#3"));
  EXPECT_NE(DerivedTraceId("s_1#3"), DerivedTraceId("s_1#4"));
  EXPECT_EQ(DerivedTraceId("x").size(), 32u);
  EXPECT_EQ(DerivedSpanId("x").size(), 16u);
  EXPECT_EQ(DerivedSpanId("x").find_first_not_of("0123456789abcdef"), std::string::npos);
  const TurnIds a = IdsOfTurn("s_1", 3, ""), b = IdsOfTurn("s_1", 3, "");
  EXPECT_EQ(a.turn.span_id, b.turn.span_id);
  EXPECT_NE(ToolSpanId(a, 1, 0), ToolSpanId(a, 1, 1));
  EXPECT_NE(ToolSpanId(a, 1, 0), DeferredSpanId(a, "k"));
}

TEST(TurnSpans, ATurnIsAnInvokeAgentSpanWithChatAndToolChildren) {
  const std::vector<Span> spans = SpansOfTurn({"s_1", "care", "openai", ATurn(), false});
  ASSERT_EQ(spans.size(), 4u);  // the turn, two model calls, one tool
  const Span& turn = spans[0];
  EXPECT_EQ(turn.name, "invoke_agent care");
  EXPECT_TRUE(turn.parent_span_id.empty());
  EXPECT_EQ(turn.start_ns, 1000 * 1000000LL);
  EXPECT_EQ(turn.end_ns, 1405 * 1000000LL);
  auto a = Attrs(turn.attributes);
  EXPECT_EQ(a["gen_ai.operation.name"], "invoke_agent");
  EXPECT_EQ(a["gen_ai.agent.name"], "care");
  EXPECT_EQ(a["gen_ai.provider.name"], "openai");
  EXPECT_EQ(a["gen_ai.conversation.id"], "s_1");
  EXPECT_EQ(a["reins.turn.id"], "t_9");
  EXPECT_EQ(a["reins.turn.status"], "awaiting_clarification");
  EXPECT_EQ(a["gen_ai.usage.input_tokens"], 320);
  EXPECT_EQ(a["gen_ai.usage.output_tokens"], 38);
  for (size_t i = 1; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i].trace_id, turn.trace_id);
    EXPECT_EQ(spans[i].parent_span_id, turn.span_id);
  }
  const Span& chat = spans[1];
  EXPECT_EQ(chat.name, "chat gpt-x");
  EXPECT_EQ(chat.kind, SpanKind::kClient);
  auto c = Attrs(chat.attributes);
  EXPECT_EQ(c["gen_ai.operation.name"], "chat");
  EXPECT_EQ(c["gen_ai.request.model"], "gpt-x");
  EXPECT_EQ(c["gen_ai.usage.input_tokens"], 120);
  EXPECT_EQ(c["gen_ai.usage.output_tokens"], 30);
  // A response with calls, whose provider gave no reason of its own: reins' reading.
  EXPECT_EQ(c["gen_ai.response.finish_reasons"], Json::array({"tool_calls"}));
  EXPECT_EQ(c.count("gen_ai.response.model"), 0u) << "the provider did not say";
  EXPECT_EQ(chat.start_ns, 1001 * 1000000LL);
  // The provider's own words where it gave them (second probe, finding 7).
  auto c2 = Attrs(spans[3].attributes);
  EXPECT_EQ(c2["gen_ai.response.finish_reasons"], Json::array({"end_turn"}));
  EXPECT_EQ(c2["gen_ai.response.model"], "gpt-x-0613");
  EXPECT_EQ(spans[3].span_id, ChatSpanId(IdsOfTurn("s_1", 3, ""), 2)) << "the id its provider was told";
  EXPECT_EQ(chat.end_ns, 1201 * 1000000LL);
  const Span& tool = spans[2];
  EXPECT_EQ(tool.name, "execute_tool lookup");
  auto t = Attrs(tool.attributes);
  EXPECT_EQ(t["gen_ai.operation.name"], "execute_tool");
  EXPECT_EQ(t["gen_ai.tool.name"], "lookup");
  EXPECT_EQ(t["gen_ai.tool.call.id"], "c1");
  EXPECT_EQ(tool.span_id, ToolSpanId(IdsOfTurn("s_1", 3, ""), 1, 0)) << "the id its backend was told";
  EXPECT_EQ(tool.start_ns, 1201 * 1000000LL);  // 50 ms before it ended
  EXPECT_FALSE(tool.error);
}

TEST(TurnSpans, GovernanceDecisionsAreEventsOfTheTurnSpan) {
  const Span turn = SpansOfTurn({"s_1", "care", "openai", ATurn(), false})[0];
  const SpanEvent* rejected = FindEvent(turn, "reins.tool.rejected");
  ASSERT_NE(rejected, nullptr);
  auto r = Attrs(rejected->attributes);
  EXPECT_EQ(r["gen_ai.tool.name"], "refund");
  EXPECT_EQ(r["gen_ai.tool.call.id"], "c2");
  EXPECT_EQ(r["reins.reason"], "schema");
  EXPECT_EQ(r["reins.guard"], "schema");
  EXPECT_EQ(rejected->time_ns, 1252 * 1000000LL);
  ASSERT_NE(FindEvent(turn, "reins.tool.deferred"), nullptr);
  EXPECT_EQ(Attrs(FindEvent(turn, "reins.tool.deferred")->attributes)["reins.idempotency_key"], "t_9:1:2");
  ASSERT_NE(FindEvent(turn, "reins.rail.fired"), nullptr);
  EXPECT_EQ(Attrs(FindEvent(turn, "reins.rail.fired")->attributes)["reins.rail"], "names");
  ASSERT_NE(FindEvent(turn, "reins.clarification"), nullptr);
  EXPECT_EQ(Attrs(FindEvent(turn, "reins.lease.opened")->attributes)["reins.owner"], "alice");
  EXPECT_EQ(FindEvent(turn, "reins.reply.final"), nullptr) << "the reply is content, not a decision";
}

// untrusted_data on a span: the label on the tool span whose result is outside data, the
// violation (with where the values came from) and the question as events of the turn.
TEST(TurnSpans, OutsideDataShowsAsALabelAndAsGovernanceEvents) {
  const Json provenance = {{"recipient", {{{"tool", "read_file"}, {"call_id", "c1"}, {"turn", 1}}}}};
  std::vector<TraceEvent> events = {
      Event(EventType::kTurnStarted, 1000, {{"turn_id", "t_1"}, {"speaker", "ana"}, {"input", {{"say", "pay it"}}}}),
      Event(EventType::kToolExecuted, 1010,
            {{"call_id", "c1"}, {"name", "read_file"}, {"args", Json::object()}, {"response", 1}, {"position", 0},
             {"result", {{"success", true}}}, {"success", true}, {"next_action", "continue"}, {"latency_ms", 5},
             {"untrusted", true}}),
      Event(EventType::kUntrustedViolation, 1020,
            {{"call_id", "c2"}, {"name", "send_money"}, {"args", {{"recipient", "US13"}}}, {"response", 2}, {"position", 0},
             {"kind", "value"}, {"outcome", "approve"}, {"arguments", provenance}}),
      Event(EventType::kApproval, 1021, {{"id", "a_1"}, {"tool", "send_money"}, {"args", {{"recipient", "US13"}}},
                                         {"reason", "untrusted_data"}, {"prompt", "The recipient “US13” ...?"},
                                         {"provenance", provenance}}),
      Event(EventType::kTurnCompleted, 1030, {{"status", "awaiting_approval"}, {"phase", "awaiting_approval"}}),
  };
  const std::vector<Span> spans = SpansOfTurn({"s_1", "bank", "openai", events, false});
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(Attrs(spans[1].attributes)["reins.tool.untrusted"], true);
  const SpanEvent* violation = FindEvent(spans[0], "reins.untrusted.violation");
  ASSERT_NE(violation, nullptr);
  auto v = Attrs(violation->attributes);
  EXPECT_EQ(v["reins.kind"], "value");
  EXPECT_EQ(v["reins.outcome"], "approve");
  EXPECT_EQ(Json::parse(v["reins.arguments"].get<std::string>()), provenance);
  EXPECT_EQ(v.count("reins.args"), 0u) << "the arguments are content";
  const SpanEvent* asked = FindEvent(spans[0], "reins.approval");
  ASSERT_NE(asked, nullptr);
  auto q = Attrs(asked->attributes);
  EXPECT_EQ(q["reins.reason"], "untrusted_data");
  EXPECT_EQ(q.count("reins.prompt"), 0u) << "the question quotes the values: content";
}

TEST(TurnSpans, ContentsAreLeftOutUnlessAskedFor) {
  const auto everything = [](const std::vector<Span>& spans) {
    Json all = Json::array();
    for (const Span& s : spans) {
      for (const auto& [k, v] : s.attributes) all.push_back({k, v});
      for (const SpanEvent& e : s.events) {
        for (const auto& [k, v] : e.attributes) all.push_back({k, v});
      }
    }
    return all.dump();
  };
  const std::string without = everything(SpansOfTurn({"s_1", "care", "openai", ATurn(), false}));
  for (const char* content : {"o_1", "Done, Alice.", "Let me look.", "id must be a string", "refund asked", "Which one?"}) {
    EXPECT_EQ(without.find(content), std::string::npos) << content;
  }
  const std::vector<Span> with = SpansOfTurn({"s_1", "care", "openai", ATurn(), true});
  auto tool = Attrs(with[2].attributes);
  EXPECT_EQ(Json::parse(tool["gen_ai.tool.call.arguments"].get<std::string>()), Json({{"id", "o_1"}}));
  EXPECT_TRUE(tool.contains("gen_ai.tool.call.result"));
  const Json output = Json::parse(Attrs(with[1].attributes)["gen_ai.output.messages"].get<std::string>());
  EXPECT_EQ(output[0]["parts"][0]["content"], "Let me look.");
  // The call's arguments as the model wrote them (model.response keeps their text), parsed.
  EXPECT_EQ(output[0]["parts"][1]["arguments"], Json({{"id", "o_1"}})) << output.dump();
  EXPECT_EQ(Attrs(FindEvent(with[0], "reins.rail.fired")->attributes)["reins.before"], "Done, Alice.");
}

TEST(TurnSpans, ACallersTraceparentMakesTheTurnItsChild) {
  const std::string parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const std::vector<Span> spans = SpansOfTurn({"s_1", "care", "openai", ATurn(parent), false});
  EXPECT_EQ(spans[0].trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(spans[0].parent_span_id, "00f067aa0ba902b7");
  EXPECT_EQ(spans[2].span_id, ToolSpanId(IdsOfTurn("s_1", 3, parent), 1, 0));
  EXPECT_NE(spans[0].span_id, SpansOfTurn({"s_1", "care", "openai", ATurn(), false})[0].span_id);
}

TEST(TurnSpans, AFailedModelCallAndAFailedTurnAreErrors) {
  std::vector<TraceEvent> events = {
      Event(EventType::kTurnStarted, 10, {{"turn_id", "t_1"}, {"input", Json::object()}}),
      Event(EventType::kModelCall, 11, {{"purpose", "chat"}}),
      Event(EventType::kModelError, 20, {{"message", "openai: HTTP 503"}}),
      Event(EventType::kTurnFailed, 21, {{"error", "the model is unavailable"}}),
      Event(EventType::kTurnCompleted, 22, {{"status", "failed"}}),
  };
  const std::vector<Span> spans = SpansOfTurn({"s_1", "care", "openai", events, false});
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_TRUE(spans[0].error);
  EXPECT_EQ(spans[0].error_message, "the model is unavailable");
  EXPECT_TRUE(spans[1].error);
  EXPECT_EQ(Attrs(spans[1].attributes)["error.type"], "model_error");
}

TEST(TurnSpans, AWriteThatRanAfterItsTurnIsASpanUnderTheTurn) {
  const TurnIds ids = IdsOfTurn("s_1", 3, "");
  TraceEvent ran = Event(EventType::kDeferredExecuted, 2000,
                         {{"name", "note"}, {"args", {{"text", "x"}}}, {"idempotency_key", "t_9:1:2"},
                          {"result", {{"success", false}, {"error", "down"}}}, {"success", false}, {"latency_ms", 30}, {"mode", "await"}});
  const Span s = SpanOfDeferredRun(ids, "s_1", ran, false);
  EXPECT_EQ(s.parent_span_id, SpansOfTurn({"s_1", "care", "openai", ATurn(), false})[0].span_id);
  EXPECT_EQ(s.span_id, DeferredSpanId(ids, "t_9:1:2"));
  EXPECT_EQ(s.name, "execute_tool note");
  EXPECT_TRUE(s.error);
  auto a = Attrs(s.attributes);
  EXPECT_EQ(a["reins.tool.deferred"], true);
  EXPECT_EQ(a["error.type"], "tool_error");
}

TEST(OtlpJson, SpansAreEncodedAsTheMappingSays) {
  Span s;
  s.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  s.span_id = "00f067aa0ba902b7";
  s.name = "chat m";
  s.kind = SpanKind::kClient;
  s.start_ns = 1700000000123456789;
  s.end_ns = 1700000000223456789;
  s.attributes = {{"a.s", "x"}, {"a.i", 42}, {"a.b", true}, {"a.d", 0.5}, {"a.l", Json::array({"p", "q"})}, {"a.n", nullptr}};
  s.events = {{"reins.x", 1700000000123456790, {{"k", "v"}}}};
  s.error = true;
  s.error_message = "boom";
  const Json body = TraceRequestJson({"svc", "1.2"}, {s});
  const Json& scope = body["resourceSpans"][0]["scopeSpans"][0];
  EXPECT_EQ(scope["scope"]["name"], "reins");
  const Json& span = scope["spans"][0];
  EXPECT_EQ(span["traceId"], s.trace_id);
  EXPECT_EQ(span["kind"], 3);
  EXPECT_EQ(span["startTimeUnixNano"], "1700000000123456789");
  EXPECT_FALSE(span.contains("parentSpanId"));
  EXPECT_EQ(span["status"], Json({{"code", 2}, {"message", "boom"}}));
  EXPECT_EQ(span["attributes"], Json::parse(R"([{"key":"a.s","value":{"stringValue":"x"}},{"key":"a.i","value":{"intValue":"42"}},
      {"key":"a.b","value":{"boolValue":true}},{"key":"a.d","value":{"doubleValue":0.5}},
      {"key":"a.l","value":{"arrayValue":{"values":[{"stringValue":"p"},{"stringValue":"q"}]}}}])"));
  EXPECT_EQ(span["events"][0]["timeUnixNano"], "1700000000123456790");
  EXPECT_EQ(body["resourceSpans"][0]["resource"]["attributes"][0],
            Json::parse(R"({"key":"service.name","value":{"stringValue":"svc"}})"));
}

TEST(OtlpJson, TheTextTheExporterSendsIsTheDomsDumpByteForByte) {
  std::vector<Span> spans = SpansOfTurn({"s_1", "care", "openai", ATurn("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), true});
  spans.push_back(SpanOfDeferredRun(IdsOfTurn("s_1", 3, ""), "s_1",
                                    Event(EventType::kDeferredExecuted, 9, {{"name", "n\"ote\n\xff"}, {"success", false}}), true));
  Span every_kind = spans.back();  // each kind of AnyValue the text writer writes itself
  every_kind.attributes = {{"b", true}, {"i", -42}, {"u", 7u}, {"d", 0.25}, {"s", "t\u00e9xt"}, {"null", nullptr},
                           {"a", Json::array({1, "x", false, Json::array({2.5})})}, {"o", {{"k", "v"}}}};
  spans.push_back(every_kind);
  const Resource resource{"care", "1.0"};
  EXPECT_EQ(TraceRequestText(resource, spans),
            TraceRequestJson(resource, spans).dump(-1, ' ', false, Json::error_handler_t::replace));
  EXPECT_EQ(TraceRequestText(resource, {}), TraceRequestJson(resource, {}).dump());
}

TEST(Exporter, OptionsComeFromTheFileAndTheStandardVariablesWin) {
  static std::map<std::string, std::string> env;
  GetEnv get = [](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  env.clear();
  EXPECT_EQ(ExporterOptionsFrom("", "", "care", get).endpoint, "");
  ExporterOptions o = ExporterOptionsFrom("http://collector:4318/", "", "care", get);
  EXPECT_EQ(o.endpoint, "http://collector:4318/v1/traces");
  EXPECT_EQ(o.resource.service_name, "care");
  env = {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel:4318"}, {"OTEL_SERVICE_NAME", "care-prod"},
         {"OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b, x-tenant = acme ,bad,x y=1,x-crlf=a%0D%0AHost: evil,x-nul=a%00b"}};
  o = ExporterOptionsFrom("http://collector:4318", "care-dev", "care", get);
  EXPECT_EQ(o.endpoint, "http://otel:4318/v1/traces");
  EXPECT_EQ(o.resource.service_name, "care-prod");
  ASSERT_EQ(o.headers.size(), 2u);
  EXPECT_EQ(o.headers[0].name, "api-key");
  EXPECT_EQ(o.headers[0].value, "a b");
  EXPECT_EQ(o.headers[1].value, "acme");
  // Second probe, finding 5: a name with a space, a value with CR LF or NUL were sent raw.
  ASSERT_EQ(o.refused_headers.size(), 4u) << ::testing::PrintToString(o.refused_headers);
  EXPECT_NE(o.refused_headers[0].find("'bad' has no '='"), std::string::npos);
  EXPECT_NE(o.refused_headers[1].find("'x y' is not a header name"), std::string::npos);
  EXPECT_NE(o.refused_headers[2].find("'x-crlf' holds control bytes"), std::string::npos);
  EXPECT_NE(o.refused_headers[3].find("'x-nul' holds control bytes"), std::string::npos);
  env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "http://traces:9999/custom";
  EXPECT_EQ(ExporterOptionsFrom("", "", "care", get).endpoint, "http://traces:9999/custom");
}

TEST(Exporter, ADeadCollectorCostsTheCallerNothingAndItsSpansAreCounted) {
  ExporterOptions o;
  o.endpoint = "http://127.0.0.1:1/v1/traces";  // nothing listens on port 1
  o.resource.service_name = "t";
  o.timeout_ms = 2000;
  auto said = std::make_shared<std::vector<std::string>>();
  o.warn = [said](const std::string& line) { said->push_back(line); };
  OtlpExporter exporter(o);
  std::vector<Span> spans = SpansOfTurn({"s_1", "care", "openai", ATurn(), false});
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) exporter.Export(spans);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::milliseconds(200)) << "Export() only queues";
  exporter.Flush();
  const ExportCounts c = exporter.counts();
  EXPECT_EQ(c.exported, 0);
  EXPECT_EQ(c.dropped_export_failed + c.dropped_queue_full, 400);
  // Second probe, finding 5: a failing export was only counted. It is said once.
  ASSERT_EQ(said->size(), 1u) << ::testing::PrintToString(*said);
  EXPECT_NE((*said)[0].find("exporting spans to http://127.0.0.1:1/v1/traces failed"), std::string::npos) << (*said)[0];
}

TEST(Exporter, SpansBeyondTheQueueAreDroppedNotWaitedFor) {
  ExporterOptions o;
  o.endpoint = "http://127.0.0.1:1/v1/traces";
  o.max_queue = 3;
  o.max_batch = 100;
  o.flush_interval_ms = 60000;  // nothing leaves before Flush
  OtlpExporter exporter(o);
  exporter.Export(SpansOfTurn({"s_1", "care", "openai", ATurn(), false}));  // 4 spans
  exporter.Export(SpansOfTurn({"s_1", "care", "openai", ATurn(), false}));
  EXPECT_EQ(exporter.counts().dropped_queue_full, 5);
  exporter.Flush();
  EXPECT_EQ(exporter.counts().dropped_export_failed, 3);
}

TEST(Exporter, AfterAFailedSendTurnsAreOnlyCountedUntilTheBackoffEnds) {
  ExporterOptions o;
  o.endpoint = "http://127.0.0.1:1/v1/traces";
  auto exporter = std::make_shared<OtlpExporter>(o);
  EXPECT_TRUE(exporter->accepting());
  exporter->Export(SpansOfTurn({"s_1", "care", "openai", ATurn(), false}));
  exporter->Flush();
  EXPECT_FALSE(exporter->accepting()) << "a second passes before the next try";
  TurnTelemetry telemetry({"care", "openai", false}, exporter);
  telemetry.OnTurn("s_2", ATurn());
  exporter->Flush();
  const ExportCounts c = exporter->counts();
  EXPECT_EQ(c.dropped_export_failed, 4);
  EXPECT_EQ(c.dropped_collector_down, 4) << "the turn, its two model calls and its tool: counted, not built";
}

// Turns of sessions on different strands reach the telemetry from several threads at
// once: each remembers its turn's traceparent while others look theirs up for a write
// that ran after its turn (make test-tsan runs this under ThreadSanitizer).
TEST(TurnTelemetryThreads, TurnsAndLaterWritesFromFourThreadsAtOnce) {
  ExporterOptions o;
  o.endpoint = "http://127.0.0.1:1/v1/traces";
  o.max_queue = 1000000;
  o.flush_interval_ms = 60000;  // nothing leaves during the test
  auto exporter = std::make_shared<OtlpExporter>(o);
  TurnTelemetry telemetry({"care", "openai", false}, exporter);
  const std::string traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const TraceEvent ran = Event(EventType::kDeferredExecuted, 2000,
                               {{"name", "note"}, {"idempotency_key", "t_9:1:2"}, {"success", true}, {"mode", "await"}});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const std::string session = "s_" + std::to_string(t) + "_" + std::to_string(i);
        telemetry.OnTurn(session, ATurn(traceparent));
        telemetry.OnEvent(session, ran);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  exporter->Flush();
  // Every span accounted for (the collector is down): 4 a turn, 1 a later write.
  const ExportCounts c = exporter->counts();
  EXPECT_EQ(c.exported + c.dropped_queue_full + c.dropped_export_failed + c.dropped_collector_down, 4 * 300 * 5);
}

}  // namespace
}  // namespace reins::telemetry
