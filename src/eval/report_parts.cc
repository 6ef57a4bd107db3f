#include "eval/report_parts.h"

#include <cstdio>

namespace reins {

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
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string SeedOf(const Json& scenario) {
  for (const Json& t : scenario.value("tags", Json::array())) {
    if (t.is_string() && t.get<std::string>().rfind("seed-", 0) == 0) return t.get<std::string>();
  }
  return "other";
}

const Json* FindMode(const Json& report, const std::string& governor) {
  auto modes = report.find("modes");
  if (modes == report.end() || !modes->is_array()) return nullptr;
  for (const Json& m : *modes) {
    if (m.value("governor", "") == governor) return &m;
  }
  return nullptr;
}

}  // namespace reins
