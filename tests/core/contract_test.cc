// The paths where a guarantee used to lapse (docs/invariants.md): the audit's gather
// round, replayed calls, the safety override under a lease or a pending approval,
// deferred writes of plan steps, the turn's own deadline and each tool's, the audit
// model, the UI allow-list without the audit, responses that are not finished answers,
// withdrawn writes, intents across a clarification, and catalogs that are replaced.
#include <gtest/gtest.h>

#include "config/agent_config_loader.h"
#include "eval/invariants.h"
#include "support/runtime_harness.h"

namespace reins {
namespace {

using testing::RecordingModel;

// The purposes and tool choices of the model calls a turn made, in order.
std::vector<std::string> ModelCalls(const TurnResult& r) {
  std::vector<std::string> out;
  for (const TraceEvent& e : r.events) {
    if (e.type != "model.call") continue;
    out.push_back(e.data.value("purpose", "") + ":" + e.data.value("tool_choice", "") +
                  (e.data.contains("repeat") ? ":repeat" : ""));
  }
  return out;
}

bool HasEvent(const TurnResult& r, const std::string& type) {
  return std::any_of(r.events.begin(), r.events.end(), [&](const TraceEvent& e) { return e.name() == type; });
}

class ContractTest : public testing::RuntimeHarness {
 protected:
  AgentConfig Config(const std::string& yaml) {
    Diagnostics diag;
    LocatedDoc doc = ParseYaml(yaml, "agent.yaml", diag);
    AgentConfig config;
    EXPECT_TRUE(ParseAgentConfig(doc, "", ".", diag, &config)) << diag.Format();
    return config;
  }
  // Runs a turn and keeps it for ExpectNoViolations.
  Result<TurnResult> Record(TurnInput in) {
    Result<TurnResult> r = Run(in);
    if (r.ok()) runs_.push_back({r->turn_number, std::move(in), false, "", *r, {}});
    return r;
  }
  // The invariant checker judges the recorded turns as the scenario runner would: their
  // events as stored (deferred outcomes included), the history and the outbox.
  void ExpectNoViolations(const std::string& agent_yaml) {
    auto stored = runtime_->store().LoadTurns(session_);
    ASSERT_TRUE(stored.ok());
    for (TurnRun& run : runs_) {
      for (const StoredTurn& st : *stored) {
        if (st.turn_id == run.result.turn_id) run.result.events = st.events;
      }
    }
    auto history = runtime_->store().LoadMessages(session_);
    auto outbox = runtime_->store().LoadOutbox(session_);
    for (const InvariantViolation& v : CheckInvariants(Config(agent_yaml), runs_, *history, *outbox)) {
      ADD_FAILURE() << v.id << " turn " << v.turn << ": " << v.message;
    }
  }
  std::vector<TurnRun> runs_;
};

// ---- 1. The audit's gather round obeys next_action ----------------------------------

constexpr const char* kGatherAgent = R"(name: ops
model: { provider: scripted }
audit: { enabled: true }
intents: [ { name: mesh, match: '(?i)mesh', required_tools: [state], enforcement: audit } ]
tools:
  - name: state
    may_clarify: true
    input_schema: { type: object, properties: { site: { type: string } } }
  - name: restart
    approval: required
    input_schema: { type: object }
)";

TEST_F(ContractTest, AClarificationInTheGatherRoundEndsTheTurnThere) {
  Build(kGatherAgent, R"([{"when": {"purpose": "chat", "turn": 1, "last": "user"}, "text": "All up."},
                          {"when": {"purpose": "gather"}, "tool_calls": [{"name": "state", "args": {}}]},
                          {"repeat": true, "text": "should not be asked"}])",
        {{"state", R"([{"result": {"next_action": "clarification_needed", "data": {},
            "clarification": {"question": "Which site?", "options": [{"id": "north"}, {"id": "south"}]}}}])"}});
  TurnInput in;
  in.say = "how is the mesh?";
  auto r = Record(in);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kAwaitingClarification);
  EXPECT_EQ(r->reply, "Which site?");
  EXPECT_EQ(ModelCalls(*r), (std::vector<std::string>{"chat:auto", "gather:tool:state"}))
      << "no call after the question";
  ASSERT_TRUE(r->clarification);
  EXPECT_EQ(r->events.back().data.value("phase", ""), "awaiting_clarification");
  ExpectNoViolations(kGatherAgent);
}

