#include "store/pg_connection.h"

#include <libpq-fe.h>

#include <charconv>
#include <cstring>
#include <utility>

namespace reins::store::pg {
namespace {

// Length of the valid UTF-8 sequence at `s[i]`, or 0 when it is not one.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

bool Storable(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8Length(s, i);
    if (n == 0 || s[i] == '\0') return false;
    i += n;
  }
  return true;
}

// SQLSTATE classes: https://www.postgresql.org/docs/15/errcodes-appendix.html
StatusCode CodeOf(std::string_view state) {
  if (state == "23505") return StatusCode::kAlreadyExists;       // unique_violation
  if (state == "23503") return StatusCode::kFailedPrecondition;  // foreign_key_violation
  if (state == "57014") return StatusCode::kDeadlineExceeded;    // query_canceled (statement_timeout)
  if (state == "RN001") return StatusCode::kAborted;             // reins_expect_row (pg_migrations.cc)
  if (state == "40001" || state == "40P01" || state == "55P03") return StatusCode::kUnavailable;  // retry later
  if (state.starts_with("08") || state.starts_with("57P")) return StatusCode::kUnavailable;     // connection, shutdown
  return StatusCode::kInternal;
}

std::string Trimmed(const char* message) {
  std::string out = message != nullptr ? message : "";
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace

Param Text(std::string_view text) {
  if (Storable(text)) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8Length(text, i);
    if (n == 0 || text[i] == '\0') {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

Param Int(int64_t value) { return std::to_string(value); }

Param TextArray(const std::vector<Param>& texts) {
  size_t size = 2;
  for (const Param& text : texts) size += (text ? text->size() + 3 : 5);
  std::string out = "{";
  out.reserve(size + size / 8);  // JSON's quotes take an escape each
  for (const Param& text : texts) {
    if (out.size() > 1) out += ',';
    if (!text) {
      out += "NULL";
      continue;
    }
    out += '"';
    const Param storable = Text(*text);
    std::string_view rest = *storable;
    for (size_t at; (at = rest.find_first_of("\"\\")) != std::string_view::npos; rest.remove_prefix(at + 1)) {
      out.append(rest.substr(0, at)).append(1, '\\').append(1, rest[at]);
    }
    out.append(rest).append(1, '"');
  }
  out += '}';
  return out;
}

Param TextArray(const std::vector<std::string>& texts) {
  return TextArray(std::vector<Param>(texts.begin(), texts.end()));
}

Param IntArray(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (int64_t value : values) {
    if (out.size() > 1) out += ',';
    out += std::to_string(value);
  }
  return out + "}";
}

Rows::Rows(pg_result* result) : result_(result) {}
Rows::~Rows() {
  if (result_ != nullptr) PQclear(result_);
}
Rows::Rows(Rows&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
int Rows::size() const { return PQntuples(result_); }
bool Rows::IsNull(int row, int column) const { return PQgetisnull(result_, row, column) != 0; }
std::string Rows::Str(int row, int column) const {
  return std::string(PQgetvalue(result_, row, column), static_cast<size_t>(PQgetlength(result_, row, column)));
}
int64_t Rows::Int(int row, int column) const {
  const char* text = PQgetvalue(result_, row, column);
  int64_t value = 0;
  std::from_chars(text, text + std::strlen(text), value);
  return value;
}
int64_t Rows::affected() const {
  const char* text = PQcmdTuples(result_);
  int64_t value = 0;
  std::from_chars(text, text + std::strlen(text), value);
  return value;
}

Result<std::pair<std::string, Options>> ParseStoreUrl(const std::string& url) {
  Options options;
  const size_t query = url.find('?');
  if (query == std::string::npos) return std::make_pair(url, options);
  std::string kept;
  std::string_view rest(url);
  rest.remove_prefix(query + 1);
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const size_t eq = pair.find('=');
    const std::string_view key = pair.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    int* setting = key == "pool_size"              ? &options.pool_size
                   : key == "statement_timeout_ms" ? &options.statement_timeout_ms
                   : key == "connect_timeout_s"    ? &options.connect_timeout_s
                   : key == "outbox_lapse_ms"      ? &options.outbox_lapse_ms
                                                   : nullptr;
    if (setting == nullptr) {
      kept += (kept.empty() ? "?" : "&") + std::string(pair);  // libpq's own (sslmode, connect_timeout...)
      continue;
    }
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), *setting);
    if (ec != std::errc() || end != value.data() + value.size() || *setting <= 0) {
      return InvalidArgument("store URL option '" + std::string(pair) + "' needs a positive whole number");
    }
  }
  return std::make_pair(url.substr(0, query) + kept, options);
}

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& url, const Options& options) {
  // expand_dbname: the URL fills every setting it names; the keywords after it add ours.
  const std::string timeout = "-c statement_timeout=" + std::to_string(options.statement_timeout_ms);
  const std::string connect = std::to_string(options.connect_timeout_s);
  const char* keys[] = {"dbname", "options", "connect_timeout", "application_name", nullptr};
  const char* values[] = {url.c_str(), timeout.c_str(), connect.c_str(), "reins", nullptr};
  pg_conn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) return Unavailable("cannot connect to PostgreSQL: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = Trimmed(PQerrorMessage(conn));
    PQfinish(conn);
    return Unavailable("cannot connect to PostgreSQL: " + message);
  }
  // The server's NOTICEs ("relation already exists, skipping") are not errors; libpq
  // would print them on stderr.
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<Connection>(new Connection(conn));
}

