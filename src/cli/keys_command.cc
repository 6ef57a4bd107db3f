// `reins keys add TENANT`: a new API key for `reins serve --keys FILE`. The key is
// printed once; only its SHA-256 is stored.
#include <iostream>

#include "cli/commands.h"
#include "server/keys.h"

namespace reins {

int KeysAddCommand(const std::string& keys_file, const std::string& tenant) {
  Result<std::string> key = AddKey(keys_file, tenant);
  if (!key.ok()) {
    std::cerr << key.status().message() << "\n";
    return 1;
  }
  std::cout << *key << "\n";
  std::cerr << "A new key for tenant '" << tenant << "' (shown only once; its SHA-256 is in " << keys_file
            << "). Send it as: Authorization: Bearer <key>\n";
  return 0;
}

}  // namespace reins
