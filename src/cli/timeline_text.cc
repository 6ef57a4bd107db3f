#include "cli/timeline_text.h"

#include <algorithm>
#include <string>

#include "domain/text.h"
#include "domain/timeline.h"

namespace reins {
namespace {

std::string Coloured(const Term& term, const std::string& tone, const std::string& text) {
  if (tone == "bad") return term.Red(text);
  if (tone == "held") return term.Yellow(text);
  return term.Green(text);
}

// `text` with each line after the first indented by `indent`.
std::string Indented(const std::string& text, const std::string& indent) {
  std::string out;
  for (char c : text) out += c == '\n' ? "\n" + indent : std::string(1, c);
  return out;
}

// A detail's text under its label, cut at 400 characters (the viewer and --json show it
// whole); its further lines indented under the first.
void PrintDetail(std::ostream& out, const std::string& label, const std::string& text, const Term& term) {
  const std::string indent = "               ";
  out << indent << term.Dim(label + ":") << " " << Indented(Clipped(text, 400), indent + "  ") << "\n";
}

// A step's detail called `label`, "" when it has none.
std::string Detail(const Json& step, const std::string& label) {
  for (const Json& d : step.value("details", Json::array())) {
    if (d.is_array() && d.size() == 2 && d[0] == label) return d[1].get<std::string>();
  }
  return "";
}

// `text` on one line, cut at `max` characters.
std::string OneLine(std::string text, size_t max) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return Clipped(text, max);
}

// "outcome  kind title": the head every form of a step starts with.
void PrintHead(std::ostream& out, const Json& s, const Term& term) {
  out << Coloured(term, s.value("tone", "ok"), s.value("outcome", "")) << "  " << term.Dim(s.value("kind", ""));
  if (!s.value("title", "").empty()) out << " " << term.Bold(s.value("title", ""));
}

}  // namespace

void PrintStepLines(std::ostream& out, const std::vector<TraceEvent>& events, const Term& term) {
  const Json turn = TurnTimeline({0, "", "", "", "", &events});
  for (const Json& s : turn["steps"]) {
    const bool model = s.value("kind", "") == "model";
    const std::string proposed = model ? Detail(s, "proposed") : "";
    if (model && proposed.empty() && s.value("tone", "ok") == "ok") continue;
    out << "    ";
    PrintHead(out, s, term);
    const std::string said = model ? proposed : s.value("why", "");
    if (!said.empty()) out << "  " << term.Dim(OneLine(said, 110));
    out << "\n";
  }
}

void PrintTimeline(std::ostream& out, const Json& turn, const Term& term) {
  out << "  " << term.Bold("turn " + std::to_string(turn.value("turn", 0))) << "  " << turn.value("speaker", "")
      << ": " << turn.value("said", "") << "  " << term.Dim("[" + turn.value("status", "") + "]") << "\n";
  for (const Json& s : turn.value("steps", Json::array())) {
    std::string at = "+" + std::to_string(s.value("at_ms", int64_t{0})) + " ms";
    at.resize(std::max<size_t>(at.size(), 10), ' ');
    out << "    " << term.Dim(at) << " ";
    PrintHead(out, s, term);
    if (s.contains("why")) out << "  " << s.value("why", "");
    out << "\n";
    for (const Json& d : s.value("details", Json::array())) {
      if (d.is_array() && d.size() == 2) PrintDetail(out, d[0].get<std::string>(), d[1].get<std::string>(), term);
    }
  }
  out << "    " << term.Cyan("reins:") << " " << Indented(turn.value("reply", ""), "           ") << "\n";
}

}  // namespace reins
