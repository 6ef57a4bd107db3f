#include "domain/typed_answer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "domain/text.h"

namespace reins {
namespace {

// Lower-case words of letters and digits (any non-ASCII byte counts as a letter, so a
// UTF-8 name stays whole): "Maria Garcia (born 2 November 1991)" -> maria garcia born 2
// november 1991.
std::vector<std::string> Tokens(std::string_view s) {
  std::vector<std::string> out;
  std::string word;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80) {
      word += static_cast<char>(std::tolower(u));
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// "2", "#2", "option 2", "number 2", "2nd", "second", "the second one" -> 2; 0 otherwise.
size_t Ordinal(const std::vector<std::string>& words) {
  static constexpr std::array<std::string_view, 10> kWords = {"first", "second", "third",  "fourth", "fifth",
                                                              "sixth", "seventh", "eighth", "ninth",  "tenth"};
  static const std::set<std::string_view> kFiller = {"the", "one", "option", "number", "no", "choice", "please"};
  size_t found = 0;
  for (const std::string& w : words) {
    if (kFiller.count(w)) continue;
    size_t n = 0;
    if (auto it = std::find(kWords.begin(), kWords.end(), w); it != kWords.end()) {
      n = static_cast<size_t>(it - kWords.begin()) + 1;
    } else {
      const size_t digits = w.find_first_not_of("0123456789");
      const std::string_view rest = digits == std::string::npos ? "" : std::string_view(w).substr(digits);
      if (digits == 0 || w.size() - rest.size() > 3) return 0;
      if (!rest.empty() && rest != "st" && rest != "nd" && rest != "rd" && rest != "th") return 0;
      n = std::stoul(w.substr(0, w.size() - rest.size()));
    }
    if (found != 0 || n == 0) return 0;  // two numbers, or 0: not one choice
    found = n;
  }
  return found;
}

// Words that turn an answer around ("not the 1991 one"): such an answer is not read as
// a choice by its parts.
bool Negates(const std::vector<std::string>& words) {
  static const std::set<std::string_view> kNot = {"not", "no", "don", "dont", "isn", "never", "neither", "nor", "other", "except", "but"};
  return std::any_of(words.begin(), words.end(), [](const std::string& w) { return kNot.count(w) > 0; });
}

// The options whose field `of` equals the answer, as words.
std::vector<size_t> Equal(const std::vector<ClarificationOption>& options, const std::string& answer,
                          std::string (*of)(const ClarificationOption&)) {
  std::vector<size_t> hits;
  for (size_t i = 0; i < options.size(); ++i) {
    if (Joined(Tokens(of(options[i]))) == answer) hits.push_back(i);
  }
  return hits;
}

OptionMatch From(const std::vector<size_t>& hits) {
  if (hits.size() == 1) return {OptionMatch::Kind::kOne, hits.front()};
  return {hits.empty() ? OptionMatch::Kind::kNone : OptionMatch::Kind::kSeveral, 0};
}

}  // namespace

std::string OptionLine(const ClarificationOption& option) {
  const std::string& title = option.title.empty() ? option.id : option.title;
  return option.subtitle.empty() ? title : title + " (" + option.subtitle + ")";
}

std::string NumberedOptions(const std::vector<ClarificationOption>& options) {
  std::string out;
  for (size_t i = 0; i < options.size(); ++i) {
    out += (i == 0 ? "" : "\n") + std::to_string(i + 1) + ". " + OptionLine(options[i]);
  }
  return out;
}

OptionMatch MatchOption(const std::vector<ClarificationOption>& options, std::string_view typed) {
  const std::string_view raw = TrimmedSpace(typed);
  const std::vector<std::string> words = Tokens(raw);
  if (words.empty() || options.empty()) return {};
  if (const size_t n = Ordinal(words); n != 0) {
    return n <= options.size() ? OptionMatch{OptionMatch::Kind::kOne, n - 1} : OptionMatch{};
  }
  for (size_t i = 0; i < options.size(); ++i) {
    if (EqualsNoCase(options[i].id, raw)) return {OptionMatch::Kind::kOne, i};
  }
  const std::string answer = Joined(words);
  // The line as displayed ("- Maria Garcia (born ...)" and "2. Maria ..." included: the
  // list marker is no word, the number is dropped only when the rest is the line).
  for (const std::vector<size_t>& hits :
       {Equal(options, answer, [](const ClarificationOption& o) { return OptionLine(o); }),
        Equal(options, Joined(std::vector<std::string>(words.begin() + 1, words.end())),
              [](const ClarificationOption& o) { return OptionLine(o); }),
        Equal(options, answer, [](const ClarificationOption& o) { return o.title; })}) {
    if (!hits.empty()) return From(hits);
  }
  if (Negates(words)) return {};
  // A part only one option has: some word of the answer appears in exactly that
  // option's line, and no word of it is another option's alone.
  std::vector<std::set<std::string>> lines;
  for (const ClarificationOption& o : options) {
    std::vector<std::string> t = Tokens(OptionLine(o) + " " + o.id);
    lines.emplace_back(t.begin(), t.end());
  }
  std::set<size_t> fits;
  for (const std::string& w : words) {
    std::vector<size_t> having;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].count(w)) having.push_back(i);
    }
    if (having.size() == 1) fits.insert(having.front());
  }
  return From(std::vector<size_t>(fits.begin(), fits.end()));
}

std::string AskAgain(const Clarification& clarification, const OptionMatch& match) {
  const std::string lead = match.kind == OptionMatch::Kind::kSeveral ? "That fits more than one of them."
                                                                     : "I could not tell which one you mean.";
  return lead + " " + clarification.question + " Answer with its number:";
}

std::optional<bool> TypedDecision(std::string_view answer) {
  static const std::set<std::string> kYes = {"yes", "y", "yes please", "approve", "approved", "ok", "okay", "go ahead",
                                             "yes go ahead", "sure", "do it", "confirm", "confirmed", "yep", "yeah"};
  static const std::set<std::string> kNo = {"no", "n", "no thanks", "deny", "denied", "don t", "dont", "do not",
                                            "cancel", "nope", "no don t", "stop", "reject"};
  const std::string words = Joined(Tokens(answer));
  if (kYes.count(words)) return true;
  if (kNo.count(words)) return false;
  return std::nullopt;
}

}  // namespace reins
