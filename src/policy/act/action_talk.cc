#include "policy/act/action_talk.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <re2/re2.h>

#include "domain/text.h"
#include "policy/act/speech.h"

namespace reins {

using namespace speech;

namespace {

using Stems = std::vector<std::string>;  // word stems, in order

// Words too common in tool descriptions to tell one tool from another (as stems).
bool IsPlainWord(const std::string& stem) {
  static const std::set<std::string> kPlain = [] {
    std::set<std::string> out;
    for (const char* w : {"request", "information", "info", "details", "user", "someone", "person", "people", "their",
                          "about", "which", "there", "these", "those", "other", "short", "whole", "some", "with", "from",
                          "into", "this", "that", "what", "when", "where", "while", "them", "they", "your", "thing",
                          "result", "results", "returns", "top", "may"}) {
      out.insert(Stem(w));
    }
    return out;
  }();
  return kPlain.count(stem) > 0;
}

// Two stems name the same thing: equal, or one a short extension of the other
// ("pray" and "prayer", "visit" and "visitor").
bool SameStem(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const std::string& shorter = a.size() < b.size() ? a : b;
  const std::string& longer = a.size() < b.size() ? b : a;
  return shorter.size() >= 4 && longer.size() - shorter.size() <= 2 && longer.compare(0, shorter.size(), shorter) == 0;
}

bool HasStem(const Stems& stems, const std::string& stem) {
  return std::any_of(stems.begin(), stems.end(), [&](const std::string& s) { return SameStem(s, stem); });
}

Stems StemsOf(const std::vector<std::string>& words, size_t from = 0) {
  Stems out;
  for (size_t i = from; i < words.size(); ++i) {
    const std::string& w = words[i];
    out.push_back(Stem(w.ends_with("'s") ? std::string_view(w).substr(0, w.size() - 2) : std::string_view(w)));
  }
  return out;
}

// "e-mail" (the verb and the noun) as one word, "email", the way the synonyms and most
// tools' words spell it.
std::string OneWordEmail(std::string_view text) {
  std::string out(text);
  for (size_t at = 0; (at = AsciiLower(out).find("e-mail", at)) != std::string::npos;) out.erase(at + 1, 1);
  return out;
}

}  // namespace

std::string_view ActionModeName(ActionMode mode) {
  switch (mode) {
    case ActionMode::kAnnounce: return "announce";
    case ActionMode::kProgress: return "progress";
    case ActionMode::kClaim: return "claim";
    case ActionMode::kNamed: return "named";
    case ActionMode::kGeneric: return "generic";
    case ActionMode::kResult: return "result";
  }
  return "announce";
}

struct ActionReader::Tool {
  const ToolDef* def = nullptr;
  std::set<std::string> own_verbs;       // stems: from its name, description and title
  std::set<std::string> verbs;           // stems, with every verb of their groups
  std::map<std::string, double> objects;  // stem -> weight (1 / how many tools share it)
  std::set<std::string> title_words;     // the title's distinctive stems
  std::string lower_name, lower_title;
  bool identifier_name = false;  // "lookup_contacts", "webSearch": can be told from plain words
  std::vector<std::unique_ptr<RE2>> claims;
  bool writes = false;

