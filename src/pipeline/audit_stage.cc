#include "pipeline/audit_stage.h"

#include <algorithm>

#include "domain/json_parse.h"
#include "domain/json_text.h"
#include "policy/intents/intent_policy.h"
#include "policy/rails/ui_allowlist.h"
#include "schema/schema_validator.h"

namespace reins {

extern const char kAuditPromptTemplate[];

namespace {

constexpr const char* kRepairs[] = {"accept", "rewrite_once", "gather_missing_evidence_once", "answer_insufficient"};

void Replace(std::string& text, const std::string& key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) {
    text.replace(at, key.size(), value);
  }
}

std::string Compact(const Json& j, size_t max) {
  std::string s = JsonText(j);
  return s.size() > max ? s.substr(0, max) + "..." : s;
}

// The verdict as JSON, or why it cannot be used.
Result<Json> ReadVerdict(const ModelResponse& response, const AgentConfig& config) {
  static const SchemaValidator validator = SchemaValidator::Compile(AuditVerdictSchema()).value();
  Json verdict = response.json ? *response.json : ParseJsonOrDiscarded(response.text);
  if (verdict.is_discarded()) return InvalidArgument("the verdict is not valid JSON");
  std::vector<std::string> problems = validator.Validate(verdict);
  if (!problems.empty()) return InvalidArgument("the verdict does not match its schema: " + problems.front());
  if (verdict["repair_action"] == "gather_missing_evidence_once") {
    for (const Json& tool : verdict["missing_tool_opportunities"]) {
      if (!config.FindTool(tool.get<std::string>())) {
        return InvalidArgument("the verdict asks to gather with unknown tool '" + tool.get<std::string>() + "'");
      }
    }
    if (verdict["missing_tool_opportunities"].empty()) return InvalidArgument("gather names no tool");
  }
  return verdict;
}

// A rewrite the reply can be: a finished text, not a refusal.
bool Usable(const Result<ModelResponse>& r) {
  return r.ok() && !r->text.empty() && r->finish != FinishReason::kRefusal;
}

}  // namespace

