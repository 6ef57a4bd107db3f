// docs/trace.md as a contract: its table names every trace event type and the fields
// of its `data`, as include/reins/trace.h declares them. Tests that run turns hand their
// events to ExpectDocumented, so a test that makes the code emit a field the header or
// the doc does not list fails, naming what to add. Set REINS_TRACE_DOC_DUMP=FILE to append every (type, field) seen instead
// of failing, one per line, when writing the doc.
#pragma once

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "domain/json_text.h"
#include "reins/trace.h"

namespace reins::testing {

// Every `backticked` identifier in `text`.
inline std::set<std::string> BacktickedNames(const std::string& text) {
  static const std::regex name("`([A-Za-z_][A-Za-z0-9_]*)`");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it) {
    out.insert((*it)[1].str());
  }
  return out;
}

// Event type -> the field names its row lists (every `backticked` identifier in the
// data column; values such as `auto` are listed there too, which is harmless). A row
// that says "the call fields" gets the names of the paragraph defining them.
inline const std::map<std::string, std::set<std::string>>& DocumentedTraceEvents() {
  static const std::map<std::string, std::set<std::string>> kDoc = [] {
    std::map<std::string, std::set<std::string>> doc;
    std::ifstream in(std::string(REINS_SOURCE_DIR) + "/docs/trace.md");
    const std::regex row(R"(^\| `([a-z_.]+)` \|(.*)\|\s*$)");
    std::set<std::string> call_fields;
    std::string line, paragraph;
    while (std::getline(in, line)) {
      if (line.starts_with("\"The call fields\"")) paragraph = " ";
      if (!paragraph.empty()) {
        if (line.empty()) {
          call_fields = BacktickedNames(paragraph);
          paragraph.clear();
        } else {
          paragraph += line + " ";
        }
      }
      std::smatch m;
      if (!std::regex_match(line, m, row)) continue;
      std::set<std::string>& fields = doc[m[1].str()];
      fields = BacktickedNames(m[2].str());
      if (m[2].str().find("the call fields") != std::string::npos) fields.insert(call_fields.begin(), call_fields.end());
    }
    return doc;
  }();
  return kDoc;
}

// The fields include/reins/trace.h declares for `type`.
inline std::set<std::string> DeclaredFields(EventType type) {
  std::set<std::string> out;
  std::istringstream words{std::string(SpecOf(type).fields)};
  for (std::string w; words >> w;) out.insert(w);
  return out;
}

inline void ExpectDocumented(const std::vector<TraceEvent>& events) {
  static const char* dump = std::getenv("REINS_TRACE_DOC_DUMP");
  const auto& doc = DocumentedTraceEvents();
  ASSERT_FALSE(doc.empty()) << "docs/trace.md has no event table";
  for (const TraceEvent& e : events) {
    const std::string type(e.name());
    const Json data = e.data.json();
    if (dump != nullptr) {
      std::ofstream out(dump, std::ios::app);
      out << type << "\n";
      for (const auto& item : data.items()) out << type << " " << item.key() << "\n";
      continue;
    }
    // An event written member by member (EventData::FromText) reads as the DOM would
    // write it: compact, members in the order of their keys.
    EXPECT_EQ(e.data.text(), JsonText(data)) << "trace event '" << type << "' is not written as its DOM writes it";
    auto row = doc.find(type);
    if (e.type == EventType::kUnknown || row == doc.end()) {
      ADD_FAILURE() << "trace event '" << type << "' is not in docs/trace.md: " << e.data.text();
      continue;
    }
    const std::set<std::string> declared = DeclaredFields(e.type);
    for (const auto& item : data.items()) {
      EXPECT_TRUE(declared.contains(item.key()))
          << "field '" << item.key() << "' of trace event '" << type << "' is not declared in include/reins/trace.h";
      EXPECT_TRUE(row->second.contains(item.key()))
          << "field '" << item.key() << "' of trace event '" << type << "' is not in docs/trace.md";
    }
  }
}

}  // namespace reins::testing
