#include <iostream>

#include "cli/commands.h"
#include "cli/term.h"
#include "cli/timeline_text.h"
#include "cli/transcript.h"
#include "reins/clock.h"
#include "reins/store.h"
#include "server/stored_turn_json.h"

namespace reins {

// A session as the trace viewer shows it (docs/trace-viewer.md): each turn's timeline,
// with the raw events under it when asked for; or the stored record as JSON.
int TraceCommand(const std::string& store_url, const std::string& session_id, bool json, bool events) {
  Result<std::unique_ptr<Store>> store = OpenStore(store_url);
  if (!store.ok()) {
    std::cerr << "cannot open store: " << store.status().message() << "\n";
    return 1;
  }
  Term term = json ? Term(false) : Term::ForStdout();
  if (session_id.empty()) {
    Result<std::vector<SessionRecord>> sessions = (*store)->ListSessions();
    if (!sessions.ok()) {
      std::cerr << sessions.status().message() << "\n";
      return 1;
    }
    for (const SessionRecord& s : *sessions) {
      std::cout << s.id << "  " << FormatIsoTime(s.created_at_ms) << "  " << s.turn_count << " turns\n";
    }
    if (sessions->empty()) std::cout << "no sessions in " << store_url << "\n";
    return 0;
  }
  Result<SessionRecord> session = (*store)->LoadSession(session_id);
  Result<std::vector<StoredTurn>> turns = session.ok() ? (*store)->LoadTurns(session_id) : session.status();
  if (!turns.ok()) {
    std::cerr << turns.status().message() << "\n";
    return 1;
  }
  if (json) {
    Json out = {{"session_id", session_id}, {"created_at", FormatIsoTime(session->created_at_ms)}, {"turns", Json::array()}};
    for (const StoredTurn& t : *turns) {
      Json events = Json::array();
      for (const TraceEvent& e : t.events) events.push_back(TraceEventToJson(e));
      out["turns"].push_back({{"turn_id", t.turn_id}, {"turn_number", t.turn_number}, {"input", t.input}, {"result", t.result}, {"events", events}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << term.Bold("session " + session_id) << "  created " << FormatIsoTime(session->created_at_ms) << ", "
            << turns->size() << " turns\n";
  for (const StoredTurn& t : *turns) {
    PrintTimeline(std::cout, TimelineTurnJson(t), term);
    if (events) PrintEvents(std::cout, t.events, term);
  }
  return 0;
}

}  // namespace reins
