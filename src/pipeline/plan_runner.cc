#include "pipeline/plan_runner.h"

#include <algorithm>

#include "domain/json_parse.h"
#include "schema/schema_validator.h"

namespace reins {
namespace {

const SchemaValidator& PlanValidator() {
  static const SchemaValidator validator = SchemaValidator::Compile(PlanSchema()).value();
  return validator;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// A text (or JSON) answer to the plan request as a plan, or why it is not one.
Result<std::vector<PlanStep>> ReadPlan(const ModelResponse& response, const AgentConfig& config) {
  Json plan = response.json ? *response.json : ParseJsonOrDiscarded(response.text);
  if (plan.is_discarded()) return InvalidArgument("the plan is not valid JSON");
  return ParsePlan(plan, config);
}

// What ran inside the step only (I7), from the turn's calls from `first_tool` on after
// what ran before it paused: kept for a resume if the step pauses.
void RecordInside(const TurnContext& ctx, PlanStep& step, size_t first_tool, const std::vector<std::string>& ran_before,
                  const std::vector<PlanStep::Write>& writes_before) {
  step.actual_tool_calls = ran_before;
  step.deferred_writes = writes_before;
  for (size_t i = first_tool; i < ctx.result.tools.size(); ++i) {
    const ToolOutcome& o = ctx.result.tools[i];
    if (o.SucceededOrQueued()) step.actual_tool_calls.push_back(o.name);
    if (o.status == ToolOutcome::Status::kDeferred) step.deferred_writes.push_back({o.idempotency_key, o.name});
  }
}

// A step whose loop replied: its status and validation (I7) when it is over, and none
// returned; else the required tools a strict retry must still call.
std::vector<std::string> Validate(const TurnContext& ctx, PlanStep& step, size_t first_tool, bool validated) {
  std::vector<std::string> missing;
  for (const std::string& tool : step.required_tools) {
    if (std::find(step.actual_tool_calls.begin(), step.actual_tool_calls.end(), tool) == step.actual_tool_calls.end()) {
      missing.push_back(tool);
    }
  }
  auto end = [&](StepStatus status, StepValidation validation) {
    step.status = status;
    step.validation_status = validation;
    return std::vector<std::string>{};
  };
  if (!validated) return end(StepStatus::kCompleted, StepValidation::kSkipped);
  if (missing.empty()) return end(StepStatus::kCompleted, StepValidation::kPassed);
  if (step.validation_mode == ValidationMode::kLenient) return end(StepStatus::kCompletedUnvalidated, StepValidation::kUnvalidated);
  // A person said no to a required call: asking again would only ask them again.
  const bool denied = std::any_of(ctx.result.tools.begin() + static_cast<std::ptrdiff_t>(first_tool), ctx.result.tools.end(),
                                  [&](const ToolOutcome& o) {
                                    return o.reason == "denied" && std::find(missing.begin(), missing.end(), o.name) != missing.end();
                                  });
  if (denied || step.retries >= ctx.config.plan.max_step_retries) return end(StepStatus::kFailed, StepValidation::kFailed);
  return missing;
}

}  // namespace

const Json& PlanSchema() {
  static const Json schema = Json::parse(R"({
    "type": "object",
    "required": ["steps"],
    "properties": {
      "steps": {
        "type": "array", "minItems": 1, "maxItems": 12,
        "items": {
          "type": "object",
          "required": ["id", "description"],
          "properties": {
            "id": {"type": "string", "minLength": 1},
            "description": {"type": "string", "minLength": 1},
            "stepType": {"enum": ["tool", "reasoning"]},
            "requiredTools": {"type": "array", "items": {"type": "string"}},
            "expectedOutcome": {"type": "string"},
            "toolValidationMode": {"enum": ["strict", "lenient", "off"]}
          }
        }
      }
    }
  })");
  return schema;
}

Result<std::vector<PlanStep>> ParsePlan(const Json& plan, const AgentConfig& config) {
  std::vector<std::string> problems = PlanValidator().Validate(plan);
  if (!problems.empty()) return InvalidArgument("the plan does not match its schema: " + Join(problems));
  std::vector<PlanStep> steps;
  for (const Json& item : plan["steps"]) {
    PlanStep step;
    step.id = item["id"].get<std::string>();
    step.description = item["description"].get<std::string>();
    step.step_type = item.value("stepType", "reasoning");  // no stepType: a reasoning step
    step.required_tools = item.value("requiredTools", std::vector<std::string>{});
    step.expected_outcome = item.value("expectedOutcome", "");
    step.validation_mode = kValidationModes.Parse(item.value("toolValidationMode", "")).value_or(config.plan.validation);
    for (const std::string& tool : step.required_tools) {
      if (!config.FindTool(tool)) return InvalidArgument("step " + step.id + " requires unknown tool '" + tool + "'");
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

Task<std::vector<PlanStep>> PlanRunner::MakePlan(TurnContext& ctx) {
  std::vector<Message> extra;
  for (int attempt = 0; attempt < 2; ++attempt) {
    Result<ModelResponse> response = ModelLoop::NoAnswer();
    co_await loop_.CallOnce(ctx, response, Purpose::kPlan, ToolChoice::None(), extra, PlanSchema());
    if (!response.ok()) break;
    Result<std::vector<PlanStep>> plan = ReadPlan(*response, ctx.config);
    if (plan.ok()) co_return std::move(plan).value();
    ctx.Emit("plan.invalid", {{"attempt", attempt + 1}, {"error", plan.status().message()}});
    // One repair: the model sees its own answer and exactly what was wrong with it.
    extra.push_back(Message::Assistant(response->text));
    extra.push_back(Message::User("That plan is not valid: " + plan.status().message() +
                                  ". Answer again with only the JSON plan."));
  }
  // No usable plan: the request becomes a single reasoning step (recorded).
  PlanStep fallback;
  fallback.id = "step_1";
  fallback.description = ctx.user_text();
  fallback.validation_mode = ValidationMode::kOff;
  ctx.Emit("plan.fallback", {{"reason", "no valid plan after one repair"}});
  co_return std::vector<PlanStep>{fallback};
}

Task<std::optional<LoopOutcome>> PlanRunner::RunStep(TurnContext& ctx, TurnPhaseMachine& phase, PlanStep& step,
                                                     bool resuming, std::optional<ChainOutcome> replayed) {
  ctx.step_id = step.id;
  ctx.Emit("plan.step.started", {{"step", step.id}, {"stepType", step.step_type},
                                 {"requiredTools", step.required_tools}, {"resumed", resuming}});
  if (!resuming) {
    std::string brief = "Step " + step.id + ": " + step.description;
    if (!step.expected_outcome.empty()) brief += " Expected outcome: " + step.expected_outcome + ".";
    if (!step.required_tools.empty()) brief += " Use: " + Join(step.required_tools) + ".";
    ctx.Append(Message::User(brief));
  }
  // Resuming, this turn's calls so far (the approved call) ran inside the step, and so
  // did what the step ran before it paused.
  const size_t first_tool = resuming ? 0 : ctx.result.tools.size();
  const std::vector<std::string> ran_before = resuming ? step.actual_tool_calls : std::vector<std::string>{};
  const std::vector<PlanStep::Write> writes_before = resuming ? step.deferred_writes : std::vector<PlanStep::Write>{};
  ToolChoice choice = ToolChoice::Auto();
  const bool validated = step.step_type == "tool" && !step.required_tools.empty() && step.validation_mode != ValidationMode::kOff;
  while (true) {
    // The replayed call stopped the step's chain (a question, another approval, or
    // `complete` with its one tools-off call): that is the loop's outcome. Otherwise
    // the loop goes on from it.
    std::optional<LoopOutcome> concluded;
    if (replayed) {
      concluded = co_await loop_.Conclude(ctx, phase, std::move(*replayed));
      replayed.reset();
    }
    LoopOutcome outcome;
    if (concluded) {
      outcome = std::move(*concluded);
    } else {
      std::unique_ptr<LoopOutcome> ran = co_await loop_.Run(ctx, phase, choice);
      outcome = std::move(*ran);
    }
    RecordInside(ctx, step, first_tool, ran_before, writes_before);
    if (outcome.kind != LoopOutcome::Kind::kReply) {
      const bool waits = outcome.kind == LoopOutcome::Kind::kClarification || outcome.kind == LoopOutcome::Kind::kApproval;
      step.status = waits ? StepStatus::kPaused : StepStatus::kFailed;
      co_return outcome;
    }
    step.outcome = outcome.text;
    const std::vector<std::string> missing = Validate(ctx, step, first_tool, validated);
    if (missing.empty()) break;
    // Strict: name the missing tool and force it.
    ++step.retries;
    ctx.Emit("plan.step.retry", {{"step", step.id}, {"missing", missing}, {"retry", step.retries}});
    ctx.Append(Message::User("Step " + step.id + " is not done: " + missing.front() +
                             " was not called. Call it now."));
    choice = ToolChoice::Named(missing.front());
  }
  ctx.Emit("plan.step.finished", {{"step", step.id}, {"status", kStepStatuses.Name(step.status)},
                                  {"validationStatus", kStepValidations.Name(step.validation_status)},
                                  {"requiredTools", step.required_tools},
                                  {"actualToolCalls", step.actual_tool_calls}});
  co_return std::nullopt;
}

Task<LoopOutcome> PlanRunner::Run(TurnContext& ctx, TurnPhaseMachine& phase, std::optional<ChainOutcome> replayed) {
  std::vector<PlanStep> steps;
  size_t start = 0;
  const bool resuming = !ctx.session.pending_plan.empty();
  if (resuming) {
    steps = std::move(ctx.session.pending_plan);
    start = ctx.session.pending_plan_step;
    ctx.session.pending_plan.clear();
    ctx.Emit("plan.resumed", {{"step", steps[start].id}});
  } else {
    steps = co_await MakePlan(ctx);
    Json summary = Json::array();
    for (const PlanStep& s : steps) {
      summary.push_back({{"id", s.id}, {"stepType", s.step_type}, {"requiredTools", s.required_tools}});
    }
    ctx.Emit("plan", {{"steps", summary}});
  }
  ctx.purpose = Purpose::kStep;
  for (size_t i = start; i < steps.size(); ++i) {
    std::optional<ChainOutcome> replay;
    if (resuming && i == start) replay = std::move(replayed);
    std::optional<LoopOutcome> stopped = co_await RunStep(ctx, phase, steps[i], resuming && i == start, std::move(replay));
    if (stopped) {
      if (stopped->kind == LoopOutcome::Kind::kClarification || stopped->kind == LoopOutcome::Kind::kApproval) {
        // Waiting for the person: the plan goes on from this step once they answer.
        ctx.session.pending_plan = steps;
        ctx.session.pending_plan_step = i;
      }
      ctx.result.plan = steps;
      co_return std::move(*stopped);
    }
  }
  ctx.purpose = Purpose::kChat;
  ctx.step_id.clear();
  ctx.result.plan = steps;
  // The synthesis sees recorded outcomes only; a failed step is named, never quoted.
  std::string results = "Plan results:";
  for (const PlanStep& s : steps) {
    results += "\n- " + s.id + " (" + std::string(kStepStatuses.Name(s.status)) + "): ";
    if (s.status == StepStatus::kFailed) {
      results += "NOT DONE - " + Join(s.required_tools) + " never ran; say so and do not present its text as a finding.";
    } else {
      results += s.outcome;
    }
  }
  results += "\nWrite the reply to the user from these results.";
  ctx.Append(Message::User(results));
  Result<ModelResponse> reply = ModelLoop::NoAnswer();
  co_await loop_.CallOnce(ctx, reply, Purpose::kChat, ToolChoice::None(), {});
  if (!reply.ok()) co_return ModelLoop::Failed(ctx, reply.status());
  co_return loop_.Answer(ctx, *reply);
}

}  // namespace reins
