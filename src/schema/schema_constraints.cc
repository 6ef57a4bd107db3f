// The constraints declared in schema_constraints.h: 'pattern' and 'format' on RE2, whose
// matching takes linear time without recursion (std::regex, which valijson uses, recurses
// once per input character and overflows the stack on long strings), and a 'multipleOf'
// that is exact for fractions and huge numbers. Also the ECMA 262 -> RE2 translation.
#include "schema/schema_constraints.h"

// valijson reports errors by throwing only when this is set; otherwise it prints and
// calls abort(). Every reins file that includes valijson (this one and
// schema_validator.cc) sets it first, so the setting is uniform.
#ifndef VALIJSON_USE_EXCEPTIONS
#define VALIJSON_USE_EXCEPTIONS 1
#endif

#include <re2/re2.h>

#include <valijson/constraint_builder.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reins/json.h"

namespace reins::schema_internal {

namespace {

using valijson::adapters::Adapter;

// JSON Schema patterns are ECMA 262; RE2 spells two common constructs differently:
// \uXXXX is \x{XXXX} and (?<name>...) is (?P<name>...). Lookarounds and
// backreferences have no RE2 form and fail to compile.
std::string EcmaToRe2(const std::string& pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == 'u' && i + 5 < pattern.size() &&
          std::all_of(pattern.begin() + i + 2, pattern.begin() + i + 6,
                      [](unsigned char h) { return std::isxdigit(h) != 0; })) {
        out += "\\x{" + pattern.substr(i + 2, 4) + "}";
        i += 5;
      } else {
        out += pattern.substr(i++, 2);
      }
    } else if (!in_class && pattern.compare(i, 3, "(?<") == 0 && i + 3 < pattern.size() &&
               pattern[i + 3] != '=' && pattern[i + 3] != '!') {
      out += "(?P<";
      i += 2;
    } else {
      in_class = c == '[' ? true : c == ']' ? false : in_class;
      out += c;
    }
  }
  return out;
}

// Gives a PolyConstraint the clone boilerplate valijson needs to copy it.
template <typename Derived>
class CloneablePoly : public valijson::constraints::PolyConstraint {
 private:
  Constraint* cloneInto(void* memory) const override {
    return new (memory) Derived(static_cast<const Derived&>(*this));
  }
  size_t sizeOf() const override { return sizeof(Derived); }
};

// 'pattern': an unanchored search, as JSON Schema specifies.
class Re2PatternConstraint final : public CloneablePoly<Re2PatternConstraint> {
 public:
  explicit Re2PatternConstraint(const std::string& pattern) : pattern_(pattern), re_(CompileRe2(pattern)) {}

  bool validate(const Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isString()) return true;
    if (RE2::PartialMatch(target.asString(), *re_)) return true;
    if (results) results->pushError(context, "String does not match pattern '" + pattern_ + "'.");
    return false;
  }

 private:
  std::string pattern_;
  std::shared_ptr<const RE2> re_;  // shared by valijson's copies of the constraint
};

// 'format': date, time and date-time are checked (RFC 3339, as valijson does, on RE2);
// other formats are annotations only, as draft 7 allows.
class Re2FormatConstraint final : public CloneablePoly<Re2FormatConstraint> {
 public:
  explicit Re2FormatConstraint(std::string format) : format_(std::move(format)) {}

  bool validate(const Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isString() || Matches(target.asString())) return true;
    if (results) results->pushError(context, "String should be a valid " + format_ + ".");
    return false;
  }

 private:
  bool Matches(const std::string& s) const {
    static const RE2 kDate(R"(([0-9]{4})-(0[1-9]|1[012])-(0[1-9]|[12][0-9]|3[01]))");
    static const RE2 kTime(R"(([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?)"
                           R"(([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))");
    int year = 0;
    int month = 0;
    int day = 0;
    if (format_ == "date") return RE2::FullMatch(s, kDate, &year, &month, &day) && DayFits(year, month, day);
    if (format_ == "time") return RE2::FullMatch(s, kTime);
    if (format_ == "date-time") {
      size_t t = s.find_first_of("Tt");
      return t != std::string::npos && RE2::FullMatch(s.substr(0, t), kDate, &year, &month, &day) &&
             DayFits(year, month, day) && RE2::FullMatch(s.substr(t + 1), kTime);
    }
    return true;
  }

  static bool DayFits(int year, int month, int day) {
    static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    return day <= kDays[month - 1] + (month == 2 && leap ? 1 : 0);
  }

  std::string format_;
};

// 'multipleOf': valijson truncates 4.5 to 4 against an integer divisor (so 4.5 would
// be a multiple of 2), and casts huge doubles to int64 (undefined behaviour).
class MultipleOfConstraint final : public CloneablePoly<MultipleOfConstraint> {
 public:
  // `divisor` is a number > 0 (MultipleOfBuilder checks).
  explicit MultipleOfConstraint(const Adapter& divisor)
      : divisor_(divisor.getNumber()), int_divisor_(divisor.isInteger() ? divisor.getInteger() : 0) {}

  bool validate(const Adapter& target, const std::vector<std::string>& context,
                valijson::ValidationResults* results) const override {
    if (!target.isNumber() || Divides(target)) return true;
    if (results) {
      Json divisor = int_divisor_ > 0 ? Json(int_divisor_) : Json(divisor_);
      results->pushError(context, "Value should be a multiple of " + divisor.dump() + ".");
    }
    return false;
  }

 private:
  bool Divides(const Adapter& target) const {
    // int_divisor_ is 0 for a fraction and negative for a uint64 past INT64_MAX.
    if (int_divisor_ > 0 && target.isInteger()) return target.getInteger() % int_divisor_ == 0;
    double quotient = target.getNumber() / divisor_;
    return std::isfinite(quotient) && std::abs(quotient - std::round(quotient)) < 1e-9;
  }

  double divisor_;
  std::int64_t int_divisor_;
};

class MultipleOfBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& node) const override {
    if (!node.isNumber() || !(node.getNumber() > 0)) {
      throw std::runtime_error("'multipleOf' must be a number greater than 0");
    }
    return new MultipleOfConstraint(node);
  }
};

class Re2PatternBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& node) const override {
    if (!node.isString()) throw std::runtime_error("'pattern' must be a string");
    return new Re2PatternConstraint(node.asString());
  }
};

class Re2FormatBuilder final : public valijson::ConstraintBuilder {
 public:
  valijson::constraints::Constraint* make(const Adapter& node) const override {
    if (!node.isString()) throw std::runtime_error("'format' must be a string");
    return new Re2FormatConstraint(node.asString());
  }
};

}  // namespace

std::shared_ptr<const RE2> CompileRe2(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<const RE2>(EcmaToRe2(pattern), options);
  if (!re->ok()) {
    throw std::runtime_error("'pattern' " + pattern + " is not supported: " + re->error());
  }
  return re;
}

void AddReplacementConstraints(valijson::SchemaParser& parser) {
  parser.addConstraintBuilder(kPatternKeyword, new Re2PatternBuilder());
  parser.addConstraintBuilder(kFormatKeyword, new Re2FormatBuilder());
  parser.addConstraintBuilder(kMultipleOfKeyword, new MultipleOfBuilder());
}

}  // namespace reins::schema_internal
