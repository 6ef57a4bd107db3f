#include "policy/act/action_words.h"

#include "policy/act/speech.h"

namespace reins {

using namespace speech;
using namespace action_words;

namespace {

// One of the request's verbs is among `verbs` (a tool's, with their groups).
bool UsesVerbOf(const Stems& request_verbs, const std::set<std::string>& verbs) {
  return std::any_of(request_verbs.begin(), request_verbs.end(), [&](const std::string& v) { return verbs.count(v) > 0; });
}

}  // namespace

// A tool other than `t` has the verb `v`.
bool ActionReader::OtherHasVerb(const Tool& t, const std::string& v) const {
  return std::any_of(tools_.begin(), tools_.end(), [&](const Tool& o) { return &o != &t && o.verbs.count(v) > 0; });
}

ActionReader::Request ActionReader::ReadRequest(std::string_view user_text) const {
  const std::string text = OneWordEmail(user_text);
  Request r{text, AsciiLower(text), {}, {}, {}};
  for (const std::string& sentence : Sentences(text)) {
    for (const std::string& clause : Clauses(sentence)) {
      std::vector<std::string> w = WithoutPleasantries(Words(clause));
      size_t first_verb = 0;
      while (first_verb < w.size() && !IsActionVerb(Stem(w[first_verb]))) ++first_verb;
      if (NegatedBefore(w, first_verb)) continue;  // "Don't send it yet"
      Stems stems = StemsOf(w);
      for (size_t i = 0; i < w.size(); ++i) {
        if (VerbPosition(w, i) && !AsksToBeTold(w, i)) r.verbs.push_back(ActionOf(w, i));
      }
      if (RequestForm(w) || (!w.empty() && IsActionVerb(stems[0]))) {
        r.asked_objects.insert(r.asked_objects.end(), stems.begin(), stems.end());
      }
      r.all.insert(r.all.end(), stems.begin(), stems.end());
    }
  }
  return r;
}

// Whether the person asked for `t`'s action: by its name, a claim pattern or its title's
// words; by one of its verbs where a request puts one, with one of its objects or no
// other tool sharing that verb; or by naming its distinctive object in a request.
// `strict`: a title word counts only when no other tool's words share it (as "removal"
// of "channel removal", where "channel" is six tools' object), and words match as the
// very stems.
bool ActionReader::Requested(const Request& r, const Tool& t, bool strict) const {
  if (t.NamedIn(r.lower) || t.ClaimsMatch(r.text)) return true;
  if (strict ? t.OwnTitleWordIn(r.all) : t.TitleIn(r.all)) return true;
  for (const std::string& v : r.verbs) {
    if (t.verbs.count(v) == 0) continue;
    // Strictly, a verb other tools share asks for this one only with its object.
    if (!strict || t.ObjectWeight(r.all, strict) > 0 || !OtherHasVerb(t, v)) return true;
  }
  // Read widely, an object two tools share counts ("Could the church help with our
  // bill?" asks the benevolence team and the care team alike), unless the request
  // used another tool's verb ("Find John's contact" asks no message sent to John).
  const bool others_verb = std::any_of(r.verbs.begin(), r.verbs.end(),
                                       [&](const std::string& v) { return t.verbs.count(v) == 0 && OtherHasVerb(t, v); });
  const double least = strict || others_verb ? 1 : 0.5;
  for (const auto& [object, weight] : t.objects) {
    if (weight < least) continue;
    const Stems& asked = r.asked_objects;
    if (strict ? std::find(asked.begin(), asked.end(), object) != asked.end() : HasStem(asked, object)) return true;
  }
  return false;
}

// The tool the request itself is about, among `candidates`: the one clear best.
const ActionReader::Tool* ActionReader::FromRequest(const Request& r, const std::vector<const Tool*>& candidates) const {
  const Tool* best = nullptr;
  double best_score = 0, second = 0;
  for (const Tool* t : candidates) {
    double score = (t->NamedIn(r.lower) ? 100 : 0) + (t->ClaimsMatch(r.text) ? 50 : 0) + (t->TitleIn(r.all) ? 5 : 0) +
                   (UsesVerbOf(r.verbs, t->verbs) ? 2 : 0) + t->ObjectWeight(r.all);
    if (score > best_score) {
      second = best_score;
      best_score = score;
      best = t;
    } else if (score > second) {
      second = score;
    }
  }
  return best_score >= 2 && best_score > second ? best : nullptr;
}

// The tool a claim that names no action is about: the one the request clearly asks for.
// A write only when the request used one of its verbs, or named it by its title and used
// no other action's verb: "All set!" after "Send the report to my team" is no claim of
// saving it; after "Could you pray for us?" it claims the prayer request.
const ActionReader::Tool* ActionReader::Unnamed(const Request& r) const {
  const bool any_action = std::any_of(r.verbs.begin(), r.verbs.end(), [](const std::string& v) { return IsActionVerb(v); });
  std::vector<const Tool*> all;
  for (const Tool& t : tools_) {
    if (!t.writes || UsesVerbOf(r.verbs, t.verbs) || (!any_action && t.TitleIn(r.all))) all.push_back(&t);
  }
  return FromRequest(r, all);
}

bool ActionReader::Asks(std::string_view user_text, std::string_view tool) const {
  auto it = std::find_if(tools_.begin(), tools_.end(), [&](const Tool& t) { return t.def->name == tool; });
  return it != tools_.end() && Requested(ReadRequest(user_text), *it, /*strict=*/true);
}

}  // namespace reins
