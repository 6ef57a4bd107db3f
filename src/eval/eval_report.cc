#include "eval/eval_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>
#include <vector>

namespace reins {
namespace {

double Rate(int passed, int total) { return total == 0 ? 0.0 : static_cast<double>(passed) / total; }

std::string Percent(double rate) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", rate * 100);
  return buf;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string ModeName(bool governor) { return governor ? "on" : "off"; }

// The seed note a scenario reproduces: its `seed-NNN` tag, else "other".
std::string SeedOf(const Json& scenario) {
  for (const Json& t : scenario.value("tags", Json::array())) {
    if (t.is_string() && t.get<std::string>().rfind("seed-", 0) == 0) return t.get<std::string>();
  }
  return "other";
}

// "I2" before "I10": the letters, then the number after them.
struct InvariantOrder {
  bool operator()(const std::string& a, const std::string& b) const {
    auto split = [](const std::string& id) {
      size_t digits = id.find_first_of("0123456789");
      std::string_view name(id.data(), digits == std::string::npos ? id.size() : digits);
      long number = digits == std::string::npos ? -1 : std::strtol(id.c_str() + digits, nullptr, 10);
      return std::make_tuple(name, number, std::string_view(id));
    };
    return split(a) < split(b);
  }
};

const Json* FindMode(const Json& report, const std::string& governor) {
  auto modes = report.find("modes");
  if (modes == report.end() || !modes->is_array()) return nullptr;
  for (const Json& m : *modes) {
    if (m.value("governor", "") == governor) return &m;
  }
  return nullptr;
}

struct SeedRow {
  std::string seed;
  int scenarios = 0;
  int runs_off = 0, passed_off = 0, runs_on = 0, passed_on = 0;
  int critical_off = 0, critical_on = 0;
};

std::vector<SeedRow> SeedRows(const Json& report) {
  std::map<std::string, SeedRow> rows;
  for (const char* governor : {"off", "on"}) {
    const Json* mode = FindMode(report, governor);
    if (mode == nullptr) continue;
    bool on = std::string(governor) == "on";
    for (const Json& s : mode->value("scenarios", Json::array())) {
      SeedRow& row = rows[SeedOf(s)];
      row.seed = SeedOf(s);
      if (on || FindMode(report, "on") == nullptr) ++row.scenarios;
      (on ? row.runs_on : row.runs_off) += s.value("runs", 0);
      (on ? row.passed_on : row.passed_off) += s.value("passed", 0);
      (on ? row.critical_on : row.critical_off) += s.value("critical_failures", 0);
    }
  }
  std::vector<SeedRow> out;
  for (auto& [seed, row] : rows) out.push_back(row);
  return out;
}

// A horizontal bar chart: one row per label, one bar per series, values 0..1.
std::string BarChart(const std::vector<std::string>& labels, const std::vector<std::vector<double>>& series,
                     const std::vector<std::string>& names, const std::vector<std::string>& colors) {
  const int label_w = 190, bar_w = 420, bar_h = 14, gap = 10;
  int row_h = static_cast<int>(series.size()) * bar_h + gap;
  int height = static_cast<int>(labels.size()) * row_h + 30;
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << label_w + bar_w + 70 << "' height='" << height
      << "' role='img'>";
  for (size_t i = 0; i < labels.size(); ++i) {
    int y = static_cast<int>(i) * row_h;
    svg << "<text x='0' y='" << y + bar_h << "' font-size='12'>" << Escape(labels[i]) << "</text>";
    for (size_t k = 0; k < series.size(); ++k) {
      double v = series[k][i];
      int w = static_cast<int>(std::lround(v * bar_w));
      int by = y + static_cast<int>(k) * bar_h;
      svg << "<rect x='" << label_w << "' y='" << by << "' width='" << bar_w << "' height='" << bar_h - 2
          << "' fill='#eee'/><rect x='" << label_w << "' y='" << by << "' width='" << w << "' height='" << bar_h - 2
          << "' fill='" << colors[k] << "'><title>" << Escape(names[k]) << ": " << Percent(v) << "</title></rect>"
          << "<text x='" << label_w + bar_w + 6 << "' y='" << by + bar_h - 3 << "' font-size='11'>" << Percent(v)
          << "</text>";
    }
  }
  int ly = height - 12;
  for (size_t k = 0; k < names.size(); ++k) {
    int lx = label_w + static_cast<int>(k) * 160;
    svg << "<rect x='" << lx << "' y='" << ly - 10 << "' width='12' height='12' fill='" << colors[k] << "'/><text x='"
        << lx + 16 << "' y='" << ly << "' font-size='12'>" << Escape(names[k]) << "</text>";
  }
  svg << "</svg>";
  return svg.str();
}

double TotalRuns(const EvalReport& report) {
  int n = 0;
  for (const ModeStats& m : report.modes) n += m.runs;
  return n;
}

// p50, p95 and the largest of real times in ms; null when there are none.
Json Latency(std::vector<double> ms) {
  if (ms.empty()) return nullptr;
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[static_cast<size_t>(q * static_cast<double>(ms.size() - 1) + 0.5)]; };
  return {{"p50_ms", at(0.5)}, {"p95_ms", at(0.95)}, {"max_ms", ms.back()}};
}

Json UsageToJson(const ModelUsage& u) {
  return {{"calls", u.calls},
          {"input_tokens", u.input_tokens},
          {"output_tokens", u.output_tokens},
          {"cost_usd", u.cost_usd ? Json(*u.cost_usd) : Json()},
          {"call_latency", Latency(u.call_ms)}};
}

}  // namespace

