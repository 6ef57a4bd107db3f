#include "turn/reply_stream.h"

#include <cctype>

#include "domain/text.h"

namespace reins {

void ReplyStream::BeginResponse(bool continuation) {
  if (continuation) {
    fed_.resize(consumed_);  // the repeat continues after the last whole sentence
    return;
  }
  Release();  // the previous response's calls have run
  fed_.clear();
  consumed_ = 0;
  response_start_ = sent_.size();
}

void ReplyStream::Feed(std::string_view text) {
  fed_.append(text);
  const std::string_view open = std::string_view(fed_).substr(consumed_);
  const size_t whole = CompleteSentencesEnd(open);
  if (whole == 0) return;
  std::vector<std::string> sentences = Sentences(open.substr(0, whole));
  consumed_ += whole;
  for (std::string& s : sentences) Take(std::move(s));
}

void ReplyStream::EndResponse(const std::string& text, bool cut_off) {
  // A provider that streamed gave every byte already; one that did not gives them now.
  if (text.size() > fed_.size() && text.compare(0, fed_.size(), fed_) == 0) Feed(std::string_view(text).substr(fed_.size()));
  if (cut_off || consumed_ == fed_.size()) return;
  std::string last = fed_.substr(consumed_);
  consumed_ = fed_.size();
  Take(std::move(last));
}

void ReplyStream::Take(std::string sentence) {
  if (!waiting_.empty() || (waits_ && waits_(sentence))) {
    waiting_.push_back(std::move(sentence));
    return;
  }
  SendJudged(std::move(sentence));
}

void ReplyStream::Release() {
  std::vector<std::string> waiting = std::move(waiting_);
  waiting_.clear();
  for (std::string& sentence : waiting) SendJudged(std::move(sentence));
}

void ReplyStream::SendJudged(std::string sentence) {
  std::string judged = judge_(sent_, std::move(sentence));
  if (judged.empty()) return;
  // A new response's first sentence (after a preamble, say) is a new sentence of the reply.
  if (!sent_.empty() && !std::isspace(static_cast<unsigned char>(sent_.back())) &&
      !std::isspace(static_cast<unsigned char>(judged.front()))) {
    judged = " " + judged;
  }
  sent_ += judged;
  send_(judged);
}

}  // namespace reins
