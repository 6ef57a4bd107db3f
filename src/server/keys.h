// API keys for `reins serve`: a keys file maps tenant -> SHA-256 hashes of its keys
// (the keys themselves are never stored). `reins keys add TENANT` makes a new key.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "reins/status.h"

namespace reins {

std::string Sha256Hex(std::string_view data);

class KeyStore {
 public:
  // keys.yaml: `tenants: { TENANT: [sha256 hex, ...] }`. NotFound when the file is
  // missing; InvalidArgument (with the file name and what is wrong) when malformed.
  static Result<KeyStore> Load(const std::string& path);
  // The tenant a presented key belongs to, "" when unknown. Constant-time comparison.
  std::string Authenticate(std::string_view key) const;
  size_t size() const { return hashes_.size(); }

 private:
  std::vector<std::pair<std::string, std::string>> hashes_;  // (hash, tenant)
};

// Generates a new key for `tenant` ("rk_" + 43 base64url characters), adds its hash to
// the keys file (created if missing, mode 0600, replaced atomically) and returns it.
Result<std::string> AddKey(const std::string& path, const std::string& tenant);

}  // namespace reins
