#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/term.h"
#include "cli/timeline_text.h"
#include "cli/transcript.h"
#include "config/agent_config_loader.h"
#include "domain/json_parse.h"
#include "eval/harms.h"
#include "eval/invariants.h"
#include "eval/stored_trace.h"
#include "reins/clock.h"
#include "reins/store.h"
#include "server/stored_turn_json.h"

namespace reins {
namespace {

// What a session's turns look like as `--json` prints them (and `--check --file` reads).
Json TraceJson(const std::string& session_id, const SessionRecord& session, const std::vector<StoredTurn>& turns) {
  Json out = {{"session_id", session_id}, {"created_at", FormatIsoTime(session.created_at_ms)}, {"turns", Json::array()}};
  for (const StoredTurn& t : turns) {
    Json events = Json::array();
    for (const TraceEvent& e : t.events) events.push_back(TraceEventToJson(e));
    out["turns"].push_back({{"turn_id", t.turn_id}, {"turn_number", t.turn_number}, {"input", t.input}, {"result", t.result}, {"events", events}});
  }
  return out;
}

// The session checked as a scenario run is: every invariant, every harm detector.
// `history` and `outbox` are the store's when `stored` (a file has neither, and I10 and
// I12 are left out). 0 when all hold, 1 otherwise.
int CheckSession(const std::string& agent_file, const Json& trace, bool stored, const std::vector<Message>& history,
                 const std::vector<OutboxEntry>& outbox, const Term& term) {
  Result<AgentConfig> config = LoadAgentConfigFile(agent_file);
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return 2;
  }
  const std::vector<TurnRun> turns = TurnRunsFromTrace(trace);
  std::vector<InvariantViolation> violations = CheckInvariants(*config, turns, history, outbox);
  if (!stored) {
    // I10 reads the stored history, I12 the outbox: a trace alone has neither.
    std::erase_if(violations, [](const InvariantViolation& v) { return v.id == "I10" || v.id == "I12"; });
    std::cout << term.Dim("(from a file: I10 and I12 need the store's history and outbox, and are not checked)") << "\n";
  }
  const std::vector<Harm> harms = FindHarms(*config, turns);
  for (const InvariantViolation& v : violations) {
    std::cout << term.Red(v.id) << "  turn " << v.turn << "  " << v.message << "\n";
  }
  for (const Harm& h : harms) std::cout << term.Red(h.kind) << "  turn " << h.turn << "  " << h.detail << "\n";
  if (violations.empty() && harms.empty()) {
    std::string ids;
    for (const std::string& id : CheckedInvariants()) {
      if (stored || (id != "I10" && id != "I12")) ids += " " + id;
    }
    std::cout << term.Green("invariants hold:") << ids << "; no harm found in " << turns.size() << " turns\n";
    return 0;
  }
  std::cout << violations.size() << " invariant violations, " << harms.size() << " harms in " << turns.size() << " turns\n";
  return 1;
}

int CheckFile(const TraceFlags& flags, const Term& term) {
  std::ifstream in(flags.file);
  std::stringstream text;
  text << in.rdbuf();
  Result<Json> trace = ParseJson(text.str(), kMaxStoredJsonDepth);
  if (!trace.ok()) {
    std::cerr << flags.file << ": " << trace.status().message() << "\n";
    return 2;
  }
  try {
    return CheckSession(flags.check, *trace, false, {}, {}, term);
  } catch (const Json::exception& e) {
    // A file is anyone's JSON: one whose events are not shaped as reins writes them.
    std::cerr << flags.file << ": not a reins session trace (" << e.what() << ")\n";
    return 2;
  }
}

}  // namespace

// A session as the trace viewer shows it (docs/trace-viewer.md): each turn's timeline,
// with the raw events under it when asked for; or the stored record as JSON; or, with
// --check, the verdict of the invariant checks and the harm detectors on it.
int TraceCommand(const TraceFlags& flags) {
  Term term = flags.json ? Term(false) : Term::ForStdout();
  if (!flags.file.empty()) return CheckFile(flags, term);
  Result<std::unique_ptr<Store>> store = OpenStore(flags.store);
  if (!store.ok()) {
    std::cerr << "cannot open store: " << store.status().message() << "\n";
    return 1;
  }
  if (flags.session.empty()) {
    Result<std::vector<SessionRecord>> sessions = (*store)->ListSessions();
    if (!sessions.ok()) {
      std::cerr << sessions.status().message() << "\n";
      return 1;
    }
    for (const SessionRecord& s : *sessions) {
      std::cout << s.id << "  " << FormatIsoTime(s.created_at_ms) << "  " << s.turn_count << " turns\n";
    }
    if (sessions->empty()) std::cout << "no sessions in " << flags.store << "\n";
    return 0;
  }
  Result<SessionRecord> session = (*store)->LoadSession(flags.session);
  Result<std::vector<StoredTurn>> turns = session.ok() ? (*store)->LoadTurns(flags.session) : session.status();
  if (!turns.ok()) {
    std::cerr << turns.status().message() << "\n";
    return 1;
  }
  if (!flags.check.empty()) {
    Result<std::vector<Message>> history = (*store)->LoadMessages(flags.session);
    Result<std::vector<OutboxEntry>> outbox = (*store)->LoadOutbox(flags.session);
    if (!history.ok() || !outbox.ok()) {
      std::cerr << (history.ok() ? outbox.status() : history.status()).message() << "\n";
      return 1;
    }
    return CheckSession(flags.check, TraceJson(flags.session, *session, *turns), true, *history, *outbox, term);
  }
  if (flags.json) {
    std::cout << TraceJson(flags.session, *session, *turns).dump(2) << "\n";
    return 0;
  }
  std::cout << term.Bold("session " + flags.session) << "  created " << FormatIsoTime(session->created_at_ms) << ", "
            << turns->size() << " turns\n";
  for (const StoredTurn& t : *turns) {
    PrintTimeline(std::cout, TimelineTurnJson(t), term);
    if (flags.events) PrintEvents(std::cout, t.events, term);
  }
  return 0;
}

}  // namespace reins
