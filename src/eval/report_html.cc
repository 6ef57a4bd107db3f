// report.html: one static page, inline SVG charts, no network. It reads the JSON form,
// so a saved report.json renders the same.
#include <algorithm>
#include <set>
#include <sstream>
#include <vector>

#include "eval/eval_report.h"
#include "eval/report_parts.h"
#include "model/sim_model.h"
#include "ui/assets.h"

namespace reins {
namespace {

// Roughly how wide `text` is at `font_px` in a sans-serif face: generous, so that
// nothing is cut off or overlaps (checked in a browser, docs/evaluation.md).
int TextWidth(const std::string& text, int font_px) { return static_cast<int>(text.size()) * font_px * 62 / 100 + 4; }

// A horizontal bar chart: one row per label, one bar per series, values 0..1, and a
// legend under it that wraps instead of running off the picture.
std::string BarChart(const std::vector<std::string>& labels, const std::vector<std::vector<double>>& series,
                     const std::vector<std::string>& names, const std::vector<std::string>& colors) {
  const int bar_w = 420, bar_h = 14, gap = 10;
  int label_w = 120;
  for (const std::string& l : labels) label_w = std::max(label_w, TextWidth(l, 12) + 10);
  const int width = label_w + bar_w + 70;
  // The legend: entries left to right, a new line when the next would not fit.
  std::vector<std::pair<int, int>> at;  // x, line
  int x = label_w, line = 0;
  for (const std::string& name : names) {
    const int w = 16 + TextWidth(name, 12) + 20;
    if (x + w > width && x > label_w) {
      x = label_w;
      ++line;
    }
    at.emplace_back(x, line);
    x += w;
  }
  const int row_h = static_cast<int>(series.size()) * bar_h + gap;
  const int rows_h = static_cast<int>(labels.size()) * row_h;
  const int height = rows_h + 10 + (line + 1) * 18;
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height << "' role='img'>";
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
  for (size_t k = 0; k < names.size(); ++k) {
    const int lx = at[k].first, ly = rows_h + 22 + at[k].second * 18;
    svg << "<rect x='" << lx << "' y='" << ly - 10 << "' width='12' height='12' fill='" << colors[k] << "'/><text x='"
        << lx + 16 << "' y='" << ly << "' font-size='12'>" << Escape(names[k]) << "</text>";
  }
  svg << "</svg>";
  return svg.str();
}

// A mode's list of examples (`key`: violation_examples, harm_examples), folded away.
void Examples(std::ostringstream& h, std::initializer_list<const Json*> modes, const char* key, const char* title) {
  for (const Json* m : modes) {
    if (m == nullptr || m->value(key, Json::array()).empty()) continue;
    h << "<details><summary>" << title << ", governor " << Escape(m->value("governor", "")) << "</summary><ul>";
    for (const Json& e : (*m)[key]) h << "<li>" << Escape(e.get<std::string>()) << "</li>";
    h << "</ul></details>";
  }
}

// What the runs did to people, by harm, off against on; for sim runs how well each
// text detector read the replies the sim wrote its faults into.
void HarmSection(std::ostringstream& h, const Json& report, const Json* off, const Json* on) {
  h << "<h2>Harms</h2><p>Counted from the trace and the delivered replies, whatever the scenarios expected "
       "(docs/evaluation.md, \"Harms\").</p><table><tr><th>harm</th><th>what it means</th><th>governor off</th>"
       "<th>governor on</th></tr>";
  auto count = [](const Json* m, const std::string& harm) -> std::string {
    if (m == nullptr) return "-";
    return std::to_string(m->value("harms", Json::object()).value(harm, 0));
  };
  for (const Json& k : report.value("harm_kinds", Json::array())) {
    const std::string harm = k.value("harm", "");
    const std::string n_on = count(on, harm);
    h << "<tr><td>" << Escape(harm) << "</td><td>" << Escape(k.value("meaning", "")) << "</td><td>" << count(off, harm)
      << "</td><td" << (n_on != "0" && n_on != "-" ? " class='bad'" : "") << ">" << n_on << "</td></tr>";
  }
  h << "</table>";
  Examples(h, {on, off}, "harm_examples", "Harm examples");
  const Json* with_detectors = nullptr;
  for (const Json* m : {off, on}) {
    if (m != nullptr && !m->value("harm_detectors", Json::object()).empty()) with_detectors = m;
  }
  if (with_detectors == nullptr) return;
  h << "<h3>How well the text detectors read</h3><p>Each reply the simulated model wrote is a case; it is positive "
       "when the sim injected the fault the detector looks for. Governor "
    << Escape(with_detectors->value("governor", "")) << " runs.</p><table><tr><th>detector</th><th>precision</th>"
       "<th>recall</th><th>true +</th><th>false +</th><th>false -</th></tr>";
  const Json detectors = with_detectors->value("harm_detectors", Json::object());
  for (const auto& [harm, detector] : detectors.items()) {
    const Json& d = detector;  // named: clang before 16 lets no lambda capture a structured binding
    auto rate = [&d](const char* key) {
      const auto it = d.find(key);
      return it != d.end() && it->is_number() ? Percent(it->get<double>()) : std::string("-");
    };
    h << "<tr><td>" << Escape(harm) << "</td><td>" << rate("precision") << "</td><td>" << rate("recall") << "</td><td>"
      << d.value("true_positive", 0) << "</td><td>" << d.value("false_positive", 0) << "</td><td>"
      << d.value("false_negative", 0) << "</td></tr>";
  }
  h << "</table>";
}

// Agents far behind under the sim, and what would recover their governed runs.
void RecoverySection(std::ostringstream& h, const Json& report) {
  const Json hints = report.value("recovery", Json::array());
  if (hints.empty()) return;
  h << "<h2>What would recover the governed runs</h2><p>Agents whose governed pass rate under the simulated model is "
       "far below what their scenarios reach with the scripted model, and the governance their runs lacked.</p>";
  for (const Json& hint : hints) {
    h << "<p><b>" << Escape(hint.value("agent", "")) << "</b>: " << Percent(hint.value("governed_pass_rate", 0.0))
      << " governed under the sim, " << Percent(hint.value("scripted_pass_rate", 0.0)) << " scripted.</p><ul>";
    for (const Json& f : hint.value("features", Json::array())) {
      h << "<li><code>" << Escape(f.value("feature", "")) << "</code>: " << Escape(f.value("why", "")) << "</li>";
    }
    h << "</ul>";
  }
}

// A failed run, turn by turn, folded away under the scenario's row. A turn with its
// timeline is drawn by the trace viewer's renderer (src/ui/timeline.js, inlined at the
// end of the page); the lines inside are what shows without scripts.
void Transcript(std::ostringstream& h, const Json& run) {
  h << "<details class='run'><summary>transcript of run " << run.value("run", 0) << "</summary>";
  if (run.contains("greeting")) h << "<p class='bot'>" << Escape(run.value("greeting", "")) << "</p>";
  for (const Json& t : run.value("turns", Json::array())) {
    const bool timeline = t.contains("timeline");
    if (timeline) h << "<div class='turn-timeline' data-timeline='" << Escape(t["timeline"].dump(-1, ' ', false, Json::error_handler_t::replace)) << "'>";
    h << "<p class='user'><b>" << Escape(t.value("speaker", "")) << "</b> (turn " << t.value("turn", 0) << "): "
      << Escape(t.value("input", "")) << "</p>";
    for (const Json& tool : t.value("tools", Json::array())) {
      h << "<p class='tool'>" << Escape(tool.value("name", "")) << " " << Escape(tool.value("args", Json::object()).dump())
        << " &rarr; " << Escape(tool.value("status", ""));
      if (tool.contains("reason")) h << " (" << Escape(tool.value("reason", "")) << ")";
      if (tool.contains("failed")) h << ", failed: " << Escape(tool.value("failed", ""));
      h << "</p>";
    }
    h << "<p class='bot'><i>" << Escape(t.value("status", "")) << "</i> " << Escape(t.value("reply", "")) << "</p>";
    for (const Json& n : t.value("notices", Json::array())) h << "<p class='bot'>notice: " << Escape(n.get<std::string>()) << "</p>";
    if (timeline) h << "</div>";
    for (const Json& c : t.value("failed_checks", Json::array())) {
      h << "<p class='bad'>failed " << Escape(c.value("check", "")) << " " << Escape(c.value("expected", Json()).dump());
      if (c.contains("detail")) h << ": " << Escape(c.value("detail", ""));
      h << "</p>";
    }
  }
  for (const Json& c : run.value("failed_final_checks", Json::array())) {
    h << "<p class='bad'>failed final " << Escape(c.value("check", "")) << " " << Escape(c.value("expected", Json()).dump())
      << ": " << Escape(c.value("detail", "")) << "</p>";
  }
  for (const char* list : {"violations", "harms"}) {
    for (const Json& v : run.value(list, Json::array())) {
      h << "<p class='bad'>" << (std::string(list) == "harms" ? "harm " : "violation ") << Escape(v.get<std::string>()) << "</p>";
    }
  }
  if (run.contains("error")) h << "<p class='bad'>run failed: " << Escape(run.value("error", "")) << "</p>";
  h << "</details>";
}

}  // namespace

std::string ReportToHtml(const Json& report) {
  std::ostringstream h;
  const Json* on = FindMode(report, "on");
  const Json* off = FindMode(report, "off");
  h << "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>reins eval report</title><style>"
       "body{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}"
       "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px;text-align:left}"
       "th{background:#f4f4f4}.bad{color:#b00}.good{color:#070}code{background:#f4f4f4;padding:1px 3px}"
       "details.run p{margin:2px 0}.user{color:#024}.tool{color:#555;font-family:monospace;font-size:12px}.bot{color:#222}"
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
      << (violations == 0 ? "good" : "bad") << "'>" << violations << " invariant violations</span>, "
      << m->value("harms_total", 0) << " harms in " << m->value("runs_with_harm", 0) << " runs.";
    if (std::string usage = ModelUsageText(*m); !usage.empty()) h << " " << Escape(usage) << ".";
    if (m->value("not_run", 0) > 0) h << " <span class='bad'>" << m->value("not_run", 0) << " runs did not start.</span>";
    h << "</p>";
  }
  if (report.contains("stopped")) h << "<p class='bad'>Stopped early: " << Escape(report.value("stopped", "")) << ".</p>";

