// `reins keys add TENANT [--speaker NAME]... [--role NAME]...`: a new API key for `reins
// serve --keys FILE`, speaking for any speaker or only those named, in the roles named
// (docs/security.md, "API keys"). The key is printed once; only its SHA-256 is stored.
#include <iostream>

#include "cli/commands.h"
#include "server/keys.h"

namespace reins {

int KeysAddCommand(const std::string& keys_file, const std::string& tenant, const std::vector<std::string>& speakers,
                   const std::vector<std::string>& roles) {
  Result<std::string> key = AddKey(keys_file, tenant, speakers, roles);
  if (!key.ok()) {
    std::cerr << key.status().message() << "\n";
    return 1;
  }
  std::cout << *key << "\n";
  std::string limits;
  for (const std::string& s : speakers) limits += (limits.empty() ? "" : ", ") + s;
  if (!limits.empty()) limits = "; it speaks only as " + limits;
  std::string as;
  for (const std::string& r : roles) as += (as.empty() ? "" : ", ") + r;
  if (!as.empty()) limits += "; its roles: " + as;
  std::cerr << "A new key for tenant '" << tenant << "' (shown only once; its SHA-256 is in " << keys_file << limits
            << "). Send it as: Authorization: Bearer <key>\n";
  return 0;
}

}  // namespace reins