const std::vector<std::string>& ScoringFormulas() {
  static const std::vector<std::string> kFormulas = {
      "A run passes when it finished, every check of every turn and of the final block passed, and no invariant was violated.",
      "Scenario pass rate = passed runs / runs.",
      "Dimension average = passed checks carrying that dimension / checks carrying it, over all runs.",
      "Critical failures = failed checks carrying `critical: TAG`, counted per tag over all runs.",
      "Governor off runs the same scenarios with the same sim seeds through the naive loop (every call runs "
      "immediately, in order; no stop, gate, deferral, validation or rails).",
  };
  return kFormulas;
}

std::string ModelUsageText(const Json& mode) {
  const Json usage = mode.value("model_usage", Json::object());
  const int calls = usage.value("calls", 0);
  if (calls == 0) return "";
  char part[200];
  std::snprintf(part, sizeof part, "%d model calls, %lld tokens in, %lld out", calls,
                static_cast<long long>(usage.value("input_tokens", int64_t{0})),
                static_cast<long long>(usage.value("output_tokens", int64_t{0})));
  std::string text = part;
  if (usage.contains("cost_usd") && usage["cost_usd"].is_number()) {
    std::snprintf(part, sizeof part, ", $%.4f", usage["cost_usd"].get<double>());
    text += part;
  }
  if (usage.contains("call_latency") && usage["call_latency"].is_object()) {
    const Json& l = usage["call_latency"];
    std::snprintf(part, sizeof part, "; per call p50 %.0f ms, p95 %.0f ms", l.value("p50_ms", 0.0), l.value("p95_ms", 0.0));
    text += part;
  }
  return text;
}

