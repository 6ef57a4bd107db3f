// test_postgres_server start|stop FILE: the ctest fixture `postgres` (one server for
// every test of a run; tests/support/test_postgres.h).
#include <iostream>
#include <string>

#include "support/test_postgres.h"

int main(int argc, char** argv) {
  const std::string verb = argc == 3 ? argv[1] : "";
  if (verb == "start") {
    reins::testing::TestPostgres::StartForFixture(argv[2]);
  } else if (verb == "stop") {
    reins::testing::TestPostgres::StopForFixture(argv[2]);
  } else {
    std::cerr << "usage: test_postgres_server start|stop FILE\n";
    return 2;
  }
  return 0;
}
