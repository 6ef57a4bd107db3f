// API keys for `reins serve`: a keys file maps tenant -> SHA-256 hashes of its keys
// (the keys themselves are never stored) and, optionally, the tenant's session quota.
// A key may also name the speakers it speaks for (any other is refused) and the roles
// it acts in (an approval whose approvers list role:NAME admits it); docs/security.md.
// `reins keys add TENANT [--speaker NAME] [--role NAME]` makes a new key.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/digest.h"
#include "reins/status.h"

namespace reins {

class KeyStore {
 public:
  // keys.yaml: `tenants: { TENANT: [sha256 hex, ...] }`, or per tenant
  // `{ keys: [sha256 hex, ...], max_sessions: N }`. NotFound when the file is missing;
  // FailedPrecondition when group or others may write it (as ssh refuses a key file
  // with loose permissions); InvalidArgument (with the file name and what is wrong)
  // when malformed.
  static Result<KeyStore> Load(const std::string& path);
  // What a key may do: its tenant, the speakers it may speak as (empty: any) and the
  // roles it acts in.
  struct Grant {
    std::string hash;
    std::string tenant;
    std::vector<std::string> speakers;
    std::vector<std::string> roles;
    // Whether a turn may be spoken as `speaker` with this key.
    bool SpeaksFor(const std::string& speaker) const;
  };
  // The grant of a presented key, nullptr when unknown. Constant-time comparison.
  const Grant* Authenticate(std::string_view key) const;
  // The most sessions `tenant` may create; nullopt: no limit.
  std::optional<int64_t> MaxSessions(const std::string& tenant) const;
  size_t size() const { return grants_.size(); }

 private:
  std::vector<Grant> grants_;
  std::map<std::string, int64_t> max_sessions_;
};

// Generates a new key for `tenant` ("rk_" + 43 base64url characters), adds its hash (with
// the speakers and roles it is limited to, if any) to the keys file (created if missing,
// mode 0600, replaced atomically) and returns it.
Result<std::string> AddKey(const std::string& path, const std::string& tenant,
                           const std::vector<std::string>& speakers = {}, const std::vector<std::string>& roles = {});

}  // namespace reins
