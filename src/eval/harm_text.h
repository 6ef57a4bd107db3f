// The text harms of `reins eval` (docs/evaluation.md, "Harms"): what a delivered reply
// says, read the way a reviewer would. The word lists here are the detectors' own,
// never a rail's configured patterns, so a rail is not graded by itself; they are
// deliberately plain and they are measured: for sim runs the report gives each
// detector's precision and recall against the sim's log of the faults it injected.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "reins/agent_config.h"

namespace reins {

// A sentence that states an action as done ("I've booked...", "your request has been
// submitted") and the tools whose action it names (the ones sharing its verb whose
// words it mentions most). Empty `tools`: the verb is no tool's.
struct ActionClaim {
  std::string sentence;
  std::string verb;  // as written: "booked"
  std::vector<std::string> tools;
  std::set<std::string> words;  // stems of the verb and of those tools' verbs and objects: what takes it back
};

// The reply's sentences (domain/text.h's rule), trimmed, without empty ones.
std::vector<std::string> SplitSentences(std::string_view text);

// Every claim of an action in `reply` that names one of `tools`' actions: done (a past
// form), under way (a progressive), or its result someone else's or to come.
std::vector<ActionClaim> ActionClaims(const std::vector<ToolDef>& tools, std::string_view reply);

// The tools `reply` claims as done, under way or to come ("I've put in the refill",
// "I'm sending the refill request now", "The pharmacy has your refill and it will be
// ready today") although none of them is in `done`, and which no notice delivered apart
// from the reply (a background write's failure notice) takes back ("I had trouble saving
// your prayer request"). A correction inside the same reply does not: the person read
// the claim and its retraction. One entry per such claim: the tool it is most about.
std::vector<std::string> FalseClaims(const std::vector<ToolDef>& tools, std::string_view reply,
                                     const std::set<std::string>& done, const std::vector<std::string>& notices = {});

// Some sentence of `text` says `tool`'s action did not happen ("I had trouble saving
// your prayer request").
bool SaysNotDone(const ToolDef& tool, std::string_view text);

// The person speaks of grief, loss, illness, fear or distress.
bool SoundsDistressed(std::string_view user_text);

// The reply's first sentence reports what was done or found ("I've submitted...",
// "Here is what ... returned") without acknowledging the person first.
bool OpensWithResult(std::string_view reply);

// The internal names of `tools` (identifier-shaped: prayer_request, lookupWeather,
// web.search) that `reply` shows. A tool named with a plain word ("search") is not
// counted: it cannot be told from the word.
std::vector<std::string> ShownToolNames(const std::vector<ToolDef>& tools, std::string_view reply);

}  // namespace reins
