// ReplyStream: a turn's reply on its way to the person while the model is still writing
// it, one sentence at a time (docs/streaming.md). The model's text comes in as it is
// written (Feed); each complete sentence is judged (the rails, with the text sent so
// far) and sent at once. What was sent is never taken back: what the turn adds later
// (a correction, a question, a failure) is appended to it. A response cut off by the
// token limit never sends its unfinished last sentence; its repeat continues after the
// last complete one (said()).
//
// A sentence that claims an action before the tool has run ("I've saved that", written
// before the response's call of the save) waits, with every sentence after it, until
// the response's calls are known: it is judged again, and sent or dropped, when the
// next response begins or the reply closes (Release). Until then the person has
// nothing a later call could make untrue.
//
// A stream is held (`held_by` not empty) when something can judge only the whole reply
// (the audit, a plan's synthesis, a whole-reply rail): nothing is sent early, and the
// reply goes out in one piece after the turn's commit, as for a caller that does not
// stream.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace reins {

class ReplyStream {
 public:
  // The rails on one sentence, given what was sent before it: the text to send ("" to
  // send nothing).
  using Judge = std::function<std::string(const std::string& sent, std::string sentence)>;
  using Send = std::function<void(std::string_view text)>;
  // Whether a sentence waits for its response's calls (it claims an action not yet run).
  using Waits = std::function<bool(const std::string& sentence)>;

  ReplyStream(Send send, Judge judge, Waits waits, std::string held_by)
      : send_(std::move(send)), judge_(std::move(judge)), waits_(std::move(waits)), held_by_(std::move(held_by)) {}

  bool live() const { return held_by_.empty(); }
  const std::string& held_by() const { return held_by_; }

  // A model response begins; a continuation carries on the one that was cut off. A new
  // one releases what waited for the previous one's calls (they have run).
  void BeginResponse(bool continuation);
  // Text of the response as the model writes it.
  void Feed(std::string_view text);
  // The response is finished: `text` is all of it (a provider that did not stream gives
  // it here). Cut off: its unfinished last sentence is dropped, never sent.
  void EndResponse(const std::string& text, bool cut_off);

  // The sentences that waited for their response's calls are judged again, now that
  // the calls ran, and sent or dropped, in order.
  void Release();

  // Everything sent so far, in order: exactly what the person has received.
  const std::string& sent() const { return sent_; }
  // Where in sent() the current response's text (continuations included) begins.
  size_t response_start() const { return response_start_; }
  // The model's own words of the current response that went out as whole sentences.
  std::string said() const { return fed_.substr(0, consumed_); }

 private:
  void Take(std::string sentence);
  void SendJudged(std::string sentence);

  Send send_;
  Judge judge_;
  Waits waits_;
  std::string held_by_;
  std::vector<std::string> waiting_;  // sentences held for their response's calls, in order
  std::string fed_;        // the current response's text so far
  size_t consumed_ = 0;    // how much of fed_ went to whole sentences
  std::string sent_;
  size_t response_start_ = 0;
};

}  // namespace reins
