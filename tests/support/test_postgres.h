// A throwaway PostgreSQL server for tests: the real server from Debian's postgresql
// package, initialised in a temporary directory and started on a free port. The server
// refuses to run as root, so under root it runs as `nobody`. Each test takes a fresh
// database of its own (NewDatabase), so tests never see each other's rows.
#pragma once

#include <memory>
#include <string>

namespace reins::testing {

class TestPostgres {
 public:
  // The server every test of the run shares: the one the ctest fixture `postgres`
  // started (its address in the file named by REINS_TEST_POSTGRES), or else one this
  // program starts on first use and stops at exit. Aborts with the server's log when
  // it cannot start.
  static TestPostgres& Shared();
  // A server of the caller's own, for tests that restart or stop it.
  static std::unique_ptr<TestPostgres> StartOwn();
  // The fixture's side (test_postgres_server start|stop FILE): starts a server and
  // writes its address to `file`; stops the server `file` names.
  static void StartForFixture(const std::string& file);
  static void StopForFixture(const std::string& file);

  // A new empty database; its name (Url gives postgres://reins@127.0.0.1:PORT/NAME).
  std::string NewDatabase();
  // The URL of database `name` with `query` (libpq's or reins' options) appended.
  std::string Url(const std::string& name, const std::string& query = "") const;
  // Runs one SQL statement on database `name` as the superuser; returns the first
  // column of the first row ("" when none). Aborts the test program on an error.
  std::string Query(const std::string& name, const std::string& sql) const;
  // Stops the server (fast shutdown: connections are dropped) and starts it again on
  // the same port and data, as an operator's restart does.
  void Restart();
  // Stops the server (`mode`: pg_ctl's -m, "immediate" is a crash) and starts it again
  // on the same port and data, for a test that acts while it is down.
  void Stop(const std::string& mode);
  void StartAgain();
  int port() const { return port_; }

  ~TestPostgres();

 private:
  TestPostgres() = default;
  void Start();
  static TestPostgres Attach(const std::string& file);
  std::string Ctl(const std::string& args) const;  // a pg_ctl command line

  std::string bin_;  // the server's bin directory
  std::string dir_;  // data, socket and logs
  std::string as_;   // "runuser -u nobody -- " under root, "" otherwise
  int port_ = 0;
  int databases_ = 0;
  bool owned_ = true;  // stopped and removed by the destructor
};

}  // namespace reins::testing