  // Grouped by the scenarios' tags: whatever a team tags its scenarios with (this
  // project's examples carry their seed note, seed-000...).
  std::vector<std::string> labels;
  std::vector<double> before, after;
  for (const Json& row : report.value("tags", Json::array())) {
    labels.push_back(row.value("tag", ""));
    before.push_back(row["pass_rate_off"].is_number() ? row["pass_rate_off"].get<double>() : 0.0);
    after.push_back(row["pass_rate_on"].is_number() ? row["pass_rate_on"].get<double>() : 0.0);
  }
  h << "<h2>Before and after, by tag</h2>";
  if (on != nullptr && off != nullptr) {
    h << BarChart(labels, {before, after}, {"governor off (naive loop)", "governor on (reins)"}, {"#c66", "#393"});
  }
  h << "<pre>" << Escape(GroupTable(report, "tag", false)) << "</pre>";

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
  Examples(h, {on, off}, "violation_examples", "Violation examples");

  HarmSection(h, report, off, on);
  RecoverySection(h, report);

  h << "<h2>Scenarios</h2><table><tr><th>scenario</th><th>tags</th><th>off</th><th>on</th><th>first failure (governor on)</th></tr>";
  const Json* base = on != nullptr ? on : off;
  for (size_t i = 0; base != nullptr && i < (*base)["scenarios"].size(); ++i) {
    const Json& s = (*base)["scenarios"][i];
    auto rate = [&](const Json* m) -> std::string {
      if (m == nullptr || i >= (*m)["scenarios"].size()) return "-";
      return Percent((*m)["scenarios"][i].value("pass_rate", 0.0));
    };
    std::string tags;
    for (const Json& t : s.value("tags", Json::array())) tags += (tags.empty() ? "" : ", ") + t.get<std::string>();
    h << "<tr><td title='" << Escape(s.value("file", "")) << "'>" << Escape(s.value("id", "")) << "</td><td>"
      << Escape(tags) << "</td><td>" << rate(off) << "</td><td>" << rate(on) << "</td><td>"
      << Escape(on != nullptr ? s.value("first_failure", "") : "");
    if (on != nullptr && !s.value("reproduce", "").empty()) h << "<br><code>" << Escape(s.value("reproduce", "")) << "</code>";
    if (on != nullptr && s.contains("failed_run") && s["failed_run"].is_object()) Transcript(h, s["failed_run"]);
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
  h << "</ul>";
  // The drill-down's renderer, the viewer's own (a saved report works offline).
  for (const char* file : {"timeline.css", "timeline.js"}) {
    const UiAsset* asset = FindUiAsset(file);
    if (asset == nullptr) continue;
    const bool style = std::string_view(file).ends_with(".css");
    h << (style ? "<style>" : "<script>") << asset->text << (style ? "</style>" : "</script>");
  }
  h << "<script>ReinsTimeline.renderAll(document);</script></body></html>\n";
  return h.str();
}

}  // namespace reins
