#include "policy/act/action_talk.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <re2/re2.h>

#include "domain/text.h"

namespace reins {
namespace {

using Stems = std::vector<std::string>;

bool In(std::initializer_list<std::string_view> set, std::string_view word) {
  return std::find(set.begin(), set.end(), word) != set.end();
}

// Verbs that name the same action, as plain words (stemmed once, below): a tool whose
// own verb (from its name, description or title) is a key here also does what the
// key's synonyms say. "Sends a short text message" is also texted, messaged, told. The
// map is one way on purpose: a tool that tells the care team is not thereby a texter.
const std::map<std::string, std::set<std::string>>& Synonyms() {
  static const std::map<std::string, std::set<std::string>> kSynonyms = [] {
    const std::vector<std::pair<std::vector<const char*>, std::vector<const char*>>> table = {
        {{"send"}, {"text", "message", "forward", "email", "ping", "shoot", "drop", "deliver", "tell", "let", "remind", "ask"}},
        {{"find", "look", "lookup", "search"},
         {"find", "look", "lookup", "search", "check", "retrieve", "locate", "query", "scan", "hunt", "pull", "grab", "see"}},
        {{"get"}, {"find", "look", "check", "pull", "grab", "see", "fetch", "lookup"}},
        {{"fetch"}, {"read", "open", "load", "grab", "get", "pull"}},
        {{"submit", "record", "log"},
         {"submit", "record", "log", "add", "save", "file", "register", "enter", "pass", "put", "share", "send", "forward",
          "apply"}},
        {{"save", "capture"}, {"save", "capture", "record", "store", "keep", "add", "note", "log"}},
        {{"book", "schedule"}, {"book", "schedule", "arrange", "reserve", "set"}},
        {{"play"}, {"queue", "put", "spin", "throw"}},
        {{"set"}, {"turn", "raise", "lower", "adjust", "bump", "crank", "change", "increase", "decrease", "boost", "mute", "bring"}},
        {{"ask", "request"}, {"ask", "request", "arrange", "have", "get", "pass", "let", "tell", "send", "put"}},
        {{"tell", "alert", "flag", "notify", "inform"},
         {"tell", "alert", "flag", "notify", "inform", "escalate", "let", "pass", "reach", "forward", "send", "share"}},
        {{"start"}, {"begin", "kick", "launch", "initiate", "open"}},
        {{"sign"}, {"register", "enroll", "add", "put", "join"}},
        {{"draft"}, {"write", "prepare", "compose"}},
        {{"analyze", "analyse"}, {"examine", "inspect", "investigate", "dig", "diagnose", "check", "look"}},
        {{"compare"}, {"diff", "contrast", "check"}},
        {{"display", "show"}, {"display", "show", "confirm", "present", "bring", "put", "check"}},
        {{"list"}, {"show", "pull", "count", "get"}},
        {{"summarize"}, {"save", "note", "record"}},
    };
    std::map<std::string, std::set<std::string>> out;
    for (const auto& [keys, synonyms] : table) {
      for (const char* key : keys) {
        for (const char* synonym : synonyms) out[Stem(key)].insert(Stem(synonym));
      }
    }
    return out;
  }();
  return kSynonyms;
}

// A word some tool's action may be called by.
bool IsActionVerb(const std::string& stem) {
  for (const auto& [key, synonyms] : Synonyms()) {
    if (key == stem || synonyms.count(stem) > 0) return true;
  }
  return false;
}

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

std::string Trim(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r\n*-#>");
  if (a == std::string_view::npos) return "";
  return std::string(s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1));
}

// Ends with a question mark, emoji, quotes and brackets aside.
bool IsQuestion(std::string_view sentence) {
  for (size_t i = sentence.size(); i-- > 0;) {
    const unsigned char c = static_cast<unsigned char>(sentence[i]);
    if (c == '?') return true;
    if (std::isalnum(c) || c == '.' || c == '!') return false;
  }
  return false;
}

bool IsNegation(std::string_view w) {
  return In({"not", "never", "no", "cannot", "unable", "nothing", "neither", "nor", "without", "wont", "cant", "dont",
             "didnt", "havent", "hasnt", "couldnt", "isnt", "wasnt"},
            w) ||
         w.ends_with("n't");
}

// Words with "no problem" and the like taken out: they negate nothing.
std::vector<std::string> WithoutPleasantries(std::vector<std::string> words) {
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if ((words[i] == "no" && In({"problem", "worries", "worry", "trouble", "rush"}, words[i + 1])) ||
        (words[i] == "not" && words[i + 1] == "a" && i + 2 < words.size() && words[i + 2] == "problem")) {
      words.erase(words.begin() + static_cast<long>(i), words.begin() + static_cast<long>(i) + (words[i] == "not" ? 3 : 2));
      --i;
    }
  }
  return words;
}

