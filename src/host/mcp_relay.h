// McpRelay: MCP questions across replicas of a shared store (docs/deployment.md).
//
// An MCP server may ask the person something in the middle of a call (elicitation,
// docs/mcp.md); the call stays open in the process that made it, on its connection to
// the server, while the person answers in a later turn. Behind a load balancer that
// turn may reach another replica. The relay wraps each MCP tool's backend:
//   - a call that comes back asking marks the session in the store as held by this
//     replica; a call that finishes, or a question withdrawn, removes the mark;
//   - an answer for a question another replica holds goes to that replica as mail
//     (Store::SendMail); the holder's relay, which polls its mail while it holds a
//     question, resumes its open call with the answer and mails back the call's result
//     (or its next question), which this replica's turn returns as its own;
//   - a holder that does not take the answer within `take_within_ms` (it died, or lost
//     the database) has the answer withdrawn and the mark cleared: the turn gets an
//     honest error naming the replica, and the person can ask again; a turn that stops
//     waiting for another reason (its time ran out) withdraws or discards its answer
//     and tells the holder to let its call go;
//   - a question withdrawn here (the person moved on), or superseded by a new question
//     asked here, is withdrawn at its holder (mail again, naming the question by its
//     mark's time, so a newer question there is left alone);
//   - every replica sweeps mail and marks older than twice a question's time to live.
// Progress notifications of a relayed call stay on the holder (its trace has them).
// With a one-process store nothing is wrapped.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "reins/clock.h"
#include "reins/store.h"
#include "reins/tool_backend.h"

namespace reins {

struct McpRelayOptions {
  int poll_ms = 100;            // how often a replica holding a question reads its mail
  int take_within_ms = 3000;    // how long an answer waits for its holder to take it
                                // (less when the call's timeout is shorter)
  int64_t mark_ttl_ms = 10 * 60 * 1000;  // a question's time to live (the MCP desk's)
};

class McpRelay {
 public:
  McpRelay(std::shared_ptr<Store> store, std::shared_ptr<Clock> clock, McpRelayOptions options = {});
  ~McpRelay();  // Stop(), then what was left open on the relay's thread is dropped
  McpRelay(const McpRelay&) = delete;
  McpRelay& operator=(const McpRelay&) = delete;

  // The backend of MCP tool `tool`, relayed. The newest backend of a tool is the one
  // relayed answers resume (a tool list that changed replaces it).
  std::shared_ptr<ToolBackend> Wrap(const std::string& tool, std::shared_ptr<ToolBackend> inner);

  // Stops the relay's thread: nothing it runs touches the MCP hub afterwards, so the
  // hub may go (its calls' last posts still land in the relay's queue).
  void Stop();

  const std::string& replica() const { return replica_; }

 private:
  class Backend;
  struct Loop;
  Task<Result<Json>> Relay(QuestionMark holder, ToolRequest request);
  Task<Result<Json>> Exchange(const QuestionMark& holder, const ToolRequest& request, int64_t* id, bool* abandon);
  Task<void> Abandon(const QuestionMark& holder, const ToolRequest& request, int64_t id);
  Task<void> Held(const std::string& tool, const std::string& session_id, const Result<Json>& result);
  void Withdraw(const std::string& tool, const std::string& session_id);
  Task<void> TellToWithdraw(QuestionMark holder, std::string tool, std::string session_id);
  Task<void> Poll();
  Task<void> Serve(ReplicaMail mail);
  Task<Result<QuestionMark>> Holder(std::string session_id);
  Task<void> Unmark(std::string session_id, std::string replica);
  std::shared_ptr<ToolBackend> Inner(const std::string& tool);

  std::shared_ptr<Store> store_;
  std::shared_ptr<Clock> clock_;
  McpRelayOptions options_;
  std::string replica_;
  std::mutex mu_;  // guards inner_ and held_
  std::map<std::string, std::shared_ptr<ToolBackend>> inner_;  // by reins tool name
  std::map<std::string, int64_t> held_;  // session -> when it asked (its mark's asked_at)
  std::unique_ptr<Loop> loop_;  // last: its thread runs the above
};

}  // namespace reins