Json ReportToJson(const EvalReport& report) {
  Json modes = Json::array();
  for (const ModeStats& m : report.modes) {
    Json scenarios = Json::array();
    for (const ScenarioStats& s : m.scenarios) {
      scenarios.push_back({{"id", s.id}, {"title", s.title}, {"file", s.file}, {"tags", s.tags}, {"runs", s.runs},
                           {"passed", s.passed}, {"pass_rate", Rate(s.passed, s.runs)}, {"critical_failures", s.critical_failures},
                           {"first_failure", s.first_failure},
                           {"reproduce", s.reproduce},
                           {"not_run", s.not_run},
                           {"model_usage", UsageToJson(s.usage)},
                           {"turn_latency", Latency(s.turn_ms)}});
    }
    Json dimensions = Json::object();
    for (const auto& [d, pc] : m.dimensions) {
      dimensions[d] = {{"passed", pc.first}, {"checks", pc.second}, {"average", Rate(pc.first, pc.second)}};
    }
    Json faults = Json::object();
    for (const auto& [f, t] : m.faults) {
      faults[f] = {{"opportunities", t.opportunities}, {"fired", t.fired},
                   {"observed_rate", t.opportunities ? static_cast<double>(t.fired) / t.opportunities : 0.0}};
    }
    modes.push_back({{"governor", ModeName(m.governor)},
                     {"runs", m.runs},
                     {"passed", m.passed},
                     {"pass_rate", Rate(m.passed, m.runs)},
                     {"scenarios", scenarios},
                     {"dimensions", dimensions},
                     {"critical", m.critical},
                     {"invariant_violations", m.violations},
                     {"violations_total", m.ViolationsTotal()},
                     {"violation_examples", m.violation_examples},
                     {"faults_observed", faults},
                     {"not_run", m.not_run},
                     {"model_usage", UsageToJson(m.usage)},
                     {"turn_latency", Latency(m.turn_ms)}});
  }
  Json j = {{"schema", "reins.eval.report"},
            {"version", EvalReport::kVersion},
            {"model", report.model},
            {"seed", report.seed},
            {"runs_per_scenario", report.runs},
            {"threads", report.threads},
            {"seconds", report.seconds},
            {"runs_per_second", report.seconds > 0 ? TotalRuns(report) / report.seconds : 0.0},
            {"scoring", ScoringFormulas()},
            {"assumed_faults", report.assumed_faults},
            {"modes", modes}};
  if (!report.stopped.empty()) j["stopped"] = report.stopped;
  Json seeds = Json::array();
  for (const SeedRow& r : SeedRows(j)) {
    seeds.push_back({{"seed", r.seed}, {"scenarios", r.scenarios},
                     {"pass_rate_off", r.runs_off ? Json(Rate(r.passed_off, r.runs_off)) : Json()},
                     {"pass_rate_on", r.runs_on ? Json(Rate(r.passed_on, r.runs_on)) : Json()},
                     {"critical_off", r.critical_off}, {"critical_on", r.critical_on}});
  }
  j["seeds"] = seeds;
  return j;
}

std::string SeedTable(const Json& report, bool markdown) {
  std::ostringstream out;
  auto cell = [](const Json& v) { return v.is_number() ? Percent(v.get<double>()) : std::string("-"); };
  if (markdown) {
    out << "| seed note | scenarios | pass rate, governor off (before) | pass rate, governor on (after) | "
           "critical failures off | critical failures on |\n"
        << "|---|---:|---:|---:|---:|---:|\n";
  } else {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%-12s %9s %14s %14s %13s %13s\n", "seed", "scenarios", "before (off)", "after (on)",
                  "critical off", "critical on");
    out << buf;
  }
  for (const Json& row : report.value("seeds", Json::array())) {
    std::string seed = row.value("seed", "");
    int n = row.value("scenarios", 0);
    if (markdown) {
      out << "| " << seed << " | " << n << " | " << cell(row["pass_rate_off"]) << " | " << cell(row["pass_rate_on"])
          << " | " << row.value("critical_off", 0) << " | " << row.value("critical_on", 0) << " |\n";
    } else {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%-12s %9d %14s %14s %13d %13d\n", seed.c_str(), n,
                    cell(row["pass_rate_off"]).c_str(), cell(row["pass_rate_on"]).c_str(), row.value("critical_off", 0),
                    row.value("critical_on", 0));
      out << buf;
    }
  }
  return out.str();
}

