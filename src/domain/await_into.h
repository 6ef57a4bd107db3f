// AwaitInto: a task's value put into a variable its caller holds. A coroutine that
// waits seconds (on a model, on a server's answer) keeps every value it awaits in its
// frame; awaited through this one instead, the value is kept once, in the caller's
// variable, and this frame lives only while the task runs (docs/PERFORMANCE.md, rounds
// 26 and 27).
//
//   co_await AwaitInto(ReadOn(...), response);   // not: response = co_await ReadOn(...)
#pragma once

#include <utility>

#include "reins/async.h"

namespace reins {

template <typename T>
Task<void> AwaitInto(Task<T> task, T& into) {
  into = co_await std::move(task);
}

}  // namespace reins
