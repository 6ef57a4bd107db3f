#include "store/pg_pipeline.h"

#include <libpq-fe.h>

#include <utility>

namespace reins::store::pg {

void Pipeline::Add(const char* sql, std::vector<Param> params) { open_.statements.push_back({sql, std::move(params)}); }

void Pipeline::EndSegment(std::string what) {
  open_.what = std::move(what);
  segments_.push_back(std::move(open_));
  open_ = Segment{};
}

std::vector<Status> Pipeline::Run() {
  std::vector<Status> out(segments_.size());
  if (segments_.empty()) return out;
  pg_conn* c = conn_.raw();
  std::vector<Sent> sent;
  if (PQenterPipelineMode(c) != 1 || !Send(sent)) {
    const Status failed = conn_.Failure(nullptr, "cannot send a pipelined commit");
    for (Status& s : out) s = failed;
    (void)PQexitPipelineMode(c);
    return out;
  }
  Read(sent, out);
  // Left in pipeline mode (results unread: the link failed), the connection is not idle
  // and the pool closes it.
  (void)PQexitPipelineMode(c);
  return out;
}

// The statements not yet prepared on this connection go first, in a segment of their
// own: a failed turn's segment skips what follows it, and a preparation skipped with it
// would fail every later turn that uses the statement.
bool Pipeline::Send(std::vector<Sent>& sent) {
  pg_conn* c = conn_.raw();
  bool preparing = false;
  for (const Segment& segment : segments_) {
    for (const Statement& st : segment.statements) {
      auto [slot, fresh] = conn_.prepared_.try_emplace(st.sql, "r" + std::to_string(conn_.prepared_.size() + 1));
      if (!fresh) continue;
      if (PQsendPrepare(c, slot->second.c_str(), st.sql, static_cast<int>(st.params.size()), nullptr) != 1) return false;
      sent.push_back({Sent::kPrepare, 0, st.sql});
      preparing = true;
    }
  }
  if (preparing) {
    if (PQpipelineSync(c) != 1) return false;
    sent.push_back({Sent::kSync, segments_.size(), nullptr});  // no segment's
  }
  std::vector<const char*> values;
  for (size_t i = 0; i < segments_.size(); ++i) {
    for (const Statement& st : segments_[i].statements) {
      values.clear();
      for (const Param& p : st.params) values.push_back(p ? p->c_str() : nullptr);
      const std::string& name = conn_.prepared_.at(st.sql);
      if (PQsendQueryPrepared(c, name.c_str(), static_cast<int>(values.size()), values.data(), nullptr, nullptr, 0) != 1) {
        return false;
      }
      sent.push_back({Sent::kExecute, i, nullptr});
    }
    if (PQpipelineSync(c) != 1) return false;
    sent.push_back({Sent::kSync, i, nullptr});
  }
  return true;
}

void Pipeline::Read(const std::vector<Sent>& sent, std::vector<Status>& out) {
  pg_conn* c = conn_.raw();
  for (const Sent& s : sent) {
    // A preparation's failure is no segment's: a statement it left unprepared fails in
    // each segment that runs it, and the others commit.
    const bool own = s.kind != Sent::kPrepare && s.segment < out.size();
    Rows result(PQgetResult(c));
    if (result.get() == nullptr) {  // the link failed: nothing more comes
      const size_t from = own ? s.segment : 0;
      const Status failed = conn_.Failure(nullptr, own ? segments_[from].what : "cannot prepare a commit");
      for (size_t i = from; i < out.size(); ++i) {
        if (out[i].ok()) out[i] = failed;
      }
      return;
    }
    if (s.kind == Sent::kSync) {
      if (own && out[s.segment].ok()) ++conn_.succeeded_;  // committed
      continue;  // a sync's result has no NULL after it
    }
    const ExecStatusType got = PQresultStatus(result.get());
    if (got == PGRES_FATAL_ERROR && own && out[s.segment].ok()) out[s.segment] = conn_.Failure(result.get(), segments_[s.segment].what);
    if (s.kind == Sent::kPrepare && got != PGRES_COMMAND_OK) conn_.prepared_.erase(s.sql);  // failed, or skipped
    Rows end(PQgetResult(c));  // each statement's results end with a NULL
  }
}

}  // namespace reins::store::pg
