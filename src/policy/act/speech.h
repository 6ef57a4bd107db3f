// How a reply speaks of an action, in English: the rules ActionReader (action_talk.h)
// applies to each sentence before it asks which tool the action belongs to. A question,
// a condition or an offer, and a negation before the action state nothing done; a
// first-person future ("I'll", "let me", "while I"), a progressive ("I'm checking",
// "Searching..."), a perfect or passive past ("I've sent", "has been submitted",
// "Message sent") do. Words come lower-cased from domain/text.h's Words().
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "policy/act/action_talk.h"  // ActionMode

namespace reins::speech {

bool OneOf(std::initializer_list<std::string_view> set, std::string_view word);
// `w` holds the words of `phrase`, in a row.
bool HasPhrase(const std::vector<std::string>& w, std::initializer_list<std::string_view> phrase);

// Verb stem -> the stems of verbs that name the same action (one way: see speech.cc).
const std::map<std::string, std::set<std::string>>& Synonyms();
// A word some tool's action may be called by.
bool IsActionVerb(const std::string& stem);
// The action the verb at `verb` names, as a stem: its own, or its phrasal verb's ("fire
// off" a text: send; "take it down": set), or "call" for a ring.
std::string ActionOf(const std::vector<std::string>& words, size_t verb);
bool IsPast(std::string_view word);
bool IsNegation(std::string_view word);

// A sentence without its leading bullets and surrounding space.
std::string Trim(std::string_view sentence);
// Ends with a question mark, emoji, quotes and brackets aside.
bool IsQuestion(std::string_view sentence);
// The words with "no problem" and the like taken out: they negate nothing.
std::vector<std::string> WithoutPleasantries(std::vector<std::string> words);
// A condition, an offer or a question to the person: the sentence states no action.
bool Conditional(const std::vector<std::string>& words);
// The clauses of a sentence (at commas, dashes, brackets, "but", "so").
std::vector<std::string> Clauses(const std::string& sentence);

// Where a clause says an action happens or happened: the mode, the first word of what
// it is about (objects are looked for from there), and the action's verb.
struct Marker {
  ActionMode mode;
  size_t from;
  size_t verb;
  size_t until = std::string::npos;  // objects only before this word ("Party mix | is on")
};
std::optional<Marker> FindMarker(const std::vector<std::string>& words);
// "I've taken care of that", "All set!", "Done!": a claim that names no action.
bool IsGeneric(const std::vector<std::string>& words);
// "You got it", as a whole sentence: the request says what was done. Part of one
// ("You got it, which John?") it acknowledges the request, no more.
bool IsBareAcknowledgement(const std::vector<std::string>& words);
// A negation comes before the action's verb at `verb` ("I won't send it").
bool NegatedBefore(const std::vector<std::string>& words, size_t verb);

// In a request: word `i` is where a request puts its verb ("Text Jane", "can you ping",
// "hey put on some jazz", "a pastor could call me").
bool VerbPosition(const std::vector<std::string>& words, size_t i);
// Word `i` asks for the person to be told ("tell me", "let us know", "show me what
// ..."): what they ask for is the reply, no tool's action.
bool AsksToBeTold(const std::vector<std::string>& words, size_t i);
// The clause is phrased as a request ("please", "could", "I need").
bool RequestForm(const std::vector<std::string>& words);

}  // namespace reins::speech
