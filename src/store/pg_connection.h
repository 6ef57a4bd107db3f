// PostgreSQL plumbing for PostgresStore, on libpq's C API. Internal to src/store/.
//
// A Connection runs one statement at a time (prepared once per connection, then
// reused); a Pool lends a bounded number of them to whichever thread asks and opens
// a fresh one where the server dropped the old (a restart). Every statement is bounded
// by the server-side statement_timeout set when the connection opens. Calls block the
// calling thread for the statement's round trip.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "reins/status.h"

struct pg_conn;
struct pg_result;

namespace reins::store::pg {

// A statement parameter in libpq's text format; nullopt is SQL NULL. Text is made
// storable first: PostgreSQL refuses NUL bytes and invalid UTF-8 (SQLite keeps them),
// so both become U+FFFD rather than failing a turn.
using Param = std::optional<std::string>;
Param Text(std::string_view text);
Param Int(int64_t value);
inline Param Null() { return std::nullopt; }
// Arrays, for a statement over many rows (`unnest($1::text[])`): each element quoted
// and escaped as an array literal wants.
Param TextArray(const std::vector<Param>& texts);  // a nullopt element is NULL
Param TextArray(const std::vector<std::string>& texts);
Param IntArray(const std::vector<int64_t>& values);

// The rows of one statement's result.
class Rows {
 public:
  explicit Rows(pg_result* result);
  ~Rows();
  Rows(Rows&& other) noexcept;
  Rows& operator=(Rows&&) = delete;
  Rows(const Rows&) = delete;

  int size() const;
  bool IsNull(int row, int column) const;
  std::string Str(int row, int column) const;  // NULL reads as ""
  int64_t Int(int row, int column) const;
  int64_t affected() const;  // rows an INSERT/UPDATE/DELETE touched
  pg_result* get() const { return result_; }

 private:
  pg_result* result_;
};

// Settings from the store URL's query (stripped before libpq sees the URL).
struct Options {
  int pool_size = 8;
  int statement_timeout_ms = 5000;
  int connect_timeout_s = 5;
  // How long a deferred call may stay `running` before another replica takes it over
  // (PostgresStore::ClaimOutbox): longer than any deferred tool's timeout_ms, or a slow
  // call is delivered twice (with the same idempotency key).
  int outbox_lapse_ms = 5 * 60 * 1000;
};

// Splits "postgres://u@h/db?pool_size=4&sslmode=disable" into the URL libpq is given
// and the options reins reads itself (pool_size, statement_timeout_ms, connect_timeout_s,
// outbox_lapse_ms).
Result<std::pair<std::string, Options>> ParseStoreUrl(const std::string& url);

class Connection {
 public:
  static Result<std::unique_ptr<Connection>> Open(const std::string& url, const Options& options);
  ~Connection();

  // Runs `sql` ($1, $2... placeholders). Errors map the SQLSTATE: unique violation
  // AlreadyExists, foreign key FailedPrecondition (with "foreign key" in the message),
  // statement timeout DeadlineExceeded, serialization failure, deadlock and a lost
  // connection Unavailable, a guard of reins' own (reins_expect_row: SQLSTATE RN001)
  // Aborted with its message, anything else Internal; `what` names the operation.
  Result<Rows> Exec(const std::string& sql, const std::vector<Param>& params, const std::string& what);
  // Runs SQL without parameters or preparation (BEGIN, DDL, several statements).
  Status Run(const std::string& sql, const std::string& what);

  // libpq's handle, for what the statement API does not cover (LISTEN's notifications).
  pg_conn* raw() const { return conn_; }
  bool ok() const;    // the connection is up (false once the server dropped it)
  bool idle() const;  // up and not inside a transaction: fit to lend again
  // Nothing succeeded on it since it was lent: a failure then, on a connection that is
  // down, means it died while idle in the pool (a server restart) and the caller may
  // safely try again on a fresh one.
  bool untouched() const { return succeeded_ == 0; }

 private:
  friend class Pool;
  friend class Pipeline;
  explicit Connection(pg_conn* conn) : conn_(conn) {}
  Status Failure(pg_result* result, const std::string& what) const;

  pg_conn* conn_;
  std::unordered_map<std::string, std::string> prepared_;  // SQL -> statement name
  int succeeded_ = 0;
};

// BEGIN ... COMMIT on one connection; rolls back unless Commit() succeeded.
class Transaction {
 public:
  Transaction(Connection& conn, const std::string& what);
  ~Transaction();
  Status begun() const { return begun_; }
  Status Commit();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

 private:
  Connection& conn_;
  std::string what_;
  Status begun_;
  bool done_ = false;
};

class Pool {
 public:
  Pool(std::string url, Options options) : url_(std::move(url)), options_(options) {}
  ~Pool();

  // A connection lent to one caller; back to the pool when destroyed. A connection
  // that broke while lent is closed instead, and the next caller gets a fresh one.
  class Lent {
   public:
    Lent(Pool* pool, std::unique_ptr<Connection> conn) : pool_(pool), conn_(std::move(conn)) {}
    Lent(Lent&&) = default;
    ~Lent();
    Connection& operator*() const { return *conn_; }
    Connection* operator->() const { return conn_.get(); }

   private:
    Pool* pool_;
    std::unique_ptr<Connection> conn_;
  };

  // Waits (up to the statement timeout) for a free connection when all are lent.
  Result<Lent> Acquire();
  const Options& options() const { return options_; }
  const std::string& url() const { return url_; }

 private:
  void Return(std::unique_ptr<Connection> conn);

  const std::string url_;
  const Options options_;
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mu_
  int open_ = 0;                                   // guarded by mu_: idle + lent
};

}  // namespace reins::store::pg
