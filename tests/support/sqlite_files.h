// A test's own SQLite database file under /tmp, and the files SQLite keeps beside it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace reins::testing {

// "/tmp/reins_<prefix>_<pid>_<test>.db": one file per test and process, so that tests
// run in parallel never share one. A parameterised test's "/" becomes "_".
inline std::string TestDatabasePath(std::string_view prefix) {
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (char& c : test) c = c == '/' ? '_' : c;
  return "/tmp/reins_" + std::string(prefix) + "_" + std::to_string(::getpid()) + "_" + test + ".db";
}

// The database at `path` gone, with its write-ahead log and its shared-memory index.
inline void RemoveDatabaseFiles(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

}  // namespace reins::testing
