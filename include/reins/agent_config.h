// AgentConfig: one agent's model, tools with their policies, and the governance
// features it turns on, as described by the agent YAML (docs/agent-config.md).
//
// Parsed and validated once (src/config/), then shared read-only by every turn, like an
// Envoy filter factory's config. Fields whose behaviour a later mechanism implements are
// parsed and validated already, so that `reins check` catches mistakes in them today.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "reins/enum_names.h"
#include "reins/json.h"

namespace reins {

// openai or anthropic: a model behind a provider's HTTP API, not the scripted or the
// simulated one.
inline bool IsHttpProvider(std::string_view provider) { return provider == "openai" || provider == "anthropic"; }

// USD per million tokens (model.pricing), for eval's cost reports and --max-cost.
struct ModelPricing {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
  double Cost(int64_t input_tokens, int64_t output_tokens) const {
    return (static_cast<double>(input_tokens) * input_per_mtok + static_cast<double>(output_tokens) * output_per_mtok) / 1e6;
  }
};

struct ModelConfig {
  std::string provider;  // openai | anthropic | scripted | sim
  std::string model;
  std::string base_url;
  std::string api_key;  // never written to logs or traces
  std::optional<double> temperature;
  int timeout_ms = 60000;
  int max_retries = 3;
  std::optional<ModelPricing> pricing;
  Json options = Json::object();  // provider-specific (scripted replies, sim faults...)
};

enum class ToolTiming { kImmediate, kDeferred };

// Whether a tool's results may carry someone else's words (AGENT-CONFIG.md "Untrusted
// data"): mail, files, web pages, other people's messages are outside data, which may
// hold instructions planted for the model. What the person says and the agent file are
// trusted; so is a tool unless the agent says otherwise (an MCP tool: unless its
// annotations.openWorldHint is false).
enum class ToolTrust { kTrusted, kUntrusted };
inline constexpr EnumNames<ToolTrust, 2> kToolTrusts{{{{ToolTrust::kTrusted, "trusted"}, {ToolTrust::kUntrusted, "untrusted"}}}};

// How a condition of an approval rule compares an argument with its operand.
enum class ConditionOp { kGt, kGe, kLt, kLe, kEq, kNe, kIn, kMatches };
inline constexpr EnumNames<ConditionOp, 8> kConditionOps{{{{ConditionOp::kGt, "gt"},
                                                            {ConditionOp::kGe, "ge"},
                                                            {ConditionOp::kLt, "lt"},
                                                            {ConditionOp::kLe, "le"},
                                                            {ConditionOp::kEq, "eq"},
                                                            {ConditionOp::kNe, "ne"},
                                                            {ConditionOp::kIn, "in"},
                                                            {ConditionOp::kMatches, "matches"}}}};

// One condition of `approval.when`: the value at `path` in the proposed arguments (an
// argument's name, or a JSONPath such as "$.payment.amount" for a nested one) against
// `operand`.
struct ApprovalCondition {
  std::string path;
  ConditionOp op = ConditionOp::kEq;
  Json operand;
};

// Whether the person may answer "always" for a tool: never, or for the rest of the session.
enum class RememberScope { kNone, kSession };
inline constexpr EnumNames<RememberScope, 2> kRememberScopes{
    {{{RememberScope::kNone, "none"}, {RememberScope::kSession, "session"}}}};

// A tool's approval rule (`approval:`, docs/human-in-the-loop.md); `approval: required`
// is `{required: true}`. Evaluated by policy/approval (ApprovalRules).
struct ApprovalRule {
  bool required = false;
  std::vector<ApprovalCondition> when;  // all must hold for the call to wait; none: every call waits
  std::string prompt;                   // with {arg} placeholders; "": the tool's title and its arguments in words
  // Who may answer: "requester" (the speaker whose turn proposed the call; the default
  // when empty), "any", a speaker's name, or "role:NAME" (an API key's role).
  std::vector<std::string> approvers;
  int ttl_s = 0;  // a pending approval lapses after it; 0: never
  bool allow_edit = false;
  RememberScope remember = RememberScope::kNone;
};

struct ToolBackendConfig {
  enum class Kind { kNone, kFixture, kHttp, kMcp, kBuiltin };
  Kind kind = Kind::kNone;
  Json spec;  // the backend's own mapping (fixture list, http settings, mcp server/tool)
};

struct ToolDef {
  std::string name;
  std::string title;  // human name; falls back to name with '_' as spaces
  std::string description;
  Json input_schema = Json{{"type", "object"}};
  Json annotations = Json::object();
  ToolTiming timing = ToolTiming::kImmediate;
  std::string deferred_instruction;
  std::string failure_note;
  int timeout_ms = 5000;
  bool may_clarify = false;
  std::optional<std::pair<std::string, int>> lease;  // {domain, ttl_s}
  std::map<std::string, std::string> produces;       // entity type -> JSONPath
  std::map<std::string, std::string> consumes;       // argument name -> entity type
  // Scoped entities: each id of a produced type belongs to the value this call had in an
  // argument (entities.scope: prescription -> patient_id), and a consumed id must belong
  // to the value of another argument of the consuming call (entities.belongs_to:
  // prescription_id -> patient_id).
  std::map<std::string, std::string> scope;       // produced entity type -> argument name
  std::map<std::string, std::string> belongs_to;  // consumed argument -> owner argument
  ApprovalRule approval;
  ToolTrust trust = ToolTrust::kTrusted;
  // RE2 patterns of phrases that claim this tool's action ("(?i)\\bnow playing\\b"):
  // act_not_describe and honest_claims read them besides the tool's own words.
  std::vector<std::string> claims;
  ToolBackendConfig backend;
  // The keys the config gave explicitly; the rest are defaults an MCP server's tool
  // listing may fill in (title, description, input_schema, annotations, and the
  // timing, approval and trust derived from them).
  std::set<std::string> configured;
  // Why this MCP tool is not offered to the model: its server lists it otherwise than
  // the agent's MCP lock pinned ("its description changed since the lock was
  // written"). Empty: offered. A withheld tool keeps only what the config gave it.
  std::string withheld;

