// Pipeline: statements sent to PostgreSQL together and their results read after
// (libpq's pipeline mode), so that a group commit of many turns costs one round trip,
// not one per statement. Internal to src/store/.
//
// The statements are queued in segments. Each segment is one transaction: the
// protocol's implicit one, which the sync point ending the segment commits, or rolls
// back whole when one of its statements fails; the segments after it run on (one
// session's conflict does not fail the other turns of its batch). A statement that must
// see a row count before the commit says so in SQL (reins_expect_row, pg_migrations.cc).
#pragma once

#include <string>
#include <vector>

#include "store/pg_connection.h"

namespace reins::store::pg {

class Pipeline {
 public:
  explicit Pipeline(Connection& conn) : conn_(conn) {}
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Queues a statement ($1, $2... placeholders) in the open segment.
  void Add(const char* sql, std::vector<Param> params);
  // Closes the open segment; `what` names it in its failure.
  void EndSegment(std::string what);
  // Sends every closed segment and reads what each did: OK (committed), or the first
  // failure of its statements, mapped as Connection::Exec maps it. When the connection
  // fails, every segment not yet read fails with it.
  std::vector<Status> Run();

 private:
  struct Statement {
    const char* sql;
    std::vector<Param> params;
  };
  struct Segment {
    std::vector<Statement> statements;
    std::string what;
  };
  // What was sent, in order, to read each result against.
  struct Sent {
    enum Kind { kPrepare, kExecute, kSync } kind;
    size_t segment;      // kExecute, kSync: the segment's index (the preparations' sync: past the last)
    const char* sql;     // kPrepare: the statement prepared
  };
  bool Send(std::vector<Sent>& sent);
  void Read(const std::vector<Sent>& sent, std::vector<Status>& out);

  Connection& conn_;
  std::vector<Segment> segments_;
  Segment open_;
};

}  // namespace reins::store::pg
