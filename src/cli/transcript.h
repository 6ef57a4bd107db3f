// Human-readable output of scenario runs: the conversation, what the model proposed
// and what reins did with each call and why (a turn's timeline, timeline_text.h), every
// check with PASS/FAIL, invariants.
#pragma once

#include <ostream>

#include "cli/term.h"
#include "eval/eval_suite.h"
#include "eval/scenario_run.h"

namespace reins {

void PrintScenarioRun(std::ostream& out, const ScenarioRun& run, const Term& term, bool with_trace);
// One line: "PASS msg-001  title  (7 checks)" or FAIL with the count of failures.
void PrintScenarioSummaryLine(std::ostream& out, const ScenarioRun& run, const Term& term);
// The trace events of one turn, one per line.
void PrintEvents(std::ostream& out, const std::vector<TraceEvent>& events, const Term& term);
// One line per eval mode: "governor on   97/100 runs passed, no invariant violations".
void PrintModeSummary(std::ostream& out, const ModeStats& m, const Term& term);

}  // namespace reins
