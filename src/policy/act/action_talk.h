// ActionTalk: how act_not_describe reads a model's text. Does a sentence announce ("I'll
// send that to John now"), narrate ("One moment while I check the schedule") or claim
// ("I've passed your request to the care team") an action that one of the agent's
// tools performs? And did the person's own message ask for that action?
//
// Deterministic, no model call. What a tool does comes from the agent's configuration:
// its name, its title, the verbs and the objects of its description, its input schema's
// property names and enums, its `claims` patterns, and a small table of verbs that name
// the same action ("text" and "send", "pull up" and "look up", "fire off" a text). How a
// sentence says it comes from rules of English: a question, a condition or an offer,
// and a negation state no action; a first-person future, a progressive, or a perfect or
// passive past do. Built from three files: action_words.cc (each tool's words),
// action_request.cc (what the request asks for), action_talk.cc (the reply's sentences).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reins/agent_config.h"

namespace reins {

// How a sentence talks about an action.
enum class ActionMode {
  kAnnounce,  // "I'll send...", "Let me look up...", "One moment while I check..."
  kProgress,  // "I'm checking...", "Searching for flights now."
  kClaim,     // "I've sent...", "Your request has been submitted.", "Now playing..."
  kNamed,     // "I'll use lookup_contacts to find John": the tool by its name
  kGeneric,   // "I've taken care of that for you.": no action named; the request says which
  kResult,    // "The pharmacy has your refill", "it will be ready today": its result, someone else's
};
std::string_view ActionModeName(ActionMode mode);

// One sentence that talks about a tool's action as happening or done.
struct ActionTalk {
  std::string tool;
  ActionMode mode = ActionMode::kAnnounce;
  std::string sentence;  // as written, trimmed
  bool writes = false;     // the tool is not read-only (annotations.readOnlyHint)
  bool requested = false;  // the person's message asked for this tool's action
};

class ActionReader {
 public:
  explicit ActionReader(const std::vector<ToolDef>& tools);
  ~ActionReader();
  ActionReader(const ActionReader&) = delete;
  ActionReader& operator=(const ActionReader&) = delete;

  // Every sentence of `reply` that announces, narrates or claims a tool's action, in
  // order (one entry per sentence: the tool it is most about). `user_text` decides
  // which tool a generic claim is about and whether each action was requested.
  std::vector<ActionTalk> Read(std::string_view user_text, std::string_view reply) const;

  // The first of them that is an unmade call: its tool is not among `ran`, and a tool
  // that writes was asked for by the person. nullopt: the reply describes no call
  // that should have been made.
  std::optional<ActionTalk> UnmadeCall(std::string_view user_text, std::string_view reply,
                                       const std::vector<std::string>& ran) const;

  // Whether the person's request asks for `tool`'s action, read strictly: a word of its
  // title counts only when no other tool shares it, and words match as the very stems
  // (untrusted_data's unrequested writes, where a request read too widely lets an
  // injected write through). False for a tool the agent does not have.
  bool Asks(std::string_view user_text, std::string_view tool) const;

 private:
  struct Tool;
  struct Request;
  Request ReadRequest(std::string_view user_text) const;
  bool Requested(const Request& request, const Tool& tool, bool strict = false) const;
  const Tool* FromRequest(const Request& request, const std::vector<const Tool*>& candidates) const;
  const Tool* Unnamed(const Request& request) const;
  bool OtherHasVerb(const Tool& tool, const std::string& verb) const;
  std::vector<ActionTalk> ReadSentence(const Request& request, const std::string& sentence, bool step) const;
  const Tool* ToolOf(const Request& request, const std::string& clause, const std::string& rest, bool plan_step,
                     bool whole, ActionMode& mode) const;
  std::vector<Tool> tools_;
};

}  // namespace reins