bool Has(const std::vector<std::string>& w, std::initializer_list<std::string_view> seq) {
  const size_t n = seq.size();
  for (size_t i = 0; i + n <= w.size(); ++i) {
    size_t k = 0;
    for (std::string_view s : seq) {
      if (w[i + k] != s) break;
      ++k;
    }
    if (k == n) return true;
  }
  return false;
}

// A condition, an offer or a question to the person: the sentence states no action.
// "I'll send it once you confirm", "I can add this to the prayer list", "Would you like
// me to book it", "Let me know if...". "Check if" and "see if" mean whether: no condition.
bool Conditional(const std::vector<std::string>& w) {
  if (w.empty()) return false;
  if (In({"if", "once", "when", "whenever", "after", "before", "until", "unless", "whether", "would", "should", "could",
          "can", "shall", "do", "does", "did", "may", "might", "want", "feel"},
         w.front())) {
    return true;
  }
  if ((w.front() == "happy" || w.front() == "glad") && w.size() > 1 && w[1] == "to") return true;
  for (size_t i = 0; i < w.size(); ++i) {
    // "if needed" and "if so" are manners of speaking, not conditions
    if (w[i] == "if" && i + 1 < w.size() && In({"needed", "necessary", "required", "so", "possible"}, w[i + 1])) continue;
    if (w[i] == "if" && (i == 0 || !In({"see", "check", "out", "confirm", "verify", "look", "checking", "seeing", "ask",
                                         "asking", "wondering", "know"},
                                        w[i - 1]))) {
      return true;
    }
    // "...so I can tell them": a purpose, not an offer
    if (In({"i", "we"}, w[i]) && i + 1 < w.size() && In({"can", "could"}, w[i + 1]) &&
        (i == 0 || !In({"so", "that"}, w[i - 1]))) {
      return true;
    }
    if (In({"unless", "whenever"}, w[i])) return true;
  }
  for (auto seq : {std::initializer_list<std::string_view>{"once", "you"}, {"once", "i"}, {"when", "you"}, {"as", "soon", "as"},
                   {"after", "you"}, {"i'd", "be"},
                   {"i", "would"}, {"i'd", "love"}, {"happy", "to"}, {"glad", "to"}, {"want", "me"}, {"like", "me"},
                   {"need", "me"}, {"let", "me", "know"}, {"let", "us", "know"}, {"say", "the", "word"}, {"feel", "free"},
                   {"ready", "to"}, {"i", "may"}, {"i", "might"}, {"should", "i"}, {"shall", "i"}, {"can", "i"},
                   {"would", "you"}, {"could", "you"}, {"can", "you"}, {"do", "you", "want"}, {"just", "say"},
                   {"just", "tell", "me"}, {"i", "can't"}, {"up", "to", "you"}}) {
    if (Has(w, seq)) return true;
  }
  return false;
}

// Stems of group verbs and of -ing words whose stem is one: "searching", "pulling".
bool IsActionIng(const std::string& w) { return w.size() > 5 && w.ends_with("ing") && IsActionVerb(Stem(w)); }

bool IsPast(std::string_view w) {
  return IsIrregularPast(w) || (w.ends_with("ed") && w.size() >= 5 && !In({"indeed", "speed", "needed"}, w));
}

// Where a clause says an action happens or happened: the mode, the first word of what
// it is about (objects are looked for from there), and the action's verb.
struct Marker {
  ActionMode mode;
  size_t from;
  size_t verb;
  size_t until = std::string::npos;  // objects only before this word ("Party mix | is on")
};

