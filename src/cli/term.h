// Terminal styling: colour only when stdout is a TTY and NO_COLOR is not set.
#pragma once

#include <string>

namespace reins {

class Term {
 public:
  // Detects colour support for stdout.
  static Term ForStdout();
  explicit Term(bool color) : color_(color) {}

  std::string Green(const std::string& s) const { return Wrap("32", s); }
  std::string Red(const std::string& s) const { return Wrap("31", s); }
  std::string Yellow(const std::string& s) const { return Wrap("33", s); }
  std::string Cyan(const std::string& s) const { return Wrap("36", s); }
  std::string Dim(const std::string& s) const { return Wrap("2", s); }
  std::string Bold(const std::string& s) const { return Wrap("1", s); }
  bool color() const { return color_; }

 private:
  std::string Wrap(const char* code, const std::string& s) const {
    return color_ ? "\033[" + std::string(code) + "m" + s + "\033[0m" : s;
  }
  bool color_;
};

}  // namespace reins
