// API keys for `reins serve`: a keys file maps tenant -> SHA-256 hashes of its keys
// (the keys themselves are never stored) and, optionally, the tenant's session quota.
// `reins keys add TENANT` makes a new key.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reins/status.h"

namespace reins {

std::string Sha256Hex(std::string_view data);

class KeyStore {
 public:
  // keys.yaml: `tenants: { TENANT: [sha256 hex, ...] }`, or per tenant
  // `{ keys: [sha256 hex, ...], max_sessions: N }`. NotFound when the file is missing;
  // FailedPrecondition when group or others may write it (as ssh refuses a key file
  // with loose permissions); InvalidArgument (with the file name and what is wrong)
  // when malformed.
  static Result<KeyStore> Load(const std::string& path);
  // The tenant a presented key belongs to, "" when unknown. Constant-time comparison.
  std::string Authenticate(std::string_view key) const;
  // The most sessions `tenant` may create; nullopt: no limit.
  std::optional<int64_t> MaxSessions(const std::string& tenant) const;
  size_t size() const { return hashes_.size(); }

 private:
  std::vector<std::pair<std::string, std::string>> hashes_;  // (hash, tenant)
  std::map<std::string, int64_t> max_sessions_;
};

// Generates a new key for `tenant` ("rk_" + 43 base64url characters), adds its hash to
// the keys file (created if missing, mode 0600, replaced atomically) and returns it.
Result<std::string> AddKey(const std::string& path, const std::string& tenant);

}  // namespace reins
