// ContextWindow: what one model call carries of a session's history, bounded by
// limits.max_context_chars, so that a long session never becomes unusable (a provider
// refuses a request that is too large, and every call would fail from then on).
//
// Deterministic, no model call: a message longer than a quarter of the budget is cut to
// that length with a note saying how much was left out; then the oldest turns are
// dropped whole (a turn starts at a message a person sent) while the history is over
// the budget, and the model is told so; the current turn is never dropped, only its
// long messages cut shorter. Cuts fall only before a person's message, so every
// tool call keeps its result (I10).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "reins/message.h"

namespace reins {

struct ContextWindow {
  // The most Note() adds to the system prompt: callers count it as part of the fixed part.
  static constexpr size_t kMaxNoteChars = 200;
  std::vector<Message> messages;  // what to send, in order
  size_t dropped_messages = 0;    // oldest messages left out
  size_t dropped_chars = 0;
  size_t truncated_messages = 0;  // messages sent cut short
  bool older_left_out = false;    // turns before `history` exist but were not even held
  // The line the model sees about what was left out ("" when nothing was).
  std::string Note() const;
};

// True when `history` goes to a call as it is: within the budget that `max_chars` leaves
// besides `fixed_chars`, and no message over its share of it. FitContext then returns a
// copy of it, and a model call may carry the history itself (pipeline/call_request.h).
bool FitsWhole(const std::vector<Message>& history, size_t max_chars, size_t fixed_chars);

// `history[current_turn_start..]` is the turn being run. `fixed_chars` is what the
// call carries besides the history (system prompt, notes, page context).
// `older_left_out`: the caller holds only part of the history (see ReachableStart).
ContextWindow FitContext(const std::vector<Message>& history, size_t current_turn_start, size_t max_chars,
                         size_t fixed_chars, bool older_left_out = false);

// Where the part of `history` that any call's window may still include begins (a turn
// start, or 0): FitContext with `max_chars` drops every whole turn before it, whatever
// the call's fixed part and whatever turns follow. A session in memory keeps only
// history from there on, so what a long session holds stays bounded too.
size_t ReachableStart(const std::vector<Message>& history, size_t max_chars);

// The characters a message costs in a request (text, tool names and arguments).
size_t MessageChars(const Message& m);

}  // namespace reins
