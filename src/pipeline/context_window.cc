#include "pipeline/context_window.h"

#include <algorithm>

#include "domain/text.h"

namespace reins {
namespace {

// No single message may take more than this share of the budget, nor be cut below
// the floor (a result cut to nothing tells the model nothing).
constexpr size_t kMessageShare = 4;
constexpr size_t kMinMessageChars = 400;
// What a cut adds: "\n[... truncated by reins: N of M characters shown]".
constexpr size_t kNoteChars = 64;

// A turn begins where a person spoke (a say, a select, an approve): the runtime's own
// instructions to the model (a forced retry) carry no speaker.
bool StartsTurn(const Message& m) { return m.role == Role::kUser && !m.speaker.empty(); }

// `text` cut to `cap` characters (never inside a UTF-8 sequence), with a note saying
// how much of the `total` is shown.
std::string Truncated(const std::string& text, size_t cap, size_t total) {
  const std::string_view kept = Utf8Prefix(text, cap);
  return std::string(kept) + "\n[... truncated by reins: " + std::to_string(kept.size()) + " of " +
         std::to_string(total) + " characters shown]";
}

// The least a message costs once cut to `cap` (its note not counted).
size_t CappedChars(const Message& m, size_t cap) {
  size_t n = std::min(m.text.size(), cap);
  for (const ToolCall& c : m.tool_calls) n += c.name.size() + c.arguments_text.size();
  return n;
}

size_t Budget(size_t max_chars, size_t fixed_chars) { return max_chars > fixed_chars ? max_chars - fixed_chars : 0; }

// No message takes more than a share of the budget, whatever else is in the window: so
// the cut depends on the message alone, never on how much history is held.
size_t MessageCap(size_t budget) { return std::max(budget / kMessageShare, kMinMessageChars); }

}  // namespace

size_t ReachableStart(const std::vector<Message>& history, size_t max_chars) {
  // A call's budget is at most max_chars and its cap at least the same share of it, so
  // a message costs it at least budget/max_chars of what it costs at the widest cap: a
  // suffix over max_chars at the widest cap is over any call's budget, and FitContext
  // drops it. Whole turns are summed from the newest back until they are.
  const size_t cap = MessageCap(max_chars);
  size_t total = 0;
  size_t end = history.size();
  while (end > 0) {
    size_t start = end - 1;
    while (start > 0 && !StartsTurn(history[start])) --start;
    for (size_t i = start; i < end; ++i) total += CappedChars(history[i], cap);
    if (total > max_chars) return end;
    end = start;
  }
  return 0;
}

size_t MessageChars(const Message& m) {
  size_t n = m.text.size();
  for (const ToolCall& c : m.tool_calls) n += c.name.size() + c.arguments_text.size();
  return n;
}

std::string ContextWindow::Note() const {
  std::string note;
  if (dropped_messages > 0 || older_left_out) {
    note = "The earliest part of this conversation is left out to fit the context limit; do not assume what it said.";
  }
  if (truncated_messages > 0) {
    if (!note.empty()) note += " ";
    note += std::to_string(truncated_messages) +
            " long message(s) below are cut short; the note at their end says how much is missing.";
  }
  return note;
}

bool FitsWhole(const std::vector<Message>& history, size_t max_chars, size_t fixed_chars) {
  const size_t budget = Budget(max_chars, fixed_chars);
  const size_t cap = MessageCap(budget);
  size_t total = 0;
  for (const Message& m : history) {
    if (m.text.size() > cap + kNoteChars) return false;
    total += MessageChars(m);
  }
  return total <= budget;
}

ContextWindow FitContext(const std::vector<Message>& history, size_t current_turn_start, size_t max_chars,
                         size_t fixed_chars, bool older_left_out) {
  ContextWindow w;
  w.older_left_out = older_left_out;
  w.messages = history;
  if (FitsWhole(history, max_chars, fixed_chars)) return w;
  const size_t budget = Budget(max_chars, fixed_chars);
  size_t cap = MessageCap(budget);
  size_t total = 0;
  for (const Message& m : history) total += MessageChars(m);
  current_turn_start = std::min(current_turn_start, history.size());
  // Every message is cut against its original, once per cap, and only when that
  // shortens it (the note has a length of its own).
  std::vector<size_t> cut_at(history.size(), 0);  // 0: not cut
  auto cut_to = [&](size_t first, size_t cap) {
    for (size_t i = first; i < w.messages.size(); ++i) {
      const std::string& original = history[i].text;
      if (original.size() <= cap + kNoteChars || (cut_at[i] != 0 && cut_at[i] <= cap)) continue;
      total -= MessageChars(w.messages[i]);
      w.messages[i].text = Truncated(original, cap, original.size());
      total += MessageChars(w.messages[i]);
      cut_at[i] = cap;
    }
  };
  // 1. Long messages are cut to the share.
  cut_to(0, cap);
  // 2. The oldest whole turns go while they are what makes the history too long.
  size_t start = 0;
  while (total > budget && start < current_turn_start) {
    size_t next = start + 1;
    while (next < current_turn_start && !StartsTurn(history[next])) ++next;
    for (size_t i = start; i < next; ++i) {
      const size_t chars = MessageChars(w.messages[i]);
      total -= chars;
      w.dropped_chars += chars;
    }
    w.dropped_messages += next - start;
    start = next;
  }
  // 3. The current turn alone is too long: its long messages are cut shorter, halving
  //    the cap down to the floor.
  while (total > budget && cap > kMinMessageChars) {
    cap = std::max(cap / 2, kMinMessageChars);
    cut_to(start, cap);
  }
  for (size_t i = start; i < cut_at.size(); ++i) w.truncated_messages += cut_at[i] != 0 ? 1 : 0;
  w.messages.erase(w.messages.begin(), w.messages.begin() + static_cast<std::ptrdiff_t>(start));
  return w;
}

}  // namespace reins