bool IsFiller(std::string_view w) {
  return In({"just", "quickly", "go", "ahead", "and", "now", "also", "first", "right", "then", "gladly", "happily",
             "immediately", "be", "try", "to", "definitely", "certainly", "make", "sure", "quick", "personally", "straight",
             "actually", "already", "successfully", "officially", "all", "currently", "gone", "went"},
            w);
}

// The verb of an announced action: the first word after the marker that is not a filler
// ("I'll just go ahead and send"). "Get you signed up", "have it sent": the participle.
size_t VerbAfter(const std::vector<std::string>& w, size_t from) {
  size_t v = from;
  while (v < w.size() && IsFiller(w[v])) ++v;
  // "take a closer look", "have a quick look": the look
  if (v < w.size() && In({"take", "have", "give"}, w[v])) {
    for (size_t j = v + 1; j < w.size() && j <= v + 3; ++j) {
      if (w[j] == "look") return j;
    }
  }
  if (v < w.size() && In({"get", "have"}, w[v])) {
    for (size_t j = v + 1; j < w.size() && j <= v + 3; ++j) {
      if (IsPast(w[j])) return j;
    }
  }
  return v;
}

bool IsPronoun(std::string_view w) {
  return In({"i", "we", "you", "he", "she", "they", "it", "that", "this", "i've", "we've", "ive", "you're", "you've",
             "it's", "that's", "they're", "he's", "she's", "we're", "i'm", "i'll", "i'd", "we'll", "all", "just", "now",
             "so", "and", "but", "then", "okay", "ok", "sure", "got", "yes", "great", "perfect", "done", "here"},
            w);
}

std::optional<Marker> FindMarker(const std::vector<std::string>& w) {
  if (w.empty()) return std::nullopt;
  auto announce = [&](size_t from) { return Marker{ActionMode::kAnnounce, from, VerbAfter(w, from)}; };
  // "Searching for flights now.", "Pulling that up!"
  for (size_t i = 0; i < w.size() && i < 3; ++i) {
    if (IsActionIng(w[i])) return Marker{ActionMode::kProgress, i, i};
    if (!In({"now", "just", "currently", "still", "okay", "ok", "sure"}, w[i])) break;
  }
  // "Message sent to Jane.", "Triage started for node-05."
  if (w.size() >= 2 && !IsPronoun(w[0]) && w[0].find('\'') == std::string::npos && IsPast(w[1])) {
    return Marker{ActionMode::kClaim, 0, 1};
  }
  for (size_t i = 0; i < w.size(); ++i) {
    const std::string& a = w[i];
    const std::string b = i + 1 < w.size() ? w[i + 1] : "";
    const std::string c = i + 2 < w.size() ? w[i + 2] : "";
    if (In({"i'll", "we'll"}, a)) return announce(i + 1);
    if (In({"i", "we"}, a) && In({"will", "shall"}, b)) return announce(i + 2);
    if (a == "let" && In({"me", "us"}, b) && !In({"know", "be"}, c)) return announce(i + 2);
    if (a == "let's") return announce(i + 1);
    if ((a == "going" || a == "about") && b == "to" && i > 0 && In({"i'm", "am", "we're", "are", "im"}, w[i - 1])) {
      return announce(i + 2);
    }
    if (a == "gonna") return announce(i + 1);
    if (a == "allow" && b == "me") return announce(i + 2);
    if (a == "while" && In({"i", "we"}, b)) return announce(i + 2);
    // "Give me a sec to pull up Sam's contact", "one moment to check"
    if (In({"sec", "second", "moment", "minute", "mo"}, a) && b == "to") return announce(i + 2);
    if (In({"i'm", "im", "we're"}, a) || (In({"i", "we"}, a) && In({"am", "are"}, b))) {
      // "I'm checking", "I'm now pulling up", "I am just looking"
      const size_t start = i + (a == "i" || a == "we" ? 2 : 1);
      for (size_t j = start; j < w.size() && j < start + 3; ++j) {
        if (IsActionIng(w[j])) return Marker{ActionMode::kProgress, j, j};
        if (!IsFiller(w[j]) && w[j] != "busy") break;
      }
    }
    // "I've let Jo know", "we have put in": the perfect's verb, whatever its form
    if (In({"i've", "we've", "ive"}, a) || (In({"i", "we"}, a) && b == "have")) {
      for (size_t j = i + (a == "i" || a == "we" ? 2 : 1); j < w.size() && j < i + 5; ++j) {
        if (IsFiller(w[j])) continue;
        if (In({"got", "been", "a", "no", "not"}, w[j])) break;
        return Marker{ActionMode::kClaim, j, j};
      }
    }
    // "Your request is in", "your note is now with the team", "Party mix is on": what
    // the subject names was done (the subject alone says which tool).
    if (i > 0 && In({"is", "are"}, a) &&
        (In({"in", "on", "with", "live", "queued", "playing", "through"}, b) || (b == "now" && In({"in", "on", "with"}, c)))) {
      // "... is now with our benevolence team": the rest names who has it, and so the tool
      const bool with = b == "with" || c == "with";
      return Marker{ActionMode::kClaim, 0, i, with ? std::string::npos : i};
    }
    // "I've sent", "I just booked", "you're all booked", "it has been submitted"; "did"
    // is an auxiliary ("I did not send it"), not an action
    if (IsPast(a) && a != "did") {
      for (size_t j = i; j-- > 0 && i - j <= 5;) {
        const std::string& x = w[j];
        if (In({"i", "we", "i've", "we've", "ive"}, x)) return Marker{ActionMode::kClaim, i, i};
        // "before anything is saved": nothing done
        if (j > 0 && In({"anything", "nothing", "something", "everything"}, w[j - 1])) break;
        if ((In({"has", "have", "is", "are", "was", "were", "been"}, x) || (x.ends_with("'s") && x != "let's") ||
             x.ends_with("'re")) &&
            (j + 1 == i || IsFiller(w[j + 1]) || w[j + 1] == "been")) {
          return Marker{ActionMode::kClaim, i, i};
        }
        if (!IsFiller(x) && !In({"have", "had", "been"}, x)) break;
      }
    }
  }
  return std::nullopt;
}