TEST_F(ContractTest, CompleteInTheGatherRoundGetsOneToolsOffCall) {
  Build(kGatherAgent, R"([{"when": {"purpose": "chat", "last": "user"}, "text": "All up."},
                          {"when": {"purpose": "gather"}, "tool_calls": [{"name": "state", "args": {}}]},
                          {"when": {"purpose": "chat", "last": "tool"}, "text": "North is down."}])",
        {{"state", R"([{"result": {"success": true, "next_action": "complete", "data": {"north": "down"}}}])"}});
  TurnInput in;
  in.say = "how is the mesh?";
  auto r = Record(in);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  EXPECT_EQ(r->reply, "North is down.");
  EXPECT_EQ(ModelCalls(*r), (std::vector<std::string>{"chat:auto", "gather:tool:state", "chat:none"}));
  ExpectNoViolations(kGatherAgent);
}

constexpr const char* kGatherApprovalAgent = R"(name: ops
model: { provider: scripted }
audit: { enabled: true }
intents: [ { name: fix, match: '(?i)fix', required_tools: [restart], enforcement: audit } ]
tools:
  - name: restart
    approval: required
    input_schema: { type: object }
)";

TEST_F(ContractTest, AnApprovalInTheGatherRoundPausesTheTurn) {
  Build(kGatherApprovalAgent,
        R"([{"when": {"purpose": "chat", "last": "user"}, "text": "Done."},
            {"when": {"purpose": "gather"}, "tool_calls": [{"name": "restart", "args": {}}]},
            {"repeat": true, "text": "should not be asked"}])",
        {{"restart", R"([{"result": {"success": true}}])"}});
  TurnInput in;
  in.say = "please fix it";
  auto r = Record(in);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, TurnStatus::kAwaitingApproval);
  ASSERT_TRUE(r->approval);
  EXPECT_EQ(r->approval->tool, "restart");
  EXPECT_EQ(ModelCalls(*r).size(), 2u);
  EXPECT_TRUE(HasEvent(*r, "approval"));
  ExpectNoViolations(kGatherApprovalAgent);
}

// ---- 2. A replayed call that completes ----------------------------------------------

constexpr const char* kBookingAgent = R"(name: a
model: { provider: scripted }
tools:
  - name: book
    approval: required
    input_schema: { type: object }
)";

TEST_F(ContractTest, AnApprovedCallThatCompletesGetsExactlyOneToolsOffCall) {
  Build(kBookingAgent,
        R"([{"when": {"turn": 1}, "tool_calls": [{"name": "book", "args": {"day": "mon"}}]},
            {"when": {"turn": 2}, "text": "Booked for Monday."},
            {"repeat": true, "tool_calls": [{"name": "book", "args": {}}]}])",
        {{"book", R"([{"result": {"success": true, "next_action": "complete"}}])"}});
  TurnInput book;
  book.say = "book monday";
  ASSERT_EQ(Record(book)->status, TurnStatus::kAwaitingApproval);
  TurnInput approve;
  approve.approve = true;
  auto r = Record(approve);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->reply, "Booked for Monday.");
  EXPECT_EQ(ModelCalls(*r), (std::vector<std::string>{"chat:none"}));
  ExpectNoViolations(kBookingAgent);
}

constexpr const char* kPlanBookingAgent = R"(name: trips
model: { provider: scripted }
plan: { enabled: true }
tools:
  - name: book
    approval: required
    input_schema: { type: object }
  - name: note
    input_schema: { type: object }
)";

