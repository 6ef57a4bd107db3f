// CallRequest: one model call's request, which carries the turn's history itself
// instead of a copy of it.
//
// A request's messages are the system prompt and then the session's history. Copying
// the history into every request cost a turn about a microsecond per earlier turn in
// the session, and a waiting turn held the history twice. When the whole history fits
// the context window (pipeline/context_window.h), the history's own vector is lent to
// the request: moved in after the system prompt, and moved back when the call ends,
// however it ends (the destructor gives it back when a call is abandoned, its coroutine
// destroyed). Messages appended to the request (a repeated call's partial answer, a
// plan's instructions) are the request's alone and go with it.
//
// While lent, the turn's history is empty. Nothing else reads it meanwhile: a session
// runs one turn at a time (SessionQueue), and the turn itself waits on the call.
#pragma once

#include <cstddef>
#include <vector>

#include "reins/model_provider.h"

namespace reins {

class CallRequest {
 public:
  explicit CallRequest(ModelRequest built) : request(std::move(built)) {}
  CallRequest(CallRequest&& other) noexcept;
  CallRequest& operator=(CallRequest&&) = delete;
  ~CallRequest() { GiveBack(); }

  // request.messages becomes `system` followed by all of `history`, which is left
  // empty until GiveBack. request.messages must be empty.
  void Borrow(std::vector<Message>& history, Message system);
  // The history back to its owner, as it was lent; a no-op when nothing is lent.
  void GiveBack() noexcept;

  ModelRequest request;

 private:
  std::vector<Message>* lender_ = nullptr;
  size_t lent_ = 0;
};

}  // namespace reins
