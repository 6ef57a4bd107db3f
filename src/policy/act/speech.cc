#include "policy/act/speech.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "domain/text.h"

namespace reins::speech {

bool OneOf(std::initializer_list<std::string_view> set, std::string_view word) {
  return std::find(set.begin(), set.end(), word) != set.end();
}

// Verbs that name the same action, as plain words (stemmed once, below): a tool whose
// own verb (from its name, description or title) is a key here also does what the
// key's synonyms say. "Sends a short text message" is also texted, messaged, told. The
// map is one way on purpose: a tool that tells the care team is not thereby a texter.
const std::map<std::string, std::set<std::string>>& Synonyms() {
  static const std::map<std::string, std::set<std::string>> kSynonyms = [] {
    const std::vector<std::pair<std::vector<const char*>, std::vector<const char*>>> table = {
        {{"send"},
         {"text", "message", "forward", "email", "ping", "shoot", "drop", "deliver", "tell", "let", "remind", "ask", "pay",
          "transfer", "wire", "reply", "respond", "notify", "inform"}},
        {{"post", "publish"}, {"post", "publish", "send", "reply", "respond", "share"}},
        {{"update", "change", "modify", "edit"}, {"update", "change", "modify", "edit", "adjust", "amend", "correct", "move"}},
        {{"append"}, {"add", "attach", "insert"}},
        {{"find", "look", "lookup", "search"},
         {"find", "look", "lookup", "search", "check", "retrieve", "locate", "query", "scan", "hunt", "pull", "grab", "see",
          "research"}},
        {{"get"}, {"find", "look", "check", "pull", "grab", "see", "fetch", "lookup"}},
        {{"fetch"}, {"read", "open", "load", "grab", "get", "pull"}},
        {{"submit", "record", "log"},
         {"submit", "record", "log", "add", "save", "file", "register", "enter", "pass", "put", "share", "send", "forward",
          "apply"}},
        {{"save", "capture"}, {"save", "capture", "record", "store", "keep", "add", "note", "log"}},
        {{"book", "schedule", "reserve"}, {"book", "schedule", "arrange", "reserve", "set", "rent", "hire", "grab"}},
        {{"play"}, {"queue", "put", "spin", "throw"}},
        {{"set"}, {"turn", "raise", "lower", "adjust", "bump", "crank", "change", "increase", "decrease", "boost", "mute", "bring"}},
        {{"ask", "request"}, {"ask", "request", "arrange", "have", "get", "pass", "let", "tell", "send", "put", "call"}},
        {{"tell", "alert", "flag", "notify", "inform"},
         {"tell", "alert", "flag", "notify", "inform", "escalate", "let", "pass", "reach", "forward", "send", "share"}},
        {{"start"}, {"begin", "kick", "launch", "initiate", "open"}},
        {{"sign"}, {"register", "enroll", "add", "put", "join"}},
        {{"draft"}, {"write", "prepare", "compose"}},
        {{"analyze", "analyse"}, {"examine", "inspect", "investigate", "dig", "diagnose", "check", "look", "pull", "run"}},
        {{"compare"}, {"diff", "contrast", "check"}},
        {{"display", "show"}, {"display", "show", "confirm", "present", "bring", "put", "check"}},
        {{"list"}, {"show", "pull", "count", "get", "grab", "check"}},
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

namespace {

// Verbs whose particle, right after them or after their object, says the action: a
// text is sent when it is fired off, a playlist started when it is fired up.
struct Phrasal {
  std::string_view verb, particle, action;
};
constexpr Phrasal kPhrasal[] = {
    {"fire", "off", "send"},         {"write", "to", "send"},          {"write", "back", "send"},
    {"fire", "up", "start"},         {"spin", "up", "start"},          {"kick", "off", "start"},
    {"put", "together", "draft"},    {"dig", "up", "find"},            {"go", "through", "check"},
    {"line", "against", "compare"},  {"stack", "against", "compare"},  {"take", "down", "set"},
    {"take", "up", "set"},           {"crank", "up", "set"},           {"crank", "down", "set"},
    {"bring", "down", "set"},        {"knock", "down", "set"},
};

// "go" is no action by itself ("I'm going to send it").
bool IsPhrasalHead(const std::string& stem) {
  static const std::set<std::string, std::less<>> kHeads = [] {
    std::set<std::string, std::less<>> out;
    for (const Phrasal& p : kPhrasal) {
      if (p.verb != "go") out.insert(Stem(p.verb));
    }
    return out;
  }();
  return kHeads.count(stem) > 0;
}

// Every verb of the synonym table, keys and synonyms, made once.
bool KnownVerb(std::string_view stem) {
  static const std::set<std::string, std::less<>> kVerbs = [] {
    std::set<std::string, std::less<>> out;
    for (const auto& [key, synonyms] : Synonyms()) {
      out.insert(key);
      out.insert(synonyms.begin(), synonyms.end());
    }
    return out;
  }();
  return kVerbs.find(stem) != kVerbs.end();
}

// "resend", "resubmit": the action again ("request", "record" are no re-anything).
bool Again(std::string_view stem) { return stem.size() > 5 && stem.starts_with("re") && KnownVerb(stem.substr(2)); }

}  // namespace

// A word some tool's action may be called by.
bool IsActionVerb(const std::string& stem) { return KnownVerb(stem) || IsPhrasalHead(stem) || Again(stem); }

std::string ActionOf(const std::vector<std::string>& w, size_t verb) {
  if (verb >= w.size()) return "";
  std::string stem = Stem(w[verb]);
  if (!KnownVerb(stem) && Again(stem)) stem.erase(0, 2);
  // "taking a look", "have a quick look": the look
  if (OneOf({"take", "have", "give"}, stem)) {
    for (size_t j = verb + 1; j < w.size() && j <= verb + 3; ++j) {
      if (w[j] == "look") return Stem("look");
    }
  }
  // "run an analysis", "do a quick search": the action the noun names
  if (OneOf({"run", "do", "perform", "start"}, stem)) {
    for (size_t j = verb + 1; j < w.size() && j <= verb + 3; ++j) {
      if (w[j] == "analysis") return Stem("analyze");
      if (w[j] == "comparison") return Stem("compare");
      if (OneOf({"search", "check", "scan", "lookup"}, w[j])) return Stem(w[j]);
    }
  }
  // The table's verbs and actions as stems, made once.
  static const std::vector<std::array<std::string, 3>> kStemmed = [] {
    std::vector<std::array<std::string, 3>> out;
    for (const Phrasal& p : kPhrasal) out.push_back({Stem(p.verb), std::string(p.particle), Stem(p.action)});
    return out;
  }();
  for (const auto& [head, particle, action] : kStemmed) {
    if (head != stem) continue;
    for (size_t j = verb + 1; j < w.size() && j <= verb + 3; ++j) {
      if (w[j] == particle) return action;
    }
  }
  // "give you a call", "give her a ring": the call
  if (w[verb] == "ring" || w[verb] == "buzz") return Stem("call");
  return stem;
}

std::string Trim(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r\n*-#>");
  if (a == std::string_view::npos) return "";
  return std::string(s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1));
}

// Ends with a question mark, emoji, quotes and brackets aside.
// A question in quotes at the end is what the reply quotes ("I've sent Jane: \"Can you
// grab milk?\"").
bool IsQuestion(std::string_view sentence) {
  bool quoted = false;
  for (size_t i = sentence.size(); i-- > 0;) {
    const unsigned char c = static_cast<unsigned char>(sentence[i]);
    if (c == '?') return !quoted;
    if (std::isalnum(c) || c == '.' || c == '!') return false;
    if (c == '"' || (c == 0x9D && i >= 2 && sentence.substr(i - 2, 3) == "\xE2\x80\x9D")) quoted = true;  // " or U+201D
  }
  return false;
}

bool IsNegation(std::string_view w) {
  if (w.ends_with("'s")) w.remove_suffix(2);  // "nothing's been saved"
  return OneOf({"not", "never", "no", "cannot", "unable", "nothing", "nobody", "none", "neither", "nor", "without", "wont",
                "cant", "dont", "didnt", "havent", "hasnt", "couldnt", "isnt", "wasnt"},
               w) ||
         w.ends_with("n't");
}

// Words with "no problem" and the like taken out: they negate nothing.
std::vector<std::string> WithoutPleasantries(std::vector<std::string> words) {
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if ((words[i] == "no" && OneOf({"problem", "worries", "worry", "trouble", "rush"}, words[i + 1])) ||
        (words[i] == "not" && words[i + 1] == "a" && i + 2 < words.size() && words[i + 2] == "problem")) {
      words.erase(words.begin() + static_cast<long>(i), words.begin() + static_cast<long>(i) + (words[i] == "not" ? 3 : 2));
      --i;
    }
  }
  return words;
}

bool HasPhrase(const std::vector<std::string>& w, std::initializer_list<std::string_view> seq) {
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
  if (OneOf({"if", "once", "when", "whenever", "after", "before", "until", "unless", "whether", "would", "should", "could",
          "can", "shall", "do", "does", "did", "may", "might", "want", "feel"},
         w.front())) {
    return true;
  }
  if ((w.front() == "happy" || w.front() == "glad") && w.size() > 1 && w[1] == "to") return true;
  // "Give me its id and I'll take a look": what the person gives first
  if (OneOf({"give", "send", "tell", "share", "provide", "pick", "choose", "confirm"}, w.front()) &&
      (HasPhrase(w, {"and", "i'll"}) || HasPhrase(w, {"and", "we'll"}))) {
    return true;
  }
  for (size_t i = 0; i < w.size(); ++i) {
    // "if needed" and "if so" are manners of speaking, not conditions
    if (w[i] == "if" && i + 1 < w.size() && OneOf({"needed", "necessary", "required", "so", "possible"}, w[i + 1])) continue;
    if (w[i] == "if" && (i == 0 || !OneOf({"see", "check", "out", "confirm", "verify", "look", "checking", "seeing", "ask",
                                         "asking", "wondering", "know"},
                                        w[i - 1]))) {
      return true;
    }
    // "...so I can tell them": a purpose, not an offer
    if (OneOf({"i", "we"}, w[i]) && i + 1 < w.size() && OneOf({"can", "could"}, w[i + 1]) &&
        (i == 0 || !OneOf({"so", "that"}, w[i - 1]))) {
      return true;
    }
    if (OneOf({"unless", "whenever"}, w[i])) return true;
    // "..., once you've checked the numbers, I'll save it"; not "at once", "once again"
    if (w[i] == "once" && i > 0 && w[i - 1] != "at" && !(i + 1 < w.size() && OneOf({"again", "more"}, w[i + 1]))) return true;
  }
  for (auto seq : {std::initializer_list<std::string_view>{"once", "you"}, {"once", "i"}, {"when", "you"}, {"as", "soon", "as"},
                   {"after", "you"}, {"i'd", "be"},
                   {"i", "would"}, {"i'd", "love"}, {"happy", "to"}, {"glad", "to"}, {"want", "me"}, {"like", "me"},
                   {"need", "me"}, {"let", "me", "know"}, {"let", "us", "know"}, {"say", "the", "word"}, {"feel", "free"},
                   {"ready", "to"}, {"i", "may"}, {"i", "might"}, {"should", "i"}, {"shall", "i"}, {"can", "i"},
                   {"would", "you"}, {"could", "you"}, {"can", "you"}, {"do", "you", "want"}, {"just", "say"},
                   {"just", "tell", "me"}, {"i", "can't"}, {"up", "to", "you"}, {"i", "want", "to"},
                   {"to", "make", "sure"}}) {
    if (HasPhrase(w, seq)) return true;
  }
  return false;
}

namespace {

// An -ing form of an action's verb: "searching", "pulling".
bool IsActionIng(const std::string& w) { return w.size() > 5 && w.ends_with("ing") && IsActionVerb(Stem(w)); }

}  // namespace

bool IsPast(std::string_view w) {
  return IsIrregularPast(w) || w == "used" || (w.ends_with("ed") && w.size() >= 5 && !OneOf({"indeed", "speed", "needed"}, w));
}

namespace {

bool IsFiller(std::string_view w) {
  return OneOf({"just", "quickly", "go", "ahead", "and", "now", "also", "first", "right", "then", "gladly", "happily",
             "immediately", "be", "try", "to", "definitely", "certainly", "make", "sure", "quick", "personally", "straight",
             "actually", "already", "successfully", "officially", "all", "currently", "gone", "went"},
            w);
}

// The verb of an announced action: the first word after the marker that is not a filler
// ("I'll just go ahead and send"). "Get you signed up", "have it sent": the participle.
size_t VerbAfter(const std::vector<std::string>& w, size_t from) {
  size_t v = from;
  while (v < w.size() && IsFiller(w[v]) && !(w[v] == "go" && v + 1 < w.size() && w[v + 1] == "through")) ++v;
  // "I'll start by researching...": what it starts with
  if (v + 2 < w.size() && w[v] == "start" && w[v + 1] == "by" && w[v + 2].ends_with("ing")) return v + 2;
  // "take a closer look", "have a quick look", "give you a call": the look, the call
  if (v < w.size() && OneOf({"take", "have", "give"}, w[v])) {
    for (size_t j = v + 1; j < w.size() && j <= v + 3; ++j) {
      if (OneOf({"look", "call", "ring", "buzz"}, w[j])) return j;
    }
  }
  if (v < w.size() && OneOf({"get", "have"}, w[v])) {
    for (size_t j = v + 1; j < w.size() && j <= v + 3; ++j) {
      if (IsPast(w[j])) return j;
    }
  }
  return v;
}

bool IsPronoun(std::string_view w) {
  return OneOf({"i", "we", "you", "he", "she", "they", "it", "that", "this", "i've", "we've", "ive", "you're", "you've",
             "it's", "that's", "they're", "he's", "she's", "we're", "i'm", "i'll", "i'd", "we'll", "all", "just", "now",
             "so", "and", "but", "then", "okay", "ok", "sure", "got", "yes", "great", "perfect", "done", "here"},
            w);
}

}  // namespace

std::optional<Marker> FindMarker(const std::vector<std::string>& w) {
  if (w.empty()) return std::nullopt;
  auto announce = [&](size_t from) { return Marker{ActionMode::kAnnounce, from, VerbAfter(w, from)}; };
  // "Searching for flights now.", "Pulling that up!"; "Looking forward to it" is no look
  for (size_t i = 0; i < w.size() && i < 3; ++i) {
    if (IsActionIng(w[i]) && !(w[i] == "looking" && i + 1 < w.size() && w[i + 1] == "forward")) {
      return Marker{ActionMode::kProgress, i, i};
    }
    if (!OneOf({"now", "just", "currently", "still", "okay", "ok", "sure"}, w[i])) break;
  }
  // "Saved!", "Sent to Jane.", "Booked for Tuesday."
  if (w[0] != "got" && IsPast(w[0]) && IsActionVerb(Stem(w[0])) &&
      (w.size() == 1 || OneOf({"to", "for", "and", "it", "that"}, w[1]))) {
    return Marker{ActionMode::kClaim, 0, 0};
  }
  // "Volume's at 30 now", "Party mode's on": the subject is the result
  if (w.size() >= 2 && w[0].ends_with("'s") && !IsPronoun(w[0]) &&
      !OneOf({"here's", "there's", "what's", "who's", "let's"}, w[0]) && OneOf({"at", "on", "now", "up", "down"}, w[1])) {
    return Marker{ActionMode::kClaim, 0, 0, 1};
  }
  // "Message sent to Jane.", "Triage started for node-05."
  if (w.size() >= 2 && !IsPronoun(w[0]) && w[0].find('\'') == std::string::npos && IsPast(w[1]) &&
      !OneOf({"got", "had", "did", "was", "were"}, w[1])) {
    return Marker{ActionMode::kClaim, 0, 1};
  }
  for (size_t i = 0; i < w.size(); ++i) {
    const std::string& a = w[i];
    const std::string b = i + 1 < w.size() ? w[i + 1] : "";
    const std::string c = i + 2 < w.size() ? w[i + 2] : "";
    if (OneOf({"i'll", "we'll"}, a)) return announce(i + 1);
    if (OneOf({"i", "we"}, a) && OneOf({"will", "shall"}, b)) return announce(i + 2);
    if (a == "let" && OneOf({"me", "us"}, b) && !OneOf({"know", "be"}, c)) return announce(i + 2);
    if (a == "let's" || a == "lemme") return announce(i + 1);
    if ((a == "going" || a == "about") && b == "to" && i > 0 && OneOf({"i'm", "am", "we're", "are", "im"}, w[i - 1])) {
      return announce(i + 2);
    }
    if (a == "gonna") return announce(i + 1);
    if (a == "allow" && b == "me") return announce(i + 2);
    if (a == "while" && OneOf({"i", "we"}, b)) return announce(i + 2);
    // "Give me a sec to pull up Sam's contact", "one moment to check"
    if (OneOf({"sec", "second", "moment", "minute", "mo"}, a) && b == "to") return announce(i + 2);
    if (OneOf({"i'm", "im", "we're"}, a) || (OneOf({"i", "we"}, a) && OneOf({"am", "are"}, b))) {
      // "I'm checking", "I'm now pulling up", "I am just looking"
      const size_t start = i + (a == "i" || a == "we" ? 2 : 1);
      for (size_t j = start; j < w.size() && j < start + 3; ++j) {
        if (IsActionIng(w[j]) && !(w[j] == "looking" && j + 1 < w.size() && w[j + 1] == "forward")) {
          return Marker{ActionMode::kProgress, j, j};
        }
        if (!IsFiller(w[j]) && w[j] != "busy") break;
      }
    }
    // "I've let Jo know", "we have put in": the perfect's verb, whatever its form
    if (OneOf({"i've", "we've", "ive"}, a) || (OneOf({"i", "we"}, a) && b == "have")) {
      for (size_t j = i + (a == "i" || a == "we" ? 2 : 1); j < w.size() && j < i + 5; ++j) {
        if (IsFiller(w[j])) continue;
        if (OneOf({"got", "been", "a", "no", "not"}, w[j])) break;
        return Marker{ActionMode::kClaim, j, j};
      }
    }
    // "Your request is in", "your note is now with the team", "Party mix is on": what
    // the subject names was done (the subject alone says which tool).
    if (i > 0 && OneOf({"is", "are"}, a) &&
        (OneOf({"in", "on", "with", "live", "queued", "playing", "through", "rolling", "running", "underway"}, b) ||
         (b == "now" && OneOf({"in", "on", "with"}, c)))) {
      // "... is now with our benevolence team": the rest names who has it, and so the tool
      const bool with = b == "with" || c == "with";
      return Marker{ActionMode::kClaim, 0, i, with ? std::string::npos : i};
    }
    // Someone else holds the result: "The pharmacy has your refill", "Jo got your
    // message", "they have your request". The clause's objects say which tool.
    if (i > 0 && OneOf({"has", "have", "got", "received"}, a) && OneOf({"your", "the", "our", "my", "his", "her"}, b) &&
        !OneOf({"i", "we", "you", "i've", "we've", "ive", "you've", "to", "do", "does", "did", "will", "would", "can",
                "could", "should", "may", "might", "must", "not", "never"},
               w[i - 1])) {
      return Marker{ActionMode::kResult, 0, i};
    }
    // Someone else's future, or the result's: "it will be ready today", "your refill
    // should be waiting", "the pharmacist will call you", "they'll send it over". The
    // first person's own future is an announcement (above); "you will" is the person's.
    const bool third_future = (OneOf({"will", "should", "shall"}, a) && i > 0 &&
                               !OneOf({"i", "we", "you", "it's", "that", "what", "how", "when", "who"}, w[i - 1])) ||
                              (a.ends_with("'ll") && !OneOf({"i'll", "we'll", "you'll", "that'll"}, a));
    if (third_future) {
      size_t v = i + 1;
      while (v < w.size() && OneOf({"now", "also", "soon", "shortly", "then", "all", "definitely", "certainly"}, w[v])) ++v;
      if (v + 1 < w.size() && w[v] == "be" &&
          (IsPast(w[v + 1]) || OneOf({"ready", "done", "waiting", "available", "there", "on", "through", "in", "with",
                                      "set", "underway", "processed", "sorted"},
                                     w[v + 1]))) {
        return Marker{ActionMode::kResult, 0, v + 1};
      }
      // "will be calling you"
      if (v + 1 < w.size() && w[v] == "be" && IsActionIng(w[v + 1])) return Marker{ActionMode::kResult, 0, v + 1};
      v = VerbAfter(w, v);
      // "will start landing in your inbox": the -ing names the action
      if (v + 1 < w.size() && OneOf({"start", "begin", "keep"}, w[v]) && w[v + 1].ends_with("ing")) ++v;
      if (v < w.size() && IsActionVerb(ActionOf(w, v))) return Marker{ActionMode::kResult, 0, v};
    }
    // "I've sent", "I just booked", "you're all booked", "it has been submitted"; "did"
    // is an auxiliary ("I did not send it"), not an action
    if (IsPast(a) && a != "did") {
      for (size_t j = i; j-- > 0 && i - j <= 5;) {
        const std::string& x = w[j];
        if (OneOf({"i", "we", "i've", "we've", "ive"}, x)) return Marker{ActionMode::kClaim, i, i};
        // "before anything is saved": nothing done
        if (j > 0 && OneOf({"anything", "nothing", "something", "everything"}, w[j - 1])) break;
        if ((OneOf({"has", "have", "is", "are", "was", "were", "been"}, x) || (x.ends_with("'s") && x != "let's") ||
             x.ends_with("'re")) &&
            (j + 1 == i || IsFiller(w[j + 1]) || w[j + 1] == "been")) {
          return Marker{ActionMode::kClaim, i, i};
        }
        if (!IsFiller(x) && !OneOf({"have", "had", "been"}, x)) break;
      }
    }
  }
  return std::nullopt;
}

// "I've taken care of that", "You're all set!", "Done!", "Consider it handled": a claim
// or promise that names no action; the person's request says which.
bool IsGeneric(const std::vector<std::string>& w) {
  if (w.empty()) return false;
  if (w.size() <= 2 && OneOf({"done", "sorted", "handled", "finished"}, w.front())) return true;
  if (w.size() == 2 && w[0] == "on" && w[1] == "it") return true;
  for (auto seq : {std::initializer_list<std::string_view>{"taken", "care"}, {"take", "care", "of", "that"},
                   {"take", "care", "of", "it"}, {"took", "care"}, {"all", "set"}, {"all", "done"}, {"it's", "done"},
                   {"is", "done"}, {"consider", "it"}, {"been", "handled"}, {"is", "handled"}, {"i'm", "on", "it"},
                   {"got", "it", "done"}, {"been", "sorted"}, {"is", "sorted"}, {"it's", "handled"},
                   {"that's", "handled"}, {"that's", "done"}, {"on", "its", "way"}, {"on", "their", "way"},
                   {"on", "the", "way"}, {"coming", "right", "up"}, {"coming", "up"}, {"here", "comes"}}) {
    if (HasPhrase(w, seq)) return true;
  }
  return false;
}

bool IsBareAcknowledgement(const std::vector<std::string>& w) {
  return w.size() == 3 && HasPhrase(w, {"you", "got", "it"});
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
  return i == 0 || OneOf({"please", "pls", "you", "someone", "somebody", "me", "i", "we", "to", "and", "just", "u", "hey",
                          "hi", "ok", "okay", "can", "could", "would"},
                         w[i - 1]);
}

bool AsksToBeTold(const std::vector<std::string>& w, size_t i) {
  return OneOf({"tell", "let", "show"}, w[i]) && i + 1 < w.size() && OneOf({"me", "us"}, w[i + 1]);
}

bool RequestForm(const std::vector<std::string>& w) {
  return std::any_of(w.begin(), w.end(), [](const std::string& x) {
    return OneOf({"please", "pls", "can", "could", "would", "will", "want", "need", "like", "let's", "help"}, x);
  });
}


}  // namespace reins::speech