const Json& AuditVerdictSchema() {
  static const Json schema = [] {
    Json repairs = Json::array();
    for (const char* r : kRepairs) repairs.push_back(r);
    Json boolean = {{"type", "boolean"}};
    return Json{{"type", "object"},
                {"required", {"answered_question", "grounded_in_evidence", "hallucinated_ui_or_actions", "tool_choice_ok",
                              "missing_tool_opportunities", "contains_extraneous_content", "rewrite_needed",
                              "repair_action", "critique"}},
                {"properties",
                 {{"answered_question", boolean}, {"grounded_in_evidence", boolean},
                  {"hallucinated_ui_or_actions", boolean}, {"tool_choice_ok", boolean},
                  {"missing_tool_opportunities", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                  {"contains_extraneous_content", boolean}, {"rewrite_needed", boolean},
                  {"repair_action", {{"enum", repairs}}}, {"critique", {{"type", "string"}}}}},
                {"additionalProperties", false}};
  }();
  return schema;
}

std::string ToolCatalog(const AgentConfig& config, size_t max_chars) {
  std::string out;
  for (const ToolDef& t : config.tools) {
    if (!t.withheld.empty()) continue;  // the agent has it only by name (a changed MCP tool)
    std::string description = t.description.substr(0, t.description.find('\n'));
    std::string args;
    const Json properties = t.input_schema.value("properties", Json::object());
    for (const auto& [name, schema] : properties.items()) args += (args.empty() ? "" : ", ") + name;
    std::string line = "- " + t.name + ": " + description + " (" + args + ")\n";
    if (out.size() + line.size() > max_chars) {
      out += "- ... (catalog capped)\n";
      break;
    }
    out += line;
  }
  return out;
}

AuditStage::AuditStage(const AgentConfig& config, ModelLoop& loop, ChainExecutor& executor)
    : config_(config), loop_(loop), executor_(executor),
      catalog_(ToolCatalog(config, static_cast<size_t>(config.audit.catalog_max_chars))) {
  for (const IntentConfig& intent : config.intents) {
    if (intent.enforcement != IntentEnforcement::kAudit) continue;
    auto re = std::make_unique<RE2>(intent.match, RE2::Quiet);
    if (re->ok()) bundles_.emplace_back(&intent, std::move(re));
  }
}

std::string AuditStage::RenderPrompt(const TurnContext& ctx, const std::string& candidate) const {
  std::string trace;
  for (const ToolOutcome& o : ctx.result.tools) {
    trace += "- " + o.name + " " + Compact(o.args, 200) + " -> " + std::string(ToolOutcomeStatusName(o.status));
    if (o.result) trace += " " + Compact(EnvelopeToJson(*o.result), 600);
    trace += "\n";
  }
  std::string prompt = kAuditPromptTemplate;
  Replace(prompt, "{{system_prompt}}", config_.system_prompt);
  Replace(prompt, "{{question}}", std::string(ctx.user_text()));
  Replace(prompt, "{{page_context}}", ctx.input.page_context.is_null() ? "(none)" : JsonText(ctx.input.page_context));
  Replace(prompt, "{{catalog}}", catalog_);
  Replace(prompt, "{{trace}}", trace.empty() ? "(no tools ran)" : trace);
  Replace(prompt, "{{candidate}}", candidate);
  return prompt;
}

namespace {

LoopOutcome Reply(std::string text) { return LoopOutcome{LoopOutcome::Kind::kReply, std::move(text), {}, {}}; }

}  // namespace

Task<LoopOutcome> AuditStage::Gather(TurnContext& ctx, TurnPhaseMachine& phase, const std::vector<std::string>& tools,
                                     std::string why, std::string candidate) {
  ctx.purpose = Purpose::kGather;
  ctx.extend().allowed_tools = std::set<std::string>(tools.begin(), tools.end());
  ctx.Append(Message::User("Gather the missing evidence with " + tools.front() +
                           (tools.size() > 1 ? " and the other listed tools" : "") + ": " + why));
  ToolChoice choice = tools.size() == 1 ? ToolChoice::Named(tools.front()) : ToolChoice::Required();
  Result<ModelResponse> round = ModelLoop::NoAnswer();
  co_await loop_.CallOnce(ctx, round, Purpose::kGather, choice, {});
  if (!round.ok() && ModelLoop::OutOfTurnTime(ctx, round.status())) co_return ModelLoop::Failed(ctx, round.status());
  // A refusal's calls are not run, in the gather round as in the loop.
  if (round.ok() && round->finish == FinishReason::kRefusal) co_return Reply(std::move(candidate));
  ChainOutcome chain;
  if (round.ok() && !round->tool_calls.empty()) {
    ctx.Append(Message::Assistant(std::move(round->text), std::move(round->tool_calls)));
    phase.Enter(TurnPhase::kExecutingTools);
    chain = co_await executor_.Run(ctx, ctx.history().back().tool_calls);
  }
  ctx.extend().allowed_tools.clear();
  ctx.purpose = Purpose::kChat;
  // The gathered results stop the chain like any other (I1): the person is asked, the
  // call waits for approval, or `complete` has the one tools-off call answer.
  if (std::optional<LoopOutcome> stopped = co_await loop_.Conclude(ctx, phase, std::move(chain))) {
    if (stopped->kind == LoopOutcome::Kind::kFailed && !stopped->out_of_time) co_return Reply(std::move(candidate));
    co_return std::move(*stopped);
  }
  ctx.Append(Message::User("Answer the question again from all the evidence gathered."));
  Result<ModelResponse> answer = ModelLoop::NoAnswer();
  co_await loop_.CallOnce(ctx, answer, Purpose::kChat, ToolChoice::None(), {});
  if (!answer.ok() && ModelLoop::OutOfTurnTime(ctx, answer.status())) co_return ModelLoop::Failed(ctx, answer.status());
  if (!answer.ok() || answer->text.empty()) co_return Reply(std::move(candidate));
  if (answer->finish == FinishReason::kRefusal) co_return Reply(std::move(candidate));
  co_return Reply(answer->text);
}

Task<void> AuditStage::AskVerdict(TurnContext& ctx, const std::string& candidate, Verdict& out) {
  std::vector<Message> prompt = {Message::System(RenderPrompt(ctx, candidate)),
                                 Message::User("Give your verdict as JSON.")};
  for (int attempt = 0; attempt < 2 && out.verdict.is_null(); ++attempt) {
    Result<ModelResponse> response = ModelLoop::NoAnswer();
    co_await loop_.CallWith(ctx, response, Purpose::kAudit, ToolChoice::None(), prompt, AuditVerdictSchema(), nullptr);
    if (!response.ok()) {
      // Fail open: a broken audit never withholds the answer. Out of time, the turn fails.
      if (ModelLoop::OutOfTurnTime(ctx, response.status())) {
        out.out_of_time = response.status();
        co_return;
      }
      out.error = "audit model failed: " + response.status().message();
      out.model_failed = true;
      co_return;
    }
    Result<Json> read = ReadVerdict(*response, config_);
    if (read.ok()) {
      out.verdict = *read;
    } else {
      out.error = read.status().message();
      ctx.Emit("audit_error", {{"attempt", attempt + 1}, {"error", out.error}});
      prompt.push_back(Message::Assistant(response->text));
      prompt.push_back(Message::User("That verdict is not valid: " + out.error + ". Answer with the JSON verdict only."));
    }
  }
}

Task<LoopOutcome> AuditStage::Rewrite(TurnContext& ctx, std::string instruction, std::string candidate) {
  ctx.Append(Message::User(std::move(instruction)));
  Result<ModelResponse> rewrite = ModelLoop::NoAnswer();
  co_await loop_.CallOnce(ctx, rewrite, Purpose::kRewrite, ToolChoice::None(), {});
  if (!rewrite.ok() && ModelLoop::OutOfTurnTime(ctx, rewrite.status())) co_return ModelLoop::Failed(ctx, rewrite.status());
  co_return Reply(Usable(rewrite) ? rewrite->text : std::move(candidate));
}

Task<LoopOutcome> AuditStage::Run(TurnContext& ctx, TurnPhaseMachine& phase, std::string candidate) {
  Json record = {{"repair", "accept"}};
  // Deterministic evidence first: an unsatisfied evidence bundle needs no model to see.
  for (const auto& [intent, match] : bundles_) {
    if (!RE2::PartialMatch(ctx.user_text(), *match)) continue;
    std::vector<std::string> missing = MissingTools(ctx.RequestTools(), intent->required_tools);
    if (missing.empty()) continue;
    record = {{"repair", "gather_missing_evidence_once"}, {"reason", "evidence bundle '" + intent->name + "'"},
              {"missing", missing}};
    ctx.Emit("audit", record);
    ctx.result.audit = record;
    std::string why = "the " + intent->name + " question needs it";  // a local: GCC 12 and temporaries across co_await
    co_return co_await Gather(ctx, phase, missing, std::move(why), std::move(candidate));
  }
  // UI the reply names that is not on the user's screen: rewrite, no verdict needed.
  if (!config_.rails.ui_allowlist.is_null()) {
    std::vector<std::string> unknown = UnknownUiElements(config_.rails.ui_allowlist, candidate, ctx.input.page_context);
    if (!unknown.empty()) {
      std::string list;
      for (const std::string& u : unknown) list += (list.empty() ? "" : ", ") + u;
      record = {{"repair", "rewrite_once"}, {"reason", "ui_allowlist"}, {"unknown_ui", unknown}};
      ctx.Emit("audit", record);
      ctx.result.audit = record;
      ctx.result.rails.push_back("ui_allowlist");
      std::string instruction = "Rewrite your answer without tools. These are not on the user's screen: " + list +
                                ". Point only to what is there.";
      co_return co_await Rewrite(ctx, std::move(instruction), std::move(candidate));
    }
  }
  Verdict asked;
  co_await AskVerdict(ctx, candidate, asked);
  if (asked.out_of_time) co_return ModelLoop::Failed(ctx, *asked.out_of_time);
  Json& verdict = asked.verdict;
  std::string& error = asked.error;
  std::string repair = "accept";
  if (!verdict.is_null()) {
    repair = verdict["repair_action"].get<std::string>();
    error.clear();
  } else if (!asked.model_failed && config_.audit.on_invalid_verdict == InvalidVerdict::kInsufficient) {
    repair = "answer_insufficient";
  }
  record = {{"repair", repair}, {"verdict", verdict}};
  if (!error.empty()) record["error"] = error;
  ctx.Emit("audit", record);
  ctx.result.audit = record;
  std::string critique = verdict.is_null() ? "" : verdict.value("critique", "");
  if (repair == "rewrite_once") {
    std::string instruction = "Rewrite your answer, without calling tools, fixing this: " + critique;
    co_return co_await Rewrite(ctx, std::move(instruction), std::move(candidate));
  }
  if (repair == "gather_missing_evidence_once") {
    std::vector<std::string> tools = verdict["missing_tool_opportunities"].get<std::vector<std::string>>();
    co_return co_await Gather(ctx, phase, tools, critique, std::move(candidate));
  }
  if (repair == "answer_insufficient") {
    co_return Reply("I can't answer that reliably from the data I have." +
                    (critique.empty() ? std::string() : " What I could not establish: " + critique));
  }
  co_return Reply(std::move(candidate));
}

}  // namespace reins