// "I've taken care of that", "You're all set!", "Done!", "Consider it handled": a claim
// or promise that names no action; the person's request says which.
bool IsGeneric(const std::vector<std::string>& w) {
  if (w.empty()) return false;
  if (w.size() <= 2 && In({"done", "sorted", "handled", "finished"}, w.front())) return true;
  if (w.size() == 2 && w[0] == "on" && w[1] == "it") return true;
  for (auto seq : {std::initializer_list<std::string_view>{"taken", "care"}, {"take", "care", "of", "that"},
                   {"take", "care", "of", "it"}, {"took", "care"}, {"all", "set"}, {"all", "done"}, {"it's", "done"},
                   {"is", "done"}, {"consider", "it"}, {"been", "handled"}, {"is", "handled"}, {"i'm", "on", "it"},
                   {"got", "it", "done"}, {"been", "sorted"}, {"is", "sorted"}, {"it's", "handled"},
                   {"that's", "handled"}, {"that's", "done"}, {"on", "its", "way"}, {"on", "their", "way"},
                   {"on", "the", "way"}, {"coming", "right", "up"}, {"coming", "up"}}) {
    if (Has(w, seq)) return true;
  }
  return false;
}

// The clauses of a sentence: a negation in one ("Don't worry, I'll send it now") does
// not reach the others.
std::vector<std::string> Clauses(const std::string& sentence) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (!Trim(cur).empty()) out.push_back(cur);
    cur.clear();
  };
  for (size_t i = 0; i < sentence.size(); ++i) {
    const char c = sentence[i];
    if (c == ',' || c == ';' || c == ':' || c == '(' || c == ')') {
      flush();
    } else if (sentence.compare(i, 3, "\xE2\x80\x94") == 0 || sentence.compare(i, 3, "\xE2\x80\x93") == 0) {
      flush();  // em and en dashes
      i += 2;
    } else if (c == ' ' && (sentence.compare(i, 5, " but ") == 0 || sentence.compare(i, 4, " so ") == 0)) {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
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
  double ObjectWeight(const Stems& stems) const {
    double total = 0;
    for (const auto& [object, weight] : objects) {
      if (HasStem(stems, object)) total += weight;
    }
    return total;
  }
  bool TitleIn(const Stems& stems) const {
    return std::any_of(title_words.begin(), title_words.end(), [&](const std::string& t) { return HasStem(stems, t); });
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

namespace {

// A clause is negated when a negation comes before its action: "I won't send it", "I
// haven't booked anything". One after it negates something else: "I'll let Jo know you
// can't make it".
bool NegatedBefore(const std::vector<std::string>& w, size_t verb) {
  for (size_t i = 0; i < w.size() && i <= verb; ++i) {
    if (IsNegation(w[i])) return true;
  }
  return false;
}

// Words where a request puts its verb: first ("Text Jane"), or after "please", "you",
// "someone", "me", "to" ("can you ping Kevin", "I'd like to sign up").
bool VerbPosition(const std::vector<std::string>& w, size_t i) {
  return i == 0 || In({"please", "pls", "you", "someone", "somebody", "me", "i", "we", "to", "and", "just", "u"}, w[i - 1]);
}

bool RequestForm(const std::vector<std::string>& w) {
  return std::any_of(w.begin(), w.end(), [](const std::string& x) {
    return In({"please", "pls", "can", "could", "would", "will", "want", "need", "like", "let's", "help"}, x);
  });
}

}  // namespace

// What the person asked for, read once per reply.
struct ActionReader::Request {
  std::string text, lower;
  Stems all;            // every stem of a clause they did not negate
  Stems verbs;          // stems where a request puts its verb
  Stems asked_objects;  // stems of clauses phrased as a request
};

ActionReader::Request ActionReader::ReadRequest(std::string_view user_text) const {
  Request r{std::string(user_text), AsciiLower(user_text), {}, {}, {}};
  for (const std::string& sentence : Sentences(user_text)) {
    for (const std::string& clause : Clauses(sentence)) {
      std::vector<std::string> w = WithoutPleasantries(Words(clause));
      size_t first_verb = 0;
      while (first_verb < w.size() && !IsActionVerb(Stem(w[first_verb]))) ++first_verb;
      if (NegatedBefore(w, first_verb)) continue;  // "Don't send it yet"
      Stems stems = StemsOf(w);
      for (size_t i = 0; i < w.size(); ++i) {
        if (VerbPosition(w, i)) r.verbs.push_back(stems[i]);
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
bool ActionReader::Requested(const Request& r, const Tool& t) const {
  if (t.NamedIn(r.lower) || t.ClaimsMatch(r.text) || t.TitleIn(r.all)) return true;
  for (const std::string& v : r.verbs) {
    if (t.verbs.count(v) == 0) continue;
    if (t.ObjectWeight(r.all) > 0) return true;
    const bool shared = std::any_of(tools_.begin(), tools_.end(), [&](const Tool& o) { return &o != &t && o.verbs.count(v) > 0; });
    if (!shared) return true;
  }
  for (const auto& [object, weight] : t.objects) {
    if (weight >= 1 && HasStem(r.asked_objects, object)) return true;
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
    if (t.NamedIn(lower) && (marker || Has(w, {"using"}) || Has(w, {"use"}) || Has(w, {"used"}))) {
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
        return In({"a", "an", "the", "some", "my", "our", "his", "their", "any", "another", "every", "all"}, x);
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
      in_plan = Has(w, {"i'll", "do"}) || Has(w, {"my", "plan"}) || Has(w, {"i'll"}) || Has(w, {"next", "steps"});
    }
    if (IsQuestion(sentence) || Conditional(WithoutPleasantries(Words(sentence)))) continue;
    const std::vector<std::string> clauses = Clauses(sentence);
    for (size_t i = 0; i < clauses.size(); ++i) {
      // "... so you can approve them": what someone else may then do
      const std::vector<std::string> cw = Words(clauses[i]);
      if (i > 0 && cw.size() > 1 && In({"you", "they", "he", "she", "we", "i"}, cw[0]) &&
          In({"can", "could", "may", "might", "will", "would"}, cw[1])) {
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

}  // namespace reins