std::string ReportToHtml(const Json& report) {
  std::ostringstream h;
  const Json* on = FindMode(report, "on");
  const Json* off = FindMode(report, "off");
  h << "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>reins eval report</title><style>"
       "body{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}"
       "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;text-align:left}"
       "th{background:#f4f4f4}.bad{color:#b00}.good{color:#070}code{background:#f4f4f4;padding:1px 3px}"
       "</style></head><body>";
  h << "<h1>reins eval</h1><p>Model <code>" << Escape(report.value("model", "")) << "</code>, seed "
    << report.value("seed", 0) << ", " << report.value("runs_per_scenario", 0) << " runs per scenario and governor setting, "
    << report.value("threads", 1) << " threads, " << static_cast<int>(report.value("runs_per_second", 0.0))
    << " runs/s. Report schema <code>" << Escape(report.value("schema", "")) << "</code> version "
    << report.value("version", 0) << ".</p>";
  for (const Json* m : {on, off}) {
    if (m == nullptr) continue;
    int violations = m->value("violations_total", 0);
    h << "<p><b>Governor " << Escape(m->value("governor", "")) << "</b>: " << m->value("passed", 0) << " of "
      << m->value("runs", 0) << " runs passed (" << Percent(m->value("pass_rate", 0.0)) << "), <span class='"
      << (violations == 0 ? "good" : "bad") << "'>" << violations << " invariant violations</span>.";
    if (std::string usage = ModelUsageText(*m); !usage.empty()) h << " " << Escape(usage) << ".";
    if (m->value("not_run", 0) > 0) h << " <span class='bad'>" << m->value("not_run", 0) << " runs did not start.</span>";
    h << "</p>";
  }
  if (report.contains("stopped")) h << "<p class='bad'>Stopped early: " << Escape(report.value("stopped", "")) << ".</p>";

  std::vector<std::string> labels;
  std::vector<double> before, after;
  for (const Json& row : report.value("seeds", Json::array())) {
    labels.push_back(row.value("seed", ""));
    before.push_back(row["pass_rate_off"].is_number() ? row["pass_rate_off"].get<double>() : 0.0);
    after.push_back(row["pass_rate_on"].is_number() ? row["pass_rate_on"].get<double>() : 0.0);
  }
  h << "<h2>Before and after, by seed note</h2>";
  if (on != nullptr && off != nullptr) {
    h << BarChart(labels, {before, after}, {"governor off (naive loop)", "governor on (reins)"}, {"#c66", "#393"});
  }
  h << "<pre>" << Escape(SeedTable(report, false)) << "</pre>";

  std::set<std::string> dims;
  for (const Json* m : {on, off}) {
    if (m == nullptr) continue;
    const Json dimensions = m->value("dimensions", Json::object());
    for (const auto& [d, v] : dimensions.items()) dims.insert(d);
  }
  if (!dims.empty()) {
    h << "<h2>Dimension averages</h2>";
    std::vector<std::string> dl(dims.begin(), dims.end());
    std::vector<std::vector<double>> series;
    std::vector<std::string> names, colors;
    for (const Json* m : {off, on}) {
      if (m == nullptr) continue;
      std::vector<double> v;
      for (const std::string& d : dl) v.push_back(m->value("dimensions", Json::object()).value(d, Json::object()).value("average", 0.0));
      series.push_back(v);
      names.push_back("governor " + m->value("governor", ""));
      colors.push_back(m == on ? "#393" : "#c66");
    }
    h << BarChart(dl, series, names, colors);
  }

  h << "<h2>Critical failures and invariant violations</h2><table><tr><th>what</th><th>governor off</th><th>governor on</th></tr>";
  std::set<std::string> critical_keys;
  std::set<std::string, InvariantOrder> invariant_keys;  // I1, I2, ..., I10: in the spec's order
  for (const Json* m : {on, off}) {
    if (m == nullptr) continue;
    const Json critical = m->value("critical", Json::object());  // value() is a copy: keep it alive
    const Json violations = m->value("invariant_violations", Json::object());
    for (const auto& [k, v] : critical.items()) critical_keys.insert("critical: " + k);
    for (const auto& [k, v] : violations.items()) invariant_keys.insert(k);
  }
  std::vector<std::string> keys(critical_keys.begin(), critical_keys.end());
  for (const std::string& k : invariant_keys) keys.push_back("invariant " + k);
  auto count = [](const Json* m, const std::string& key) -> std::string {
    if (m == nullptr) return "-";
    if (key.rfind("critical: ", 0) == 0) return std::to_string(m->value("critical", Json::object()).value(key.substr(10), 0));
    return std::to_string(m->value("invariant_violations", Json::object()).value(key.substr(10), 0));
  };
  for (const std::string& k : keys) h << "<tr><td>" << Escape(k) << "</td><td>" << count(off, k) << "</td><td>" << count(on, k) << "</td></tr>";
  h << "</table>";
  for (const Json* m : {on, off}) {
    if (m == nullptr || m->value("violation_examples", Json::array()).empty()) continue;
    h << "<details><summary>Violation examples, governor " << Escape(m->value("governor", "")) << "</summary><ul>";
    for (const Json& e : (*m)["violation_examples"]) h << "<li>" << Escape(e.get<std::string>()) << "</li>";
    h << "</ul></details>";
  }

  h << "<h2>Scenarios</h2><table><tr><th>scenario</th><th>seed</th><th>off</th><th>on</th><th>first failure (governor on)</th></tr>";
  const Json* base = on != nullptr ? on : off;
  for (size_t i = 0; base != nullptr && i < (*base)["scenarios"].size(); ++i) {
    const Json& s = (*base)["scenarios"][i];
    auto rate = [&](const Json* m) -> std::string {
      if (m == nullptr || i >= (*m)["scenarios"].size()) return "-";
      return Percent((*m)["scenarios"][i].value("pass_rate", 0.0));
    };
    h << "<tr><td title='" << Escape(s.value("file", "")) << "'>" << Escape(s.value("id", "")) << "</td><td>"
      << Escape(SeedOf(s)) << "</td><td>" << rate(off) << "</td><td>" << rate(on) << "</td><td>"
      << Escape(on != nullptr ? s.value("first_failure", "") : "");
    if (on != nullptr && !s.value("reproduce", "").empty()) h << "<br><code>" << Escape(s.value("reproduce", "")) << "</code>";
    h << "</td></tr>";
  }
  h << "</table>";

  h << "<h2>Assumptions: the simulated model's fault rates</h2>";
  if (report.value("model", "") != "sim") {
    h << "<p>Scripted model: no faults beyond what each scenario scripts.</p>";
  } else {
    h << "<p>Probability per opportunity, as configured (the sim's defaults unless a scenario states its own), and "
         "as observed over these runs.</p><table><tr><th>fault</th><th>assumed (default)</th><th>observed, off</th><th>observed, on</th></tr>";
    Json assumed = SimFaults::Defaults().ToJson();
    for (const auto& item : assumed.items()) {
      const std::string& fault = item.key();
      const Json& rate = item.value();
      auto observed = [&](const Json* m) -> std::string {
        if (m == nullptr) return "-";
        Json t = m->value("faults_observed", Json::object()).value(fault, Json::object());
        if (t.value("opportunities", 0) == 0) return "no opportunity";
        return Percent(t.value("observed_rate", 0.0)) + " of " + std::to_string(t.value("opportunities", 0));
      };
      h << "<tr><td>" << fault << "</td><td>" << Percent(rate.get<double>()) << "</td><td>" << observed(off)
        << "</td><td>" << observed(on) << "</td></tr>";
    }
    h << "</table>";
  }
  h << "<h2>How the numbers are computed</h2><ul>";
  for (const Json& f : report.value("scoring", Json::array())) h << "<li>" << Escape(f.get<std::string>()) << "</li>";
  h << "</ul></body></html>\n";
  return h.str();
}

