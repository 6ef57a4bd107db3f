#include "policy/act/action_talk.h"

#include <algorithm>

#include "domain/text.h"
#include "policy/act/action_words.h"
#include "policy/act/speech.h"

namespace reins {

using namespace speech;
using namespace action_words;

namespace {

// `reply` holds a call of `tool` written out as JSON: "name": "tool" (any spacing).
bool WritesCall(std::string_view reply, const std::string& tool) {
  for (size_t at = reply.find("\"name\""); at != std::string_view::npos; at = reply.find("\"name\"", at + 1)) {
    size_t i = at + 6;
    while (i < reply.size() && (reply[i] == ' ' || reply[i] == ':')) ++i;
    if (reply.compare(i, tool.size() + 2, "\"" + tool + "\"") == 0) return true;
  }
  return false;
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

// The tool one clause talks about doing, and how; nullptr when none. `rest`: the
// sentence's later clauses, where the action's objects may be named ("I've shared your
// request with our pastors, and they'll hold your marriage in prayer"). `plan_step`: the
// clause is a step of a plan the reply announced ("Here's what I'll do: - Grab ...").
// `whole`: the clause is the whole sentence ("You got it 👍", not "You got it — which
// John?").
const ActionReader::Tool* ActionReader::ToolOf(const Request& r, const std::string& clause, const std::string& rest,
                                               bool plan_step, bool whole, ActionMode& mode) const {
  std::vector<std::string> w = WithoutPleasantries(Words(clause));
  if (w.empty()) return nullptr;
  const std::string lower = AsciiLower(clause);
  std::optional<Marker> marker = FindMarker(w);
  if (!marker && plan_step && IsActionVerb(Stem(w.front()))) marker = Marker{ActionMode::kAnnounce, 0, 0};
  if (NegatedBefore(w, marker ? marker->verb : w.size())) return nullptr;
  // By its name ("I'll use lookup_contacts"), or by one of its claim patterns.
  for (const Tool& t : tools_) {
    if (!t.NamedIn(lower)) continue;
    const bool runs = marker || std::any_of(w.begin(), w.end(), [](const std::string& x) {
      return OneOf({"use", "using", "used", "run", "running", "call", "calling", "invoke", "invoking", "execute", "executing",
                    "trigger", "triggering"},
                   x);
    });
    if (runs) {
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
  if (IsGeneric(w) || (whole && IsBareAcknowledgement(w))) {
    if (const Tool* t = Unnamed(r)) {
      mode = ActionMode::kGeneric;
      return t;
    }
  }
  if (!marker) return nullptr;
  mode = marker->mode;
  // Each tool's fit: its own verb (3) or a verb of the same action (1), twice the weight
  // of its objects named, 100 for its whole title. A verb alone fits when it acts on
  // nothing named ("Let me look that up"); "a", "the", "some" after it name something
  // that may be another thing ("I'll set a sleep timer").
  const size_t until = std::min(marker->until, w.size());
  Stems stems = StemsOf(std::vector<std::string>(w.begin(), w.begin() + static_cast<long>(until)), marker->from);
  // The verb names the action, not what it acts on ("check" of a kids' check-in).
  if (marker->verb >= marker->from && marker->verb - marker->from < stems.size() && IsActionVerb(Stem(w[marker->verb]))) {
    stems.erase(stems.begin() + static_cast<long>(marker->verb - marker->from));
  }
  if (marker->until == std::string::npos) {
    Stems later = StemsOf(Words(rest));
    stems.insert(stems.end(), later.begin(), later.end());
  }
  const std::string verb = marker->until == std::string::npos ? ActionOf(w, marker->verb) : "";
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
    else if (synonym && !something_else) score = own ? 3 : 1;
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
  // Several share the verb, acting on something none of them names ("I'll add you to
  // the Facebook group"): only one whose object the request names.
  if (by_verb.size() > 1 && something_else) {
    std::erase_if(by_verb, [&](const Tool* t) { return t->ObjectWeight(r.all) == 0 && !t->TitleIn(r.all); });
  }
  if (by_verb.size() > 1) return FromRequest(r, by_verb);
  // The one tool with that verb, acting on something the tool's words do not name:
  // a read, or a write the person asked for ("Queuing up some smooth jazz").
  if (by_verb.size() == 1 && (!by_verb.front()->writes || Requested(r, *by_verb.front()))) return by_verb.front();
  // A verb that names no action of its own, and no tool of this agent's: as generic as
  // "On it" ("Grabbing that for you", "Let me find Hallelujah"; not "I'll schedule
  // that", another action). So is a claim whose subject names nothing ("Your request
  // is in").
  const bool plain_verb =
      by_verb.empty() && OneOf({"grab", "get", "handle", "sort", "fix", "find", "pull", "fetch", "search", "look"}, verb);
  const bool plain_subject =
      marker->mode == ActionMode::kClaim && marker->until != std::string::npos && marker->until > 0 &&
      std::all_of(w.begin(), w.begin() + static_cast<long>(std::min(marker->until, w.size())), [](const std::string& x) {
        return IsPlainWord(Stem(x)) || OneOf({"your", "my", "our", "the", "it", "that", "this", "everything", "all"}, x);
      });
  if (plain_verb || plain_subject) return Unnamed(r);  // in the marker's mode: "finding it" claims nothing done
  return nullptr;
}

// The tools one sentence speaks of doing, one entry each. `step`: the sentence is a step
// of a plan the reply announced.
std::vector<ActionTalk> ActionReader::ReadSentence(const Request& request, const std::string& sentence, bool step) const {
  const std::vector<std::string> clauses = Clauses(sentence);
  std::vector<std::vector<std::string>> words;  // each clause's, read once
  for (const std::string& c : clauses) words.push_back(Words(c));
  auto opens = [&](size_t i) -> std::string_view { return words[i].empty() ? "" : words[i].front(); };
  // "Before I save anything, I'll show you the confirmation": what comes first is
  // announced, not made to wait.
  const size_t first = clauses.size() > 1 && opens(0) == "before" ? 1 : 0;
  std::string said;
  for (size_t i = first; i < clauses.size(); ++i) said += clauses[i] + ", ";
  // A condition makes what is to come wait, not what is done: "Done — node-30 is in
  // the queue, and a ticket will open if the pings fail" still claims the triage. One
  // on the person ("if you'd like", "once you confirm") holds the whole sentence; one
  // on the world ("then triage it if it's offline") its own clause and what follows.
  const bool conditional = Conditional(WithoutPleasantries(Words(said)));
  std::vector<bool> condition(clauses.size(), false);  // the clause states a condition
  bool on_person = false;
  if (conditional) {
    bool in_a_clause = false;
    for (size_t i = first; i < clauses.size(); ++i) {
      const std::vector<std::string> cw = WithoutPleasantries(words[i]);
      condition[i] = Conditional(cw);
      if (!condition[i]) continue;
      in_a_clause = true;
      on_person = on_person || std::any_of(cw.begin(), cw.end(), [](const std::string& x) {
                    return OneOf({"you", "your", "you're", "you'd", "you'll", "you've", "me", "us"}, x);
                  });
    }
    on_person = on_person || !in_a_clause;
  }
  std::vector<ActionTalk> talks;  // one per tool the sentence's clauses speak of
  std::optional<ActionTalk> generic;
  bool generic_after_named = false;
  for (size_t i = first; i < clauses.size(); ++i) {
    // "... so you can approve them": what someone else may then do
    const std::vector<std::string>& cw = words[i];
    if (i > 0 && cw.size() > 1 && OneOf({"you", "they", "he", "she", "we", "i"}, cw[0]) &&
        OneOf({"can", "could", "may", "might", "will", "would"}, cw[1])) {
      continue;
    }
    // Later clauses may name the action's objects; a purpose ("so our team can reach
    // out") names what follows it.
    std::string rest;
    for (size_t j = i + 1; j < clauses.size() && !opens(j).empty() && opens(j) != "so"; ++j) rest += clauses[j] + " ";
    if (condition[i]) break;  // the condition and what follows it
    ActionMode mode = ActionMode::kAnnounce;
    const Tool* t = ToolOf(request, clauses[i], rest, step, clauses.size() == 1, mode);
    if (t != nullptr && on_person && mode != ActionMode::kClaim && mode != ActionMode::kGeneric) t = nullptr;
    if (t == nullptr) continue;
    ActionTalk talk{t->def->name, mode, sentence, t->writes, Requested(request, *t)};
    if (mode == ActionMode::kGeneric) {
      if (!generic) {
        generic = std::move(talk);
        generic_after_named = !talks.empty();
      }
    } else if (std::none_of(talks.begin(), talks.end(), [&](const ActionTalk& o) { return o.tool == talk.tool; })) {
      talks.push_back(std::move(talk));
    }
  }
  // "On it — let me find Marco first": the clause that names the action says what "On
  // it" was about; "Volume's at 70, and here comes Uptown Funk" speaks of two actions.
  if (generic && (talks.empty() || generic_after_named) &&
      std::none_of(talks.begin(), talks.end(), [&](const ActionTalk& o) { return o.tool == generic->tool; })) {
    talks.push_back(std::move(*generic));
  }
  return talks;
}

std::vector<ActionTalk> ActionReader::Read(std::string_view user_text, std::string_view reply) const {
  const Request request = ReadRequest(user_text);
  std::vector<ActionTalk> out;
  // A call written out as text ({"name": "send_message", ...}, Mistral's [TOOL_CALLS]):
  // the model meant to call it.
  for (const Tool& t : tools_) {
    if (WritesCall(reply, t.def->name)) {
      out.push_back(ActionTalk{t.def->name, ActionMode::kNamed, Trim(reply), t.writes, Requested(request, t)});
    }
  }
  bool in_plan = false;  // after "Here's what I'll do:", lines are the plan's steps
  for (const std::string& piece : Sentences(reply)) {
    const std::string sentence = Trim(piece);
    if (sentence.empty()) continue;
    const bool step = in_plan;
    if (sentence.back() == ':') {
      const std::vector<std::string> w = Words(sentence);
      in_plan = HasPhrase(w, {"i'll", "do"}) || HasPhrase(w, {"my", "plan"}) || HasPhrase(w, {"i'll"}) || HasPhrase(w, {"next", "steps"});
    }
    if (IsQuestion(sentence)) continue;
    for (ActionTalk& talk : ReadSentence(request, sentence, step)) out.push_back(std::move(talk));
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
