// The files of `reins eval --report DIR`: report.json (versioned schema,
// docs/evaluation.md), report.html (one static page, inline SVG charts, no network) and
// junit.xml (for CI systems), plus the text of `--compare OLD.json`.
#pragma once

#include <string>

#include "eval/eval_suite.h"
#include "reins/json.h"

namespace reins {

// How the numbers are computed, printed in every report.
const std::vector<std::string>& ScoringFormulas();

Json ReportToJson(const EvalReport& report);
// The HTML and JUnit forms read the JSON form, so a saved report.json renders the same.
std::string ReportToHtml(const Json& report);
std::string ReportToJunit(const Json& report);
// A mode's real model calls in one line: "6 model calls, 789 tokens in, 75 out, $0.0002;
// per call p50 1 ms, p95 1 ms"; "" when it made none.
std::string ModelUsageText(const Json& mode);
// A before/after table as fixed-width text (terminal) or markdown (docs/RESULTS.md):
// by seed note (`by` "seed", the report's `seeds`) or by scenario tag ("tag", `tags`).
std::string GroupTable(const Json& report, const std::string& by, bool markdown);
// What changed between two report.json files: pass rates per scenario and mode,
// dimensions, critical failures and violations.
std::string CompareReports(const Json& old_report, const Json& new_report);

}  // namespace reins