Connection::~Connection() { PQfinish(conn_); }

bool Connection::ok() const { return PQstatus(conn_) == CONNECTION_OK; }
bool Connection::idle() const { return ok() && PQtransactionStatus(conn_) == PQTRANS_IDLE; }

Status Connection::Failure(pg_result* result, const std::string& what) const {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = Trimmed(result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn_));
  if (message.empty()) message = Trimmed(PQerrorMessage(conn_));
  StatusCode code = state != nullptr ? CodeOf(state) : StatusCode::kUnavailable;  // no SQLSTATE: the link failed
  if (!ok()) code = StatusCode::kUnavailable;
  if (const char* own = code == StatusCode::kAborted ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr) {
    message = own;  // reins' own words, without the server's "ERROR:"
  }
  return Status(code, what + ": " + message);
}

Result<Rows> Connection::Exec(const std::string& sql, const std::vector<Param>& params, const std::string& what) {
  auto [slot, fresh] = prepared_.try_emplace(sql, "r" + std::to_string(prepared_.size() + 1));
  if (fresh) {
    Rows prepared(PQprepare(conn_, slot->second.c_str(), sql.c_str(), static_cast<int>(params.size()), nullptr));
    const ExecStatusType status = PQresultStatus(prepared.get());
    if (status != PGRES_COMMAND_OK) {
      Status failed = Failure(prepared.get(), what);
      prepared_.erase(slot);
      return failed;
    }
  }
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Param& p : params) values.push_back(p ? p->c_str() : nullptr);
  Rows rows(PQexecPrepared(conn_, slot->second.c_str(), static_cast<int>(values.size()), values.data(), nullptr,
                           nullptr, /*resultFormat=*/0));
  const ExecStatusType status = PQresultStatus(rows.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return Failure(rows.get(), what);
  ++succeeded_;
  return rows;
}

Status Connection::Run(const std::string& sql, const std::string& what) {
  Rows rows(PQexec(conn_, sql.c_str()));
  const ExecStatusType status = PQresultStatus(rows.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) return Failure(rows.get(), what);
  ++succeeded_;
  return {};
}

Transaction::Transaction(Connection& conn, const std::string& what)
    : conn_(conn), what_(what), begun_(conn.Run("BEGIN", what)) {}

Transaction::~Transaction() {
  if (!done_ && begun_.ok() && conn_.ok()) (void)conn_.Run("ROLLBACK", what_);
}

Status Transaction::Commit() {
  done_ = true;
  return conn_.Run("COMMIT", what_);
}

Pool::~Pool() = default;

Pool::Lent::~Lent() {
  if (pool_ != nullptr && conn_ != nullptr) pool_->Return(std::move(conn_));
}

void Pool::Return(std::unique_ptr<Connection> conn) {
  std::lock_guard lock(mu_);
  if (conn->idle()) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;  // broken, or left mid-transaction: close it; the next caller opens a new one
  }
  freed_.notify_one();
}

Result<Pool::Lent> Pool::Acquire() {
  std::unique_lock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.statement_timeout_ms);
  while (idle_.empty() && open_ >= options_.pool_size) {
    if (freed_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() && open_ >= options_.pool_size) {
      return Unavailable("all " + std::to_string(options_.pool_size) +
                         " PostgreSQL connections stayed busy; raise pool_size in the store URL");
    }
  }
  if (!idle_.empty()) {
    std::unique_ptr<Connection> conn = std::move(idle_.back());
    idle_.pop_back();
    conn->succeeded_ = 0;
    return Lent(this, std::move(conn));
  }
  ++open_;
  lock.unlock();
  Result<std::unique_ptr<Connection>> opened = Connection::Open(url_, options_);
  if (!opened.ok()) {
    std::lock_guard relock(mu_);
    --open_;
    freed_.notify_one();
    return opened.status();
  }
  return Lent(this, std::move(opened).value());
}

}  // namespace reins::store::pg