  bool OwnVerbIn(const Stems& stems) const {
    return std::any_of(stems.begin(), stems.end(), [&](const std::string& s) { return own_verbs.count(s) > 0; });
  }
  bool VerbIn(const Stems& stems) const {
    return std::any_of(stems.begin(), stems.end(), [&](const std::string& s) { return verbs.count(s) > 0; });
  }
  // `exact`: the stems themselves, not a short extension of one ("even" of "evening"
  // is not "event").
  double ObjectWeight(const Stems& stems, bool exact = false) const {
    double total = 0;
    for (const auto& [object, weight] : objects) {
      if (exact ? std::find(stems.begin(), stems.end(), object) != stems.end() : HasStem(stems, object)) total += weight;
    }
    return total;
  }
  bool TitleIn(const Stems& stems) const {
    return std::any_of(title_words.begin(), title_words.end(), [&](const std::string& t) { return HasStem(stems, t); });
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

ActionReader::ActionReader(const std::vector<ToolDef>& tools) {
  std::map<std::string, int> shared;
  for (const ToolDef& def : tools) {
    Tool t;
    t.def = &def;
    t.lower_name = AsciiLower(def.name);
    t.lower_title = AsciiLower(def.title);
    t.identifier_name = std::any_of(def.name.begin() + (def.name.empty() ? 0 : 1), def.name.end(), [](char c) {
      return c == '_' || c == '.' || c == '-' || std::isupper(static_cast<unsigned char>(c));
    });
    t.writes = !def.annotations.value("readOnlyHint", false);
    for (const std::string& p : def.claims) {
      auto re = std::make_unique<RE2>(p, RE2::Quiet);
      if (re->ok()) t.claims.push_back(std::move(re));
    }
    std::set<std::string> own_verbs, objects;
    std::vector<std::string> name = IdentifierWords(def.name);
    for (size_t i = 0; i < name.size(); ++i) {
      const std::string s = Stem(name[i]);
      if (i == 0 && IsActionVerb(s)) own_verbs.insert(s);
      else if (s.size() >= 4) objects.insert(s);
    }
    // "Records a prayer request for the prayer team": the description's first word is
    // its verb when it reads like one, its longer words what it acts on.
    std::vector<std::string> description = Words(def.description);
    size_t first_object = 0;
    if (!description.empty() && description.front().ends_with("s") && description.front().size() > 3) {
      own_verbs.insert(Stem(description.front()));
      if (description.size() > 1 && description[1] == "up") first_object = 2;  // "Looks up"
      else first_object = 1;
    }
    for (size_t i = first_object; i < description.size(); ++i) {
      if (description[i].size() >= 4) objects.insert(Stem(description[i]));
    }
    for (const std::string& w : Words(def.title)) {
      const std::string s = Stem(w);
      if (w.ends_with("ing") && IsActionVerb(s)) {
        own_verbs.insert(s);  // "message sending"
      } else if (w.size() >= 4 && !IsPlainWord(s)) {
        objects.insert(s);
        t.title_words.insert(s);
      }
    }
    t.own_verbs = own_verbs;
    for (const std::string& v : own_verbs) {
      t.verbs.insert(v);
      if (auto it = Synonyms().find(v); it != Synonyms().end()) t.verbs.insert(it->second.begin(), it->second.end());
    }
    for (const std::string& o : objects) {
      if (IsPlainWord(o) || own_verbs.count(o) > 0) continue;
      t.objects[o] = 1.0;
      ++shared[o];
    }
    tools_.push_back(std::move(t));
  }
  for (Tool& t : tools_) {
    for (auto& [object, weight] : t.objects) weight = 1.0 / shared[object];
  }
}

ActionReader::~ActionReader() = default;

// What the person asked for, read once per reply.
struct ActionReader::Request {
  std::string text, lower;
  Stems all;            // every stem of a clause they did not negate
  Stems verbs;          // stems where a request puts its verb
  Stems asked_objects;  // stems of clauses phrased as a request
};

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
        if (VerbPosition(w, i) && !AsksToBeTold(w, i)) r.verbs.push_back(stems[i]);
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
    if (t.ObjectWeight(r.all, strict) > 0) return true;
    const bool shared = std::any_of(tools_.begin(), tools_.end(), [&](const Tool& o) { return &o != &t && o.verbs.count(v) > 0; });
    if (!shared) return true;
  }
  for (const auto& [object, weight] : t.objects) {
    if (weight < 1) continue;
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
    const bool verb = std::any_of(r.verbs.begin(), r.verbs.end(), [&](const std::string& v) { return t->verbs.count(v) > 0; });
    double score = (t->NamedIn(r.lower) ? 100 : 0) + (t->ClaimsMatch(r.text) ? 50 : 0) + (t->TitleIn(r.all) ? 5 : 0) +
                   (verb ? 2 : 0) + t->ObjectWeight(r.all);
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

// The tool one clause talks about doing, and how; nullptr when none. `rest`: the
// sentence's later clauses, where the action's objects may be named ("I've shared your
// request with our pastors, and they'll hold your marriage in prayer"). `plan_step`: the
// clause is a step of a plan the reply announced ("Here's what I'll do: - Grab ...").
const ActionReader::Tool* ActionReader::ToolOf(const Request& r, const std::string& clause, const std::string& rest,
                                               bool plan_step, ActionMode& mode) const {
  std::vector<std::string> w = WithoutPleasantries(Words(clause));
  if (w.empty()) return nullptr;
  const std::string lower = AsciiLower(clause);
  std::optional<Marker> marker = FindMarker(w);
  if (!marker && plan_step && IsActionVerb(Stem(w.front()))) marker = Marker{ActionMode::kAnnounce, 0, 0};
  if (NegatedBefore(w, marker ? marker->verb : w.size())) return nullptr;
  // By its name ("I'll use lookup_contacts"), or by one of its claim patterns.
  for (const Tool& t : tools_) {
    if (t.NamedIn(lower) && (marker || HasPhrase(w, {"using"}) || HasPhrase(w, {"use"}) || HasPhrase(w, {"used"}))) {
      mode = ActionMode::kNamed;
      return &t;
    }
  }
  for (const Tool& t : tools_) {
    if (t.ClaimsMatch(clause)) {
      mode = marker ? marker->mode : ActionMode::kClaim;
      return &t;
    }
  }
  // "All set!", "I've taken care of that": the request says which.
  if (IsGeneric(w)) {
    // A write only when the request used one of its verbs, or named it by its title and
    // used no other action's verb: "All set!" after "Send the report to my team" is no
    // claim of saving it; after "Could you pray for us?" it claims the prayer request.
    std::vector<const Tool*> all;
    for (const Tool& t : tools_) {
      const bool own_verb =
          std::any_of(r.verbs.begin(), r.verbs.end(), [&](const std::string& v) { return t.verbs.count(v) > 0; });
      const bool other_verb = std::any_of(r.verbs.begin(), r.verbs.end(), [&](const std::string& v) { return IsActionVerb(v); });
      if (!t.writes || own_verb || (!other_verb && t.TitleIn(r.all))) all.push_back(&t);
    }
    if (const Tool* t = FromRequest(r, all)) {
      mode = ActionMode::kGeneric;
      return t;
    }
  }
  if (!marker) return nullptr;
  mode = marker->mode;
  // Each tool's fit: its own verb (3) or a verb of the same action (1), twice the weight
  // of its objects named, 100 for its whole title. A verb of the same action alone fits
  // when it acts on nothing named ("Let me look that up"); "a", "the", "some" after it
  // name something that may be another thing ("I'll set a sleep timer").
  const size_t until = std::min(marker->until, w.size());
  Stems stems = StemsOf(std::vector<std::string>(w.begin(), w.begin() + static_cast<long>(until)), marker->from);
  if (marker->until == std::string::npos) {
    Stems later = StemsOf(Words(rest));
    stems.insert(stems.end(), later.begin(), later.end());
  }
  const std::string verb = marker->verb < w.size() && marker->until == std::string::npos ? Stem(w[marker->verb]) : "";
  const bool something_else =
      std::any_of(w.begin() + static_cast<long>(std::min(marker->verb + 1, w.size())), w.end(), [](const std::string& x) {
        return OneOf({"a", "an", "the", "some", "my", "our", "his", "their", "any", "another", "every", "all"}, x);
      });
  double best = 0;
  std::vector<const Tool*> by_verb, tied;
  for (const Tool& t : tools_) {
    const bool own = !verb.empty() && t.own_verbs.count(verb) > 0;
    const bool synonym = own || (!verb.empty() && t.verbs.count(verb) > 0);
    const double objects = t.ObjectWeight(stems);
    const bool title = t.lower_title.find(' ') != std::string::npos && lower.find(t.lower_title) != std::string::npos;
    if (synonym) by_verb.push_back(&t);
    double score = 0;
    if (title) score = 100;
    else if (synonym && objects > 0) score = (own ? 3 : 1) + 2 * objects;
    else if (own || (synonym && !something_else)) score = own ? 3 : 1;
    else if (marker->mode == ActionMode::kClaim && objects >= 1) score = 2 * objects;
    // A result names no action of its own ("has", "will be ready"): any object of a
    // tool counts, and the request settles a tie.
    else if (marker->mode == ActionMode::kResult && objects > 0) score = 2 * objects;
    if (score <= 0 || score < best) continue;
    if (score > best) tied.clear();
    best = score;
    tied.push_back(&t);
  }
  if (tied.size() == 1) return tied.front();
  // Several fit as well: the request says which ("Let me check that" after "When is the
  // service?").
  if (tied.size() > 1) return FromRequest(r, tied);
  if (by_verb.size() > 1) return FromRequest(r, by_verb);
  // The one tool with that verb, acting on something the tool's words do not name:
  // a read, or a write the person asked for ("Queuing up some smooth jazz").
  if (by_verb.size() == 1 && (!by_verb.front()->writes || Requested(r, *by_verb.front()))) return by_verb.front();
  return nullptr;
}

std::vector<ActionTalk> ActionReader::Read(std::string_view user_text, std::string_view reply) const {
  const Request request = ReadRequest(user_text);
  std::vector<ActionTalk> out;
  bool in_plan = false;  // after "Here's what I'll do:", lines are the plan's steps
  for (const std::string& piece : Sentences(reply)) {
    const std::string sentence = Trim(piece);
    if (sentence.empty()) continue;
    const bool step = in_plan;
    if (sentence.back() == ':') {
      const std::vector<std::string> w = Words(sentence);
      in_plan = HasPhrase(w, {"i'll", "do"}) || HasPhrase(w, {"my", "plan"}) || HasPhrase(w, {"i'll"}) || HasPhrase(w, {"next", "steps"});
    }
    if (IsQuestion(sentence) || Conditional(WithoutPleasantries(Words(sentence)))) continue;
    const std::vector<std::string> clauses = Clauses(sentence);
    for (size_t i = 0; i < clauses.size(); ++i) {
      // "... so you can approve them": what someone else may then do
      const std::vector<std::string> cw = Words(clauses[i]);
      if (i > 0 && cw.size() > 1 && OneOf({"you", "they", "he", "she", "we", "i"}, cw[0]) &&
          OneOf({"can", "could", "may", "might", "will", "would"}, cw[1])) {
        continue;
      }
      std::string rest;
      for (size_t j = i + 1; j < clauses.size(); ++j) rest += clauses[j] + " ";
      ActionMode mode = ActionMode::kAnnounce;
      if (const Tool* t = ToolOf(request, clauses[i], rest, step, mode)) {
        out.push_back(ActionTalk{t->def->name, mode, sentence, t->writes, Requested(request, *t)});
        break;
      }
    }
  }
  return out;
}

std::optional<ActionTalk> ActionReader::UnmadeCall(std::string_view user_text, std::string_view reply,
                                                   const std::vector<std::string>& ran) const {
  std::optional<ActionTalk> generic;
  for (ActionTalk& talk : Read(user_text, reply)) {
    if (std::find(ran.begin(), ran.end(), talk.tool) != ran.end()) continue;
    if (talk.writes && !talk.requested) continue;  // the request, not the model's words, authorises a write
    // A claim that names the action wins over "All set!" elsewhere in the reply.
    if (talk.mode != ActionMode::kGeneric) return std::move(talk);
    if (!generic) generic = std::move(talk);
  }
  return generic;
}

bool ActionReader::Asks(std::string_view user_text, std::string_view tool) const {
  auto it = std::find_if(tools_.begin(), tools_.end(), [&](const Tool& t) { return t.def->name == tool; });
  return it != tools_.end() && Requested(ReadRequest(user_text), *it, /*strict=*/true);
}

}  // namespace reins