  // MCP's reading, which AGENT-CONFIG.md takes: a tool writes unless it is marked
  // read-only (annotations.readOnlyHint: true).
  bool Writes() const;
};

struct FloorConfig {
  bool enabled = false;
  int default_ttl_s = 30;
  std::vector<std::string> cancel_patterns;
  bool owner_note = true;
  int max_queue_age_ms = 15000;
};

// What a turn that matched an intent but skipped one of its tools gets: a forced
// retry, a note for the audit, or nothing.
enum class IntentEnforcement { kForce, kAudit, kOff };
inline constexpr EnumNames<IntentEnforcement, 3> kIntentEnforcements{
    {{{IntentEnforcement::kForce, "force"}, {IntentEnforcement::kAudit, "audit"}, {IntentEnforcement::kOff, "off"}}}};

struct IntentConfig {
  std::string name;
  std::string match;
  std::vector<std::string> required_tools;
  IntentEnforcement enforcement = IntentEnforcement::kForce;
};

// How a plan step's tool calls are checked against what it required (I7).
enum class ValidationMode { kStrict, kLenient, kOff };
inline constexpr EnumNames<ValidationMode, 3> kValidationModes{
    {{{ValidationMode::kStrict, "strict"}, {ValidationMode::kLenient, "lenient"}, {ValidationMode::kOff, "off"}}}};

struct PlanConfig {
  bool enabled = false;
  ValidationMode validation = ValidationMode::kStrict;
  int max_step_retries = 2;
};

// What the audit does when its verdict stays invalid: accept the answer, or replace
// it with the insufficient-evidence answer.
enum class InvalidVerdict { kAccept, kInsufficient };
inline constexpr EnumNames<InvalidVerdict, 2> kInvalidVerdicts{
    {{{InvalidVerdict::kAccept, "accept"}, {InvalidVerdict::kInsufficient, "insufficient"}}}};

struct AuditConfig {
  bool enabled = false;
  InvalidVerdict on_invalid_verdict = InvalidVerdict::kAccept;
  int catalog_max_chars = 4000;
};

struct SafetyOverrideConfig {
  std::string match;
  std::string message;
  std::string flag_tool;
};

struct RailsConfig {
  Json empathy_first;      // null when off
  Json no_internal_names;  // null when off
  Json honest_claims;      // null when off
  Json ui_allowlist;       // null when off
  Json act_not_describe;   // null when off
  Json no_untrusted_links;  // null when off
  std::vector<SafetyOverrideConfig> safety_override;
};

// Whether a turn's reply waits for its deferred calls (up to timeout_ms) or not.
enum class DeferredMode { kAwait, kBackground };
inline constexpr EnumNames<DeferredMode, 2> kDeferredModes{
    {{{DeferredMode::kAwait, "await"}, {DeferredMode::kBackground, "background"}}}};

struct DeferredConfig {
  DeferredMode mode = DeferredMode::kAwait;
  int timeout_ms = 3000;
};

// What a write call that outside data steered gets (untrusted_data, AGENT-CONFIG.md):
// the person's approval, a refusal the model is told about, or (for unrequested
// writes only) nothing.
enum class ViolationOutcome { kApprove, kRefuse, kAllow };
inline constexpr EnumNames<ViolationOutcome, 3> kViolationOutcomes{{{{ViolationOutcome::kApprove, "approve"},
                                                                     {ViolationOutcome::kRefuse, "refuse"},
                                                                     {ViolationOutcome::kAllow, "allow"}}}};

// Prompt-injection defence by data flow (`untrusted_data:`, docs/security.md).
struct UntrustedDataConfig {
  bool enabled = false;
  ViolationOutcome on_violation = ViolationOutcome::kApprove;        // approve | refuse
  ViolationOutcome unrequested_writes = ViolationOutcome::kApprove;  // approve | refuse | allow
  // Outside values kept per session; past it the session fails closed.
  int max_identifiers = 20000;
};

struct McpServerConfig {
  std::string name;
  std::vector<std::string> command;
  std::string url;
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> headers;  // sent with every request to a `url` server
  bool expose_all = false;
  int timeout_ms = 30000;  // the default timeout_ms of this server's tools
};

// OpenTelemetry traces over OTLP/HTTP (telemetry:, docs/telemetry.md). No endpoint
// here or in OTEL_EXPORTER_OTLP_ENDPOINT: nothing is exported.
struct TelemetryConfig {
  std::string otlp_endpoint;  // the collector's base URL: spans go to {it}/v1/traces
  std::string service_name;   // default: the agent's name
  bool capture_content = false;  // message and tool contents on spans
};

struct AgentConfig {
  std::string name;
  std::string system_prompt;
  ModelConfig model;
  std::optional<ModelConfig> audit_model;
  int max_rounds = 6;
  int turn_timeout_ms = 120000;
  // What one model call carries (system prompt and history), in characters; older
  // turns are left out and long results cut beyond it (src/core/context_window.h).
  size_t max_context_chars = 400000;
  std::vector<ToolDef> tools;
  std::vector<McpServerConfig> mcp_servers;
  FloorConfig floor;
  std::vector<IntentConfig> intents;
  PlanConfig plan;
  AuditConfig audit;
  RailsConfig rails;
  std::string greeting;
  DeferredConfig deferred;
  UntrustedDataConfig untrusted_data;
  std::string store = "sqlite::memory:";
  TelemetryConfig telemetry;
  std::string source_file;  // where it was loaded from, for messages

  const ToolDef* FindTool(std::string_view name) const;
};

// The defaults AGENT-CONFIG.md states.
inline constexpr const char* kDefaultDeferredInstruction =
    "TOOL QUEUED (will run after your reply). Do not say it was done. Respond to the person first.";
std::string DefaultFailureNote(const std::string& title);
// The arguments a safety override's flag tool gets: the user's text under the tool's
// first string property named text, message, user_text or content, else its first
// required string property, else "text".
Json FlagToolArgs(const ToolDef& tool, const std::string& user_text);
// Tool names: [a-zA-Z0-9_-]{1,64}. The default title is the name with spaces for '_'.
bool IsValidToolName(std::string_view name);
std::string DefaultToolTitle(const std::string& name);

}  // namespace reins