TEST_F(ContractTest, AnApprovedCallThatCompletesEndsItsPlanStepAndThePlanGoesOn) {
  Build(kPlanBookingAgent,
        R"([{"when": {"purpose": "plan"}, "json": {"steps": [
              {"id": "step_1", "description": "Book it", "stepType": "tool", "requiredTools": ["book"]},
              {"id": "step_2", "description": "Note it", "stepType": "tool", "requiredTools": ["note"]}]}},
            {"when": {"purpose": "step", "step": "step_1", "turn": 1}, "tool_calls": [{"name": "book", "args": {"day": "mon"}}]},
            {"when": {"purpose": "step", "step": "step_1", "turn": 2}, "text": "Booked."},
            {"when": {"purpose": "step", "step": "step_2", "last": "user"}, "tool_calls": [{"name": "note", "args": {}}]},
            {"when": {"purpose": "step", "step": "step_2", "last": "tool"}, "text": "Noted."},
            {"when": {"purpose": "chat"}, "text": "Booked for Monday and noted."}])",
        {{"book", R"([{"result": {"success": true, "next_action": "complete"}}])"},
         {"note", R"([{"result": {"success": true}}])"}});
  TurnInput ask;
  ask.say = "book monday and note it";
  ASSERT_EQ(Record(ask)->status, TurnStatus::kAwaitingApproval);
  TurnInput approve;
  approve.approve = true;
  auto r = Record(approve);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  EXPECT_EQ(r->reply, "Booked for Monday and noted.");
  // step_1's loop concludes the approved call's `complete` with one tools-off step call;
  // step_2 then runs, and the synthesis answers.
  EXPECT_EQ(ModelCalls(*r), (std::vector<std::string>{"step:none", "step:auto", "step:auto", "chat:none"}));
  ASSERT_EQ(r->plan.size(), 2u);
  EXPECT_EQ(r->plan[0].status, StepStatus::kCompleted);
  EXPECT_EQ(r->plan[1].status, StepStatus::kCompleted);
  ExpectNoViolations(kPlanBookingAgent);
}

// ---- 3. The safety override, whoever speaks and whatever is pending ------------------

constexpr const char* kCrisisAgent = R"(name: care
model: { provider: scripted }
floor: { enabled: true }
rails:
  safety_override:
    - { match: '(?i)end my life', message: "Please call 988 now.", flag_tool: flag }
tools:
  - name: lookup
    may_clarify: true
    lease: { domain: contacts, ttl_s: 60 }
    input_schema: { type: object }
  - name: send
    approval: required
    input_schema: { type: object }
  - name: flag
    timing: deferred
    input_schema: { type: object, properties: { text: { type: string, minLength: 1 } }, required: [text] }
)";

TEST_F(ContractTest, ACrisisFromAnotherSpeakerDuringALeaseIsAnsweredAndChangesNothing) {
  Build(kCrisisAgent, R"([{"when": {"turn": 1}, "tool_calls": [{"name": "lookup", "args": {}}]},
                          {"when": {"turn": 3}, "text": "Sent."}])",
        {{"lookup", R"([{"result": {"next_action": "clarification_needed", "data": {},
            "clarification": {"question": "Which one?", "options": [{"id": "a"}, {"id": "b"}]}}}])"},
         {"flag", R"([{"result": {"success": true}}])"}});
  TurnInput ana;
  ana.speaker = "ana";
  ana.say = "look it up";
  auto asked = Record(ana);
  ASSERT_EQ(asked->status, TurnStatus::kAwaitingClarification);
  ASSERT_TRUE(asked->lease);
  TurnInput ben;
  ben.speaker = "ben";
  ben.say = "I want to end my life";
  auto crisis = Record(ben);
  ASSERT_TRUE(crisis.ok()) << crisis.status().message();
  EXPECT_EQ(crisis->status, TurnStatus::kCompleted);
  EXPECT_EQ(crisis->reply, "Please call 988 now.");
  EXPECT_EQ(crisis->model_calls, 0);
  ASSERT_TRUE(crisis->lease) << "the lease stays";
  EXPECT_EQ(crisis->lease->owner, "ana");
  EXPECT_EQ(Calls("flag"), 1) << "the flag went through the outbox";
  auto history = runtime_->store().LoadMessages(session_);
  for (const Message& m : *history) EXPECT_NE(m.text, "I want to end my life") << "ben's words reach no model";
  TurnInput select;
  select.speaker = "ana";
  select.select = "a";
  auto answered = Record(select);
  ASSERT_TRUE(answered.ok()) << "the clarification is still pending: " << answered.status().message();
  EXPECT_EQ(answered->status, TurnStatus::kCompleted);
  ExpectNoViolations(kCrisisAgent);
}

