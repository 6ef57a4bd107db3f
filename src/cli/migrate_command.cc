// reins migrate --store URL: brings a store's schema up to date and says so. Opening a
// store migrates it anyway (serve, run, chat do it at start); this is the explicit step
// an operator runs before rolling out replicas, or to see that a database is usable.
// reins migrate --from sqlite:PATH --to postgres://...: moves a one-process deployment's
// sessions to the database its replicas will share.
#include <iostream>
#include <string_view>

#include "cli/commands.h"
#include "reins/store.h"
#include "store/store_copy.h"

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

int MigrateCopyCommand(const std::string& from_url, const std::string& to_url) {
  if (!from_url.starts_with("sqlite:") || from_url == "sqlite::memory:") {
    std::cerr << "--from must be a SQLite file store, sqlite:PATH (got '" << from_url << "')\n";
    return 2;
  }
  if (!to_url.starts_with("postgres://") && !to_url.starts_with("postgresql://")) {
    std::cerr << "--to must be a PostgreSQL store, postgres://USER@HOST:PORT/DB (got '" << to_url << "')\n";
    return 2;
  }
  std::string path = from_url.substr(std::string_view("sqlite:").size());
  if (const size_t query = path.find('?'); query != std::string::npos) path.resize(query);
  std::cerr << "copying " << path << " into PostgreSQL in one transaction...\n";
  Status copied = store::CopySqliteToPostgres(path, to_url, [](const store::CopyCount& count) {
    std::cout << "  " << count.table << ": " << count.rows << " rows\n";
  });
  if (!copied.ok()) {
    std::cerr << "cannot copy the store, no session was copied: " << copied.message() << "\n";
    return 1;
  }
  std::cout << "copied; point the replicas at the PostgreSQL store\n";
  return 0;
}

}  // namespace reins
