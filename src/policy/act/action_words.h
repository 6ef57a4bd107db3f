// The words ActionReader (action_talk.h) reads a sentence against, shared by its files:
// each tool's verbs and objects (action_words.cc builds them from its name, title,
// description and input schema), what the person's request asks for
// (action_request.cc), and the stems both are compared by.
#pragma once

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

#include "domain/text.h"
#include "policy/act/action_talk.h"

namespace reins {

namespace action_words {

using Stems = std::vector<std::string>;  // word stems, in order

// Words too common in tool descriptions to tell one tool from another (as stems).
bool IsPlainWord(const std::string& stem);
// Two stems name the same thing: equal, or one a short extension of the other
// ("pray" and "prayer", "visit" and "visitor").
bool SameStem(const std::string& a, const std::string& b);
bool HasStem(const Stems& stems, const std::string& stem);
// A noun's stem, its possessive aside: "week's" names the week.
std::string NounStem(std::string_view w);
Stems StemsOf(const std::vector<std::string>& words, size_t from = 0);
// "e-mail" (the verb and the noun) as one word, "email", the way the synonyms and most
// tools' words spell it.
std::string OneWordEmail(std::string_view text);

}  // namespace action_words

struct ActionReader::Tool {
  using Stems = action_words::Stems;
  const ToolDef* def = nullptr;
  std::set<std::string> own_verbs;       // stems: from its name, description and title
  std::set<std::string> verbs;           // stems, with every verb of their groups
  std::map<std::string, double> objects;  // stem -> weight (1 / how many tools share it)
  std::set<std::string> title_words;     // the title's distinctive stems
  std::string lower_name, lower_title;
  bool identifier_name = false;  // "lookup_contacts", "webSearch": can be told from plain words
  std::vector<std::unique_ptr<RE2>> claims;
  bool writes = false;

  // `exact`: the stems themselves, not a short extension of one ("even" of "evening"
  // is not "event").
  double ObjectWeight(const Stems& stems, bool exact = false) const {
    double total = 0;
    for (const auto& [object, weight] : objects) {
      if (exact ? std::find(stems.begin(), stems.end(), object) != stems.end() : action_words::HasStem(stems, object)) total += weight;
    }
    return total;
  }
  bool TitleIn(const Stems& stems) const {
    return std::any_of(title_words.begin(), title_words.end(), [&](const std::string& t) { return action_words::HasStem(stems, t); });
  }
  // A word of its title that no other tool's words share ("removal" of "channel removal",
  // where "channel" names six tools' objects), as that very stem.
  bool OwnTitleWordIn(const Stems& stems) const {
    return std::any_of(title_words.begin(), title_words.end(), [&](const std::string& t) {
      auto it = objects.find(t);
      return it != objects.end() && it->second >= 1 && std::find(stems.begin(), stems.end(), t) != stems.end();
    });
  }
  bool ClaimsMatch(const std::string& text) const {
    return std::any_of(claims.begin(), claims.end(), [&](const auto& re) { return RE2::PartialMatch(text, *re); });
  }
  bool NamedIn(const std::string& lower) const {
    if (!identifier_name) return false;
    for (size_t at = lower.find(lower_name); at != std::string::npos; at = lower.find(lower_name, at + 1)) {
      auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
      if ((at == 0 || !word(lower[at - 1])) && (at + lower_name.size() == lower.size() || !word(lower[at + lower_name.size()]))) {
        return true;
      }
    }
    return false;
  }
};

// What the person asked for, read once per reply.
struct ActionReader::Request {
  std::string text, lower;
  action_words::Stems all;            // every stem of a clause they did not negate
  action_words::Stems verbs;          // stems where a request puts its verb
  action_words::Stems asked_objects;  // stems of clauses phrased as a request
};

}  // namespace reins