TEST_F(ContractTest, ACrisisWhileAnApprovalIsPendingIsAnsweredAndTheApprovalWaits) {
  Build(kCrisisAgent, R"([{"when": {"turn": 1}, "tool_calls": [{"name": "send", "args": {}}]},
                          {"when": {"turn": 3}, "text": "Sent."}])",
        {{"send", R"([{"result": {"success": true}}])"}, {"flag", R"([{"result": {"success": true}}])"}});
  ASSERT_EQ(Say("send it")->status, TurnStatus::kAwaitingApproval);
  auto crisis = Say("I want to end my life");
  ASSERT_TRUE(crisis.ok()) << "not a 409: " << crisis.status().message();
  EXPECT_EQ(crisis->reply, "Please call 988 now.");
  TurnInput approve;
  approve.approve = true;
  auto approved = Run(approve);
  ASSERT_TRUE(approved.ok()) << approved.status().message();
  EXPECT_EQ(Calls("send"), 1);
}

TEST_F(ContractTest, CheckRefusesAFlagToolThatIsNotDeferredOrNeedsApproval) {
  for (const char* flag : {"    timing: immediate\n", "    timing: deferred\n    approval: required\n",
                           "    timing: deferred\n    input_schema: { type: object, required: [reason] }\n"}) {
    std::string yaml = std::string(R"(name: c
model: { provider: scripted }
rails: { safety_override: [ { match: x, message: m, flag_tool: flag } ] }
tools:
  - name: flag
)") + flag;
    Diagnostics diag;
    LocatedDoc doc = ParseYaml(yaml, "agent.yaml", diag);
    AgentConfig config;
    EXPECT_FALSE(ParseAgentConfig(doc, "", ".", diag, &config)) << flag;
    EXPECT_NE(diag.Format().find("flag_tool 'flag'"), std::string::npos) << diag.Format();
  }
}

// ---- 4. A plan step's deferred write ------------------------------------------------

TEST_F(ContractTest, AFailedDeferredWriteOfAPlanStepNamesTheStepAndIsOnItsRecord) {
  Build(R"yaml(name: plans
model: { provider: scripted }
plan: { enabled: true }
tools:
  - name: submit
    timing: deferred
    failure_note: "(Note: the submission failed.)"
    input_schema: { type: object }
)yaml",
        R"([{"when": {"purpose": "plan"}, "json": {"steps": [{"id": "step_1", "description": "Submit it",
              "stepType": "tool", "requiredTools": ["submit"]}]}},
            {"when": {"purpose": "step", "last": "user"}, "tool_calls": [{"name": "submit", "args": {}}]},
            {"when": {"purpose": "step", "last": "tool"}, "text": "Queued."},
            {"when": {"purpose": "chat"}, "text": "I have sent your submission."}])",
        {{"submit", R"([{"error": "database down"}])"}});
  auto r = Say("please submit");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->plan.size(), 1u);
  EXPECT_EQ(r->plan[0].status, StepStatus::kCompleted) << "a queued write counts when accepted (I7)";
  EXPECT_NE(r->reply.find("(Note: the submission failed.) (This was for step step_1 of the plan.)"), std::string::npos)
      << r->reply;
  ASSERT_EQ(r->plan[0].deferred_writes.size(), 1u);
  EXPECT_EQ(r->plan[0].deferred_writes[0].outcome, "failed");
  auto stored = runtime_->store().LoadTurns(session_);
  const Json& step = (*stored)[0].result["plan"]["steps"][0];
  ASSERT_TRUE(step.contains("deferredWrites")) << step.dump();
  EXPECT_EQ(step["deferredWrites"].begin()->at("outcome"), "failed") << step.dump();
}

// ---- 5 and 6. The turn's deadline and each tool's timeout -----------------------------