std::string ReportToJunit(const Json& report) {
  // The governed runs are the ones CI should judge; the naive loop is a baseline.
  const Json* m = FindMode(report, "on");
  if (m == nullptr) m = FindMode(report, "off");
  std::ostringstream x;
  x << "<?xml version='1.0' encoding='UTF-8'?>\n";
  if (m == nullptr) return x.str() + "<testsuites/>\n";
  int failures = 0;
  for (const Json& s : (*m)["scenarios"]) failures += s.value("passed", 0) < s.value("runs", 0);
  int violations = m->value("violations_total", 0);
  double per_run = report.value("seconds", 0.0) / std::max(1, m->value("runs", 1));
  const Json& gates = report.contains("gates") ? report["gates"] : Json::array();
  int failed_gates = 0;
  for (const Json& g : gates) failed_gates += !g.value("passed", false);
  x << "<testsuites><testsuite name='reins eval (governor " << m->value("governor", "") << ", " << report.value("model", "")
    << " model)' tests='" << (*m)["scenarios"].size() + 1 + gates.size() << "' failures='"
    << failures + (violations > 0) + failed_gates << "'>\n";
  for (const Json& s : (*m)["scenarios"]) {
    x << "  <testcase classname='" << Escape(SeedOf(s)) << "' name='" << Escape(s.value("id", "")) << "' time='"
      << per_run * s.value("runs", 0) << "'>";
    if (s.value("passed", 0) < s.value("runs", 0)) {
      x << "<failure message='" << s.value("runs", 0) - s.value("passed", 0) << " of " << s.value("runs", 0)
        << " runs failed'>" << Escape(s.value("first_failure", "")) << "\nreproduce: " << Escape(s.value("reproduce", ""))
        << "</failure>";
    }
    x << "</testcase>\n";
  }
  x << "  <testcase classname='invariants' name='no invariant violations'>";
  if (violations > 0) {
    x << "<failure message='" << violations << " violations'>";
    for (const Json& e : m->value("violation_examples", Json::array())) x << Escape(e.get<std::string>()) << "\n";
    x << "</failure>";
  }
  x << "</testcase>\n";
  for (const Json& g : gates) {
    x << "  <testcase classname='gates' name='" << Escape(g.value("gate", "")) << "'>";
    if (!g.value("passed", false)) x << "<failure message='" << Escape(g.value("detail", "")) << "'/>";
    x << "</testcase>\n";
  }
  x << "</testsuite></testsuites>\n";
  return x.str();
}

