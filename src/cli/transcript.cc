#include "cli/transcript.h"

#include "cli/timeline_text.h"
#include "domain/text.h"
#include "domain/timeline.h"
#include "eval/invariants.h"

namespace reins {
namespace {

void PrintCheck(std::ostream& out, const CheckResult& c, const Term& term) {
  out << "    " << (c.passed ? term.Green("PASS") : term.Red("FAIL")) << " " << c.kind << " "
      << term.Dim(Clipped(c.expected.dump(), 80));
  if (!c.critical.empty()) out << term.Dim(" [" + c.critical + "]");
  if (!c.passed && !c.detail.empty()) out << "\n         " << term.Yellow(c.detail);
  out << "\n";
}

}  // namespace

void PrintEvents(std::ostream& out, const std::vector<TraceEvent>& events, const Term& term) {
  for (const TraceEvent& e : events) {
    out << "      " << term.Cyan(std::string(e.name())) << " " << term.Dim(Clipped(e.data.text(), 200)) << "\n";
  }
}

void PrintScenarioRun(std::ostream& out, const ScenarioRun& run, const Term& term, bool with_trace) {
  out << term.Bold(run.id) << "  " << run.title << "  " << term.Dim(run.file) << "\n";
  if (!run.greeting.empty()) out << "  " << term.Cyan("reins (greeting):") << " " << run.greeting << "\n";
  for (const TurnRun& t : run.turns) {
    const std::string said = SaidText(TurnInputToJson(t.input));  // as the trace viewer's timeline says it
    out << "  " << term.Bold("turn " + std::to_string(t.number)) << "  " << t.input.speaker << ": " << said << "\n";
    if (t.refused) {
      out << "    " << term.Yellow("input refused: " + t.refusal) << "\n";
    } else {
      PrintStepLines(out, t.result.events, term);
      if (t.result.status == TurnStatus::kBlocked) {
        out << "    " << term.Yellow("blocked at the gate: " + t.result.blocked_reason) << "\n";
      } else {
        out << "    " << term.Cyan("reins:") << " " << t.result.reply << "  "
            << term.Dim("[" + std::string(TurnStatusName(t.result.status)) + "]") << "\n";
      }
      if (t.result.clarification) {
        std::string options;
        for (const auto& o : t.result.clarification->clarification.options) {
          options += (options.empty() ? "" : " | ") + (o.title == o.id ? o.id : o.id + " " + o.title);
        }
        out << "    " << term.Dim("options: " + options) << "\n";
      }
      if (!t.result.error.empty()) out << "    " << term.Red("error: " + t.result.error) << "\n";
      if (with_trace) PrintEvents(out, t.result.events, term);
    }
    for (const CheckResult& c : t.checks) PrintCheck(out, c, term);
  }
  if (!run.final_checks.empty()) out << "  " << term.Bold("final") << "\n";
  for (const CheckResult& c : run.final_checks) PrintCheck(out, c, term);
  if (run.violations.empty()) {
    std::string ids;
    for (const std::string& id : CheckedInvariants()) ids += " " + id;
    out << "  " << term.Dim("invariants hold:" + ids) << "\n";
  }
  for (const InvariantViolation& v : run.violations) {
    out << "  " << term.Red("VIOLATION " + v.id) << " turn " << v.turn << ": " << v.message << "\n";
  }
  for (const Harm& h : run.harms) {
    out << "  " << term.Red("HARM " + h.kind) << " turn " << h.turn << ": " << h.detail << "\n";
  }
  if (!run.error.empty()) out << "  " << term.Red("run failed: " + run.error) << "\n";
  PrintScenarioSummaryLine(out, run, term);
}

void PrintScenarioSummaryLine(std::ostream& out, const ScenarioRun& run, const Term& term) {
  int total = run.ChecksPassed() + run.ChecksFailed();
  if (run.Passed()) {
    out << term.Green("PASS") << " " << run.id << "  " << term.Dim("(" + std::to_string(total) + " checks)") << "\n";
  } else {
    std::string why = std::to_string(run.ChecksFailed()) + " of " + std::to_string(total) + " checks failed";
    if (!run.violations.empty()) why += ", " + std::to_string(run.violations.size()) + " invariant violations";
    if (!run.error.empty()) why += ", run failed";
    out << term.Red("FAIL") << " " << run.id << "  " << term.Dim("(" + why + ")") << "\n";
  }
}

void PrintModeSummary(std::ostream& out, const ModeStats& m, const Term& term) {
  int violations = m.ViolationsTotal();
  out << term.Bold("governor " + std::string(m.governor ? "on " : "off")) << "  " << m.passed << "/" << m.runs
      << " runs passed";
  if (violations > 0) {
    out << ", " << (m.governor ? term.Red(std::to_string(violations) + " invariant violations") : std::to_string(violations) + " invariant violations");
  } else {
    out << ", no invariant violations";
  }
  const int harms = m.HarmsTotal();
  out << ", " << (harms > 0 && m.governor ? term.Red(std::to_string(harms) + " harms") : std::to_string(harms) + " harms");
  out << "\n";
  const RecoveryTally& r = m.recovery;
  if (m.governor && r.act_retries > 0) {
    double extra = 0;
    for (int c : r.extra_calls) extra += c;
    out << term.Dim("  recovery: " + std::to_string(r.act_retries) + " described or claimed calls forced, " +
                    std::to_string(r.act_recovered) + " then made (" + std::to_string(r.runs_recovered) +
                    " runs passed that way), " + std::to_string(r.act_missing) + " replies said what was not done; " +
                    std::to_string(static_cast<int>(extra)) + " extra model calls over " +
                    std::to_string(r.extra_calls.size()) + " turns")
        << "\n";
  }
}

}  // namespace reins