constexpr const char* kSlowAgent = R"(name: slow
model: { provider: scripted }
limits: { turn_timeout_ms: 1000 }
tools:
  - name: save
    timing: deferred
    input_schema: { type: object }
  - name: search
    timeout_ms: 5000
    annotations: { readOnlyHint: true }   # a read: a write that times out is uncertain (write_ledger_test)
    input_schema: { type: object }
  - name: quick
    timeout_ms: 300
    annotations: { readOnlyHint: true }
    input_schema: { type: object }
)";

TEST_F(ContractTest, ATurnPastItsDeadlineFailsHonestlyAndWithdrawsItsWrites) {
  Build(kSlowAgent, R"([{"when": {"turn": 1, "last": "user"}, "tool_calls": [{"name": "save", "args": {}},
                                                                               {"name": "search", "args": {}}]},
                        {"when": {"turn": 1, "last": "tool"}, "text": "late"},
                        {"when": {"turn": 2}, "text": "Hello again."}])",
        {{"save", R"([{"result": {"success": true}}])"},
         {"search", R"([{"result": {"success": true}, "latency_ms": 3000}])"}});
  TurnInput both;
  both.say = "save and search";
  auto r = Record(both);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, TurnStatus::kFailed);
  EXPECT_NE(r->error.find("limits.turn_timeout_ms = 1000 ms"), std::string::npos) << r->error;
  EXPECT_EQ(r->reply, "Sorry, I could not complete that request just now.");
  ASSERT_EQ(r->tools.size(), 2u);
  EXPECT_EQ(r->tools[0].reason, "turn_failed") << "the queued write is withdrawn";
  EXPECT_NE(r->tools[1].result->error.find("timed out after 1000 ms"), std::string::npos) << r->tools[1].result->error;
  EXPECT_EQ(Calls("save"), 0);
  // The model call after the tool had no time left: failed before it was sent, once.
  std::vector<std::string> errors;
  for (const TraceEvent& e : r->events) {
    if (e.type == EventType::kModelError) errors.push_back(e.data.value("message", ""));
  }
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("limits.turn_timeout_ms = 1000 ms"), std::string::npos) << errors[0];
  TurnInput hi;
  hi.say = "hi";
  auto next = Record(hi);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->reply, "Hello again.");
  ExpectNoViolations(kSlowAgent);  // a withdrawn write is neither lost (I12) nor leaked (I4)
}

TEST_F(ContractTest, AnImmediateCallStopsAtItsToolsTimeout) {
  Build(kSlowAgent, R"([{"when": {"last": "user"}, "tool_calls": [{"name": "quick", "args": {}}]},
                        {"when": {"last": "tool"}, "text": "It took too long."}])",
        {{"quick", R"([{"result": {"success": true}, "latency_ms": 800}])"}});
  auto r = Say("quick one");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  ASSERT_TRUE(r->tools[0].result);
  EXPECT_EQ(r->tools[0].result->error, "timed out after 300 ms");
}

TEST_F(ContractTest, AnMcpServersTimeoutIsItsToolsDefault) {
  AgentConfig config = Config(R"(name: m
model: { provider: scripted }
mcp_servers: { files: { command: [cat], timeout_ms: 7000 } }
tools:
  - { name: read, backend: { mcp: { server: files } } }
  - { name: write, timeout_ms: 100, backend: { mcp: { server: files } } }
)");
  EXPECT_EQ(config.FindTool("read")->timeout_ms, 7000);
  EXPECT_EQ(config.FindTool("write")->timeout_ms, 100);
}

// ---- 7. The audit model -------------------------------------------------------------

TEST_F(ContractTest, AuditCallsGoToTheAuditModel) {
  auto auditor = std::make_shared<RecordingModel>(std::make_shared<ScriptedModel>(Json::parse(R"([{"json":
      {"answered_question": true, "grounded_in_evidence": true, "hallucinated_ui_or_actions": false,
       "tool_choice_ok": true, "missing_tool_opportunities": [], "contains_extraneous_content": false,
       "rewrite_needed": false, "repair_action": "accept", "critique": ""}}])")));
  Build("name: a\nmodel: { provider: scripted }\naudit: { enabled: true }\n", R"([{"text": "Fine."}])", {},
        "sqlite::memory:", [&](RuntimeParts& parts) { parts.audit_model = auditor; });
  auto r = Say("how are things?");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->audit.value("repair", ""), "accept") << r->audit.dump();
  ASSERT_EQ(auditor->requests.size(), 1u);
  EXPECT_EQ(auditor->requests[0].purpose, Purpose::kAudit);
  ASSERT_EQ(recorder_->requests.size(), 1u);
  EXPECT_EQ(recorder_->requests[0].purpose, Purpose::kChat);
}

