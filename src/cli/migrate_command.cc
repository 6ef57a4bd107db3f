// reins migrate --store URL: brings a store's schema up to date and says so. Opening a
// store migrates it anyway (serve, run, chat do it at start); this is the explicit step
// an operator runs before rolling out replicas, or to see that a database is usable.
#include <iostream>

#include "cli/commands.h"
#include "reins/store.h"

namespace reins {

int MigrateCommand(const std::string& store_url) {
  Result<std::unique_ptr<Store>> store = OpenStore(store_url);
  if (!store.ok()) {
    std::cerr << "cannot migrate the store: " << store.status().message() << "\n";
    return 1;
  }
  std::cout << "the store's schema is up to date\n";
  return 0;
}

}  // namespace reins
