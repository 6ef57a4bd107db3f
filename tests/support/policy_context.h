// What a policy needs to be called in a unit test: an agent config, a virtual clock,
// session state, history, and a TurnContext over them.
#pragma once

#include <vector>

#include "turn/session_history.h"
#include "turn/turn_context.h"

namespace reins::testing {

struct PolicyContext {
  explicit PolicyContext(std::vector<ToolDef> tools = {}) : clock(0), ctx(config, clock, state, history) {
    config.tools = std::move(tools);
    ctx.result.turn_number = 1;
    ctx.result.turn_id = "t_1";
  }
  AgentConfig config;
  VirtualClock clock;
  SessionState state;
  SessionHistory history;
  TurnContext ctx;
};

}  // namespace reins::testing