// A model that answers only when the turn's deadline has long passed (one that ignores
// the budget it is given): the turn stops waiting at the deadline all the same.
class HangingModel final : public ModelProvider {
 public:
  explicit HangingModel(Clock& clock) : clock_(clock) {}
  std::string_view Name() const override { return "hanging"; }
  Task<Result<ModelResponse>> Complete(const ModelRequest&) override {
    co_await clock_.Sleep(600000);
    co_return Result<ModelResponse>(ModelResponse{});
  }

 private:
  Clock& clock_;
};

constexpr const char* kTimedAuditAgent = R"(name: a
model: { provider: scripted }
audit: { enabled: true }
limits: { turn_timeout_ms: 1000 }
tools: [ { name: save, timing: deferred, input_schema: { type: object } } ]
)";

TEST_F(ContractTest, ATurnThatRunsOutOfTimeInTheAuditFails) {
  Build(kTimedAuditAgent, R"([{"when": {"last": "user"}, "tool_calls": [{"name": "save", "args": {}}]},
                              {"when": {"last": "tool"}, "text": "Saved, I think."}])",
        {{"save", R"([{"result": {"success": true}}])"}}, "sqlite::memory:",
        [this](RuntimeParts& parts) { parts.audit_model = std::make_shared<HangingModel>(*clock_); });
  TurnInput in;
  in.say = "save it";
  auto r = Record(in);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, TurnStatus::kFailed) << "the audit fails open, but not past the turn's deadline";
  EXPECT_NE(r->error.find("limits.turn_timeout_ms = 1000 ms"), std::string::npos) << r->error;
  EXPECT_EQ(Calls("save"), 0) << "the write is withdrawn";
  ExpectNoViolations(kTimedAuditAgent);
}

// ---- 8. The UI allow-list without the audit; warnings ---------------------------------

TEST_F(ContractTest, TheUiAllowlistRailWorksWithoutTheAudit) {
  Build("name: ui\nmodel: { provider: scripted }\nrails: { ui_allowlist: {} }\n",
        R"([{"text": "Your mesh is fine. Open the Latency Heatmap panel for more."}])", {});
  TurnInput in;
  in.say = "is the mesh ok?";
  in.page_context = {{"ui_elements", {"Nodes tab"}}};
  auto r = Run(in);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rails, std::vector<std::string>{"ui_allowlist"});
  EXPECT_EQ(r->reply, "Your mesh is fine. I can't point you to the Latency Heatmap panel: it is not on your screen.");
}

TEST_F(ContractTest, IntentsEnforcedByAnAuditThatIsOffOnlyRecordAndCheckWarns) {
  AgentConfig config = Config(R"(name: w
model: { provider: scripted }
intents: [ { name: mesh, match: mesh, required_tools: [state], enforcement: audit } ]
tools: [ { name: state, input_schema: { type: object }, annotations: { readOnlyHint: true } } ]
)");
  std::vector<std::string> warnings = AgentConfigWarnings(config);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("only recorded"), std::string::npos);
}

