// What the report's forms share (eval_report.cc writes report.json, the text tables and
// JUnit; report_html.cc the page): number and text formatting, and reading a
// report.json back.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>
#include <tuple>

#include "reins/json.h"

namespace reins {

double Rate(int passed, int total);
std::string Percent(double rate);          // "97.5%"
std::string Escape(const std::string& s);  // for HTML and XML text and attributes

// The seed note a scenario reproduces: its `seed-NNN` tag, else "other".
std::string SeedOf(const Json& scenario);

// A report's mode by governor setting ("on", "off"); null when it did not run.
const Json* FindMode(const Json& report, const std::string& governor);

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

}  // namespace reins
