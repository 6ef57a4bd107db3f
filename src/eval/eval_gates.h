// Release gates over an eval report (docs/evaluation.md, "Gates"): `--min-pass RATE`,
// `--min-dimension NAME=RATE,...`, `--max-critical TAG=N,...`, `--max-harm N` or
// `--max-harm HARM=N,...`. Each gate is judged on
// the governed runs (the naive ones when only those ran); eval exits 1 with one line
// per failed gate, and junit.xml carries one test case per gate.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reins/json.h"
#include "reins/status.h"

namespace reins {

struct EvalGates {
  std::optional<double> min_pass;
  std::map<std::string, double> min_dimension;  // dimension -> lowest average
  std::map<std::string, int> max_critical;      // critical tag -> most failures
  std::map<std::string, int> max_harm;          // harm kind, or "" for all harms -> most harms

  bool Any() const { return min_pass || !min_dimension.empty() || !max_critical.empty() || !max_harm.empty(); }
};

// "name=value,name=value" -> (name, value text) pairs, every name and value non-empty;
// the error names `flag`. The gates below and `--faults` read their lists with it.
Result<std::vector<std::pair<std::string, std::string>>> ParseNameValues(const std::string& text, const char* flag);

// "hear=0.9,respond=0.8" (rates 0..1) and "tag=0,other=2" (counts >= 0).
Result<std::map<std::string, double>> ParseDimensionGates(const std::string& text);
Result<std::map<std::string, int>> ParseCriticalGates(const std::string& text);
// "0" (every harm together: key "") or "internal_name_shown=2,..." (kinds of eval/harms.h).
Result<std::map<std::string, int>> ParseHarmGates(const std::string& text);

// One entry per gate, in the order above: {"gate", "passed", "detail"}.
Json JudgeGates(const EvalGates& gates, const Json& report);

}  // namespace reins