TEST_F(ContractTest, CheckWarnsWhenAnAgentThatWritesHasNoHonestClaimsOrNoInternalNames) {
  AgentConfig writes = Config(R"(name: w
model: { provider: scripted }
tools: [ { name: send_message, timing: immediate, input_schema: { type: object } }, { name: find, annotations: { readOnlyHint: true } } ]
)");
  std::vector<std::string> warnings = AgentConfigWarnings(writes);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("no rails.honest_claims"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("send_message"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("no rails.no_internal_names"), std::string::npos) << warnings[1];
  AgentConfig railed = Config(R"(name: w
model: { provider: scripted }
rails: { honest_claims: {}, no_internal_names: {} }
tools: [ { name: send_message, timing: immediate, input_schema: { type: object } } ]
)");
  EXPECT_TRUE(AgentConfigWarnings(railed).empty());
  AgentConfig reads = Config(R"(name: r
model: { provider: scripted }
tools: [ { name: find, annotations: { readOnlyHint: true } } ]
)");
  EXPECT_TRUE(AgentConfigWarnings(reads).empty());
}

// Second probe, finding 10: a tool with neither annotations nor timing may write, yet
// runs at once inside the loop; check said nothing.
TEST_F(ContractTest, CheckWarnsWhenAToolThatMayWriteRunsAtOnceBecauseNobodyDescribedIt) {
  const std::string rails = "rails: { honest_claims: {}, no_internal_names: {} }\n";
  AgentConfig bare = Config("name: w\nmodel: { provider: scripted }\n" + rails +
                            "tools: [ { name: add_note, input_schema: { type: object } } ]\n");
  std::vector<std::string> warnings = AgentConfigWarnings(bare);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("tool 'add_note' has no annotations and no timing"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("timing: deferred"), std::string::npos) << "names the fix: " << warnings[0];
  for (const char* said : {"timing: deferred", "timing: immediate", "annotations: { readOnlyHint: true }",
                           "annotations: { destructiveHint: false }"}) {
    AgentConfig described = Config("name: w\nmodel: { provider: scripted }\n" + rails + "tools: [ { name: add_note, " +
                                   said + ", input_schema: { type: object } } ]\n");
    EXPECT_TRUE(AgentConfigWarnings(described).empty()) << said;
  }
}

// ---- 9. Responses that are not finished answers --------------------------------------

constexpr const char* kPlainAgent = R"(name: p
model: { provider: scripted }
tools: [ { name: note, input_schema: { type: object, properties: { text: { type: string } } } } ]
)";

TEST_F(ContractTest, ACutOffAnswerIsAskedForOnceMoreThenFailsHonestly) {
  Build(kPlainAgent, R"([{"when": {"turn": 1}, "text": "The answer is", "finish": "length"},
                         {"when": {"turn": 1}, "text": "The answer is 42.", "finish": "stop"},
                         {"when": {"turn": 2}, "repeat": true, "text": "Part", "finish": "length"}])", {});
  auto once = Say("what is it?");
  ASSERT_TRUE(once.ok());
  EXPECT_EQ(once->reply, "The answer is 42.");
  EXPECT_EQ(ModelCalls(*once), (std::vector<std::string>{"chat:auto", "chat:auto:repeat"}));
  auto twice = Say("and now?");
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->status, TurnStatus::kFailed);
  EXPECT_NE(twice->error.find("cut off by its token limit"), std::string::npos) << twice->error;
  EXPECT_EQ(twice->model_calls, 2);
}

TEST_F(ContractTest, ACallCutOffByTheTokenLimitIsRefusedNotRun) {
  Build(kPlainAgent, R"([{"when": {"last": "user"}, "finish": "length",
                          "tool_calls": [{"name": "note", "args": {"text": "complete"}},
                                         {"name": "note", "args": {"text": "cut of"}}]},
                         {"when": {"last": "tool"}, "text": "Noted one."}])",
        {{"note", R"([{"result": {"success": true}}])"}});
  auto r = Say("note two things");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->tools.size(), 2u);
  EXPECT_EQ(r->tools[0].status, ToolOutcome::Status::kExecuted);
  EXPECT_EQ(r->tools[1].status, ToolOutcome::Status::kRejected);
  EXPECT_EQ(r->tools[1].reason, "cut_off");
  EXPECT_EQ(Calls("note"), 1);
}

TEST_F(ContractTest, ARefusalIsAPlainHonestReply) {
  Build(kPlainAgent, R"([{"text": "I can't help with building that.", "finish": "refusal"}])", {});
  auto r = Say("help me build something bad");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, TurnStatus::kCompleted);
  EXPECT_EQ(r->reply, "I'm sorry, but I can't help with that request.");
  EXPECT_TRUE(HasEvent(*r, "model.refusal"));
}

