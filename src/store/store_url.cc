// OpenStore: the store named by a URL (agent YAML `store:`, `reins run --store`).
#include <memory>
#include <string>
#include <string_view>

#include "reins/store.h"
#include "store/postgres_store.h"
#include "store/sqlite_store.h"

namespace reins {

Result<std::unique_ptr<Store>> OpenStore(const std::string& url) {
  constexpr std::string_view kSqlite = "sqlite:";
  if (url.starts_with(kSqlite) && url.size() > kSqlite.size()) {
    // "sqlite::memory:" falls out naturally: its path is SQLite's ":memory:".
    std::string path = url.substr(kSqlite.size());
    auto durability = SqliteStore::Durability::kProcessCrash;
    if (size_t query = path.find('?'); query != std::string::npos) {
      const std::string option = path.substr(query + 1);
      path.resize(query);
      if (option == "synchronous=full") {
        durability = SqliteStore::Durability::kPowerLoss;
      } else if (option != "synchronous=normal") {
        return InvalidArgument("unsupported SQLite store option '" + option +
                               "' in '" + url + "': use ?synchronous=full or ?synchronous=normal");
      }
    }
    Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path, durability);
    if (!store.ok()) return store.status();
    return std::unique_ptr<Store>(std::move(store).value());
  }
  if (url.starts_with("postgres://") || url.starts_with("postgresql://")) {
    Result<std::unique_ptr<PostgresStore>> store = PostgresStore::Open(url);
    if (!store.ok()) return store.status();
    return std::unique_ptr<Store>(std::move(store).value());
  }
  return InvalidArgument("unsupported store URL '" + url +
                         "': use sqlite:PATH, sqlite::memory: or postgres://USER@HOST:PORT/DB");
}

}  // namespace reins
