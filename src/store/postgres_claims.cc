// PostgresStore's session claims (a replica takes a session for one turn; the commit's
// fence checks the claim: postgres_commit.cc) and the floor lease's own reads and
// compare-and-set, outside any turn.
#include <algorithm>
#include <string>
#include <vector>

#include "store/pg_connection.h"
#include "store/pg_store_rows.h"
#include "store/postgres_store.h"
#include "store/row_json.h"

namespace reins {

using store::pg::Connection;
using store::pg::Int;
using store::pg::Rows;
using store::pg::Text;

// The server's clock decides when a claim lapses: replicas' clocks may disagree.
constexpr const char* kServerNowMs = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

// One claim is a batch of one: the statement is ClaimSessions'.
Result<std::optional<SessionClaim>> PostgresStore::ClaimSession(const std::string& session_id, const std::string& owner,
                                                                int64_t ttl_ms) {
  const ClaimRequest ask{session_id, owner, ttl_ms};
  return std::move(ClaimSessions({&ask}).front());
}

std::vector<Result<std::optional<SessionClaim>>> PostgresStore::ClaimSessions(const std::vector<const ClaimRequest*>& asks) {
  // The first ask of each session, in the sessions' order: two batches of claims that
  // overlap lock their rows in one order, so neither waits on the other in a cycle.
  std::vector<size_t> order;
  for (size_t i = 0; i < asks.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return asks[a]->session_id < asks[b]->session_id; });
  order.erase(std::unique(order.begin(), order.end(),
                          [&](size_t a, size_t b) { return asks[a]->session_id == asks[b]->session_id; }),
              order.end());
  std::vector<std::string> ids, owners;
  std::vector<int64_t> ttls;
  for (size_t i : order) {
    ids.push_back(asks[i]->session_id);
    owners.push_back(asks[i]->owner);
    ttls.push_back(asks[i]->ttl_ms);
  }
  // A session asked for again gets nullopt: the ask before it has the claim.
  std::vector<Result<std::optional<SessionClaim>>> out(asks.size(), std::optional<SessionClaim>());
  const Status called = Call([&](Connection& c) -> Status {
    for (size_t i : order) out[i] = std::optional<SessionClaim>();  // a retried call starts over
    const std::string what = "cannot claim " + std::to_string(ids.size()) + " session(s)";
    REINS_ASSIGN_OR_RETURN(
        Rows r, c.Exec(std::string("UPDATE sessions SET claim_owner = a.owner, claim_token = sessions.claim_token + 1, "
                                   "claim_until = ") + kServerNowMs + " + a.ttl "
                       "FROM unnest($1::text[], $2::text[], $3::bigint[]) AS a(id, owner, ttl) "
                       "WHERE sessions.id = a.id AND (sessions.claim_owner IS NULL OR sessions.claim_until <= " +
                           kServerNowMs + ") "
                       "RETURNING sessions.id, sessions.claim_token, sessions.turn_count, EXISTS (SELECT 1 FROM notices "
                       "WHERE notices.session_id = sessions.id AND delivered_turn_id IS NULL)",
                       {store::pg::TextArray(ids), store::pg::TextArray(owners), store::pg::IntArray(ttls)}, what));
    std::vector<bool> claimed(ids.size());
    auto index_of = [&](const std::string& id) {
      return static_cast<size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
    };
    for (int row = 0; row < r.size(); ++row) {
      const size_t k = index_of(r.Str(row, 0));
      if (k == ids.size()) continue;
      claimed[k] = true;
      const SessionClaim claim{r.Int(row, 1), static_cast<int>(r.Int(row, 2)), r.Str(row, 3) == "t"};
      out[order[k]] = std::optional<SessionClaim>(claim);
    }
    // Not claimed: another replica holds it (nullopt), or there is no such session.
    std::vector<std::string> unclaimed;
    for (size_t k = 0; k < ids.size(); ++k) {
      if (!claimed[k]) unclaimed.push_back(ids[k]);
    }
    if (unclaimed.empty()) return {};
    REINS_ASSIGN_OR_RETURN(Rows found, c.Exec("SELECT id FROM sessions WHERE id = ANY($1::text[])",
                                              {store::pg::TextArray(unclaimed)}, what));
    std::vector<bool> exists(ids.size());
    for (int row = 0; row < found.size(); ++row) {
      if (const size_t k = index_of(found.Str(row, 0)); k < ids.size()) exists[k] = true;
    }
    for (size_t k = 0; k < ids.size(); ++k) {
      if (!claimed[k] && !exists[k]) out[order[k]] = store::SessionNotFound(ids[k]);
    }
    return {};
  });
  if (!called.ok()) {
    for (auto& claim : out) claim = called;
  }
  return out;
}

Status PostgresStore::ReleaseSession(const std::string& session_id, int64_t token) {
  return Call([&](Connection& c) -> Status {
    return c.Exec("UPDATE sessions SET claim_owner = NULL WHERE id = $1 AND claim_token = $2",
                  {Text(session_id), Int(token)}, "cannot release session '" + session_id + "'")
        .status();
  });
}

Result<Lease> PostgresStore::LoadLease(const std::string& session_id) {
  Lease lease;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    REINS_ASSIGN_OR_RETURN(Rows r, c.Exec("SELECT owner, domain, expires_at, version FROM leases WHERE session_id = $1",
                                          {Text(session_id)}, "cannot load the lease of session '" + session_id + "'"));
    lease = Lease{};
    if (r.size() > 0) {
      lease.owner = r.Str(0, 0);
      lease.domain = r.Str(0, 1);
      lease.expires_at_ms = r.Int(0, 2);
      lease.version = r.Int(0, 3);
    }
    return {};
  }));
  return lease;
}

Result<int64_t> PostgresStore::SetLease(const std::string& session_id, const Lease& lease, int64_t expected_version) {
  int64_t version = 0;
  REINS_RETURN_IF_ERROR(Call([&](Connection& c) -> Status {
    store::pg::Transaction tx(c, "cannot set the lease of session '" + session_id + "'");
    REINS_RETURN_IF_ERROR(tx.begun());
    REINS_ASSIGN_OR_RETURN(bool exists, store::pg::SessionExists(c, session_id));
    if (!exists) return store::SessionNotFound(session_id);
    REINS_ASSIGN_OR_RETURN(version, store::pg::CompareAndSetLease(c, session_id, lease, expected_version));
    return tx.Commit();
  }));
  return version;
}

}  // namespace reins