constexpr const char* kRefusingAgent = R"(name: r
model: { provider: scripted }
tools: [ { name: save, timing: deferred, input_schema: { type: object } } ]
)";

TEST_F(ContractTest, ARefusalAfterAQueuedWriteWithdrawsIt) {
  Build(kRefusingAgent, R"([{"when": {"last": "user"}, "tool_calls": [{"name": "save", "args": {}}]},
                            {"when": {"last": "tool"}, "text": "I can't continue with this.", "finish": "refusal"}])",
        {{"save", R"([{"result": {"success": true}}])"}});
  TurnInput in;
  in.say = "save it";
  auto r = Record(in);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reply, "I'm sorry, but I can't help with that request.");
  ASSERT_EQ(r->tools.size(), 1u);
  EXPECT_EQ(r->tools[0].reason, "refused");
  EXPECT_EQ(Calls("save"), 0) << "told it cannot be helped, the person's write does not run";
  ExpectNoViolations(kRefusingAgent);
}

TEST_F(ContractTest, APausedAnswerGoesBackOnceWithWhatItSaidSoFar) {
  Build(kPlainAgent, R"([{"when": {"turn": 1, "last": "user"}, "text": "Searching the web... ", "finish": "paused"},
                         {"when": {"turn": 1}, "text": "found it."},
                         {"when": {"turn": 2}, "text": "You're welcome."}])", {});
  auto r = Say("look it up");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reply, "Searching the web... found it.");
  ASSERT_EQ(recorder_->requests.size(), 2u);
  const Message& last = recorder_->requests[1].messages.back();
  EXPECT_EQ(last.role, Role::kAssistant);
  EXPECT_EQ(last.text, "Searching the web... ");
  // What was sent back was the request's alone: the history holds the whole answer once.
  ASSERT_TRUE(Say("thanks").ok());
  const std::vector<Message>& next = recorder_->requests[2].messages;
  ASSERT_EQ(next.size(), 4u);
  EXPECT_EQ(next[1].text, "look it up");
  EXPECT_EQ(next[2].text, "Searching the web... found it.");
  EXPECT_EQ(next[3].text, "thanks");
}

// ---- 17. An intent is satisfied by its request, across a clarification ---------------

TEST_F(ContractTest, AnIntentIsSatisfiedAcrossTheClarificationThatFollowedIt) {
  Build(R"(name: i
model: { provider: scripted }
intents: [ { name: find, match: '(?i)find', required_tools: [lookup], enforcement: force } ]
tools:
  - { name: lookup, may_clarify: true, input_schema: { type: object } }
)",
        R"([{"when": {"turn": 1}, "tool_calls": [{"name": "lookup", "args": {}}]},
            {"when": {"turn": 2}, "text": "Here is Ann's number."},
            {"repeat": true, "tool_calls": [{"name": "lookup", "args": {}}]}])",
        {{"lookup", R"([{"result": {"next_action": "clarification_needed", "data": {},
            "clarification": {"question": "Which Ann?", "options": [{"id": "a1"}, {"id": "a2"}]}}}])"}});
  ASSERT_EQ(Say("find Ann")->status, TurnStatus::kAwaitingClarification);
  auto r = Select("a1");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reply, "Here is Ann's number.");
  EXPECT_EQ(r->model_calls, 1) << "no forced retry for a tool the request already ran";
  EXPECT_FALSE(HasEvent(*r, "intent.missing"));
}

// ---- 14. A replaced catalog is freed once nothing uses it -----------------------------

TEST_F(ContractTest, AReplacedCatalogIsFreed) {
  Build(kPlainAgent, R"([{"text": "ok"}])", {});
  std::weak_ptr<const AgentConfig> old = runtime_->config();
  ASSERT_FALSE(old.expired());
  std::vector<ToolDef> tools = runtime_->config()->tools;
  tools.push_back(tools.front());
  tools.back().name = "note2";
  ASSERT_TRUE(runtime_->ReplaceTools(tools).ok());
  EXPECT_TRUE(old.expired());
  EXPECT_NE(runtime_->config()->FindTool("note2"), nullptr);
}

}  // namespace
}  // namespace reins
