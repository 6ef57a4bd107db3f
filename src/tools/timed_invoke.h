// InvokeWithin: one call of a tool within its budget (ToolRequest::timeout_ms) on the
// runtime's clock, the way the executor and the deferred runner both make it.
#pragma once

#include <optional>

#include "reins/clock.h"
#include "reins/tool_backend.h"

namespace reins {

// The backend's answer, or nullopt when the budget ran out first. A backend that keeps
// the deadline itself (ToolBackend::KeepsDeadline) is awaited as it is, its
// DeadlineExceeded read as the budget running out; any other is raced against a sleep
// on `clock`, which cancels the call when the sleep ends first (an HTTP exchange is
// dropped, an MCP server hears notifications/cancelled).
Task<std::optional<Result<Json>>> InvokeWithin(ToolBackend& backend, const ToolRequest& request, Clock& clock);

}  // namespace reins