std::string CompareReports(const Json& old_report, const Json& new_report) {
  std::ostringstream out;
  int changed = 0;
  for (const char* governor : {"on", "off"}) {
    const Json* a = FindMode(old_report, governor);
    const Json* b = FindMode(new_report, governor);
    if (a == nullptr || b == nullptr) continue;
    out << "governor " << governor << ": " << Percent(a->value("pass_rate", 0.0)) << " -> "
        << Percent(b->value("pass_rate", 0.0)) << " of runs passed; violations " << a->value("violations_total", 0)
        << " -> " << b->value("violations_total", 0) << "\n";
    std::map<std::string, double> before;
    for (const Json& s : (*a)["scenarios"]) before[s.value("id", "")] = s.value("pass_rate", 0.0);
    for (const Json& s : (*b)["scenarios"]) {
      std::string id = s.value("id", "");
      double now = s.value("pass_rate", 0.0);
      auto it = before.find(id);
      if (it == before.end()) {
        out << "  + " << id << " (new): " << Percent(now) << "\n";
        ++changed;
      } else if (std::fabs(it->second - now) > 1e-9) {
        out << "  " << (now > it->second ? "^ " : "v ") << id << ": " << Percent(it->second) << " -> " << Percent(now) << "\n";
        ++changed;
      }
      if (it != before.end()) before.erase(it);
    }
    for (const auto& [id, rate] : before) {
      out << "  - " << id << " (gone, was " << Percent(rate) << ")\n";
      ++changed;
    }
    const Json dimensions = b->value("dimensions", Json::object());
    for (const auto& [d, v] : dimensions.items()) {
      double was = a->value("dimensions", Json::object()).value(d, Json::object()).value("average", 0.0);
      double is = v.value("average", 0.0);
      if (std::fabs(was - is) > 1e-9) out << "  dimension " << d << ": " << Percent(was) << " -> " << Percent(is) << "\n";
    }
  }
  out << changed << " scenario pass rates changed\n";
  return out.str();
}

}  // namespace reins
