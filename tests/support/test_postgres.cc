#include "support/test_postgres.h"

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace reins::testing {
namespace {

[[noreturn]] void Die(const std::string& what, const std::string& log_path) {
  std::ifstream log(log_path);
  std::stringstream text;
  text << log.rdbuf();
  std::cerr << "test PostgreSQL: " << what << "\n--- " << log_path << " ---\n" << text.str() << std::endl;
  std::abort();
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Debian installs the server outside PATH: /usr/lib/postgresql/<major>/bin.
std::string ServerBin() {
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql")) {
    if (std::filesystem::exists(entry.path() / "bin" / "initdb")) return (entry.path() / "bin").string();
  }
  return "";
}

}  // namespace

TestPostgres& TestPostgres::Shared() {
  static TestPostgres* server = [] {
    const char* file = std::getenv("REINS_TEST_POSTGRES");
    if (file != nullptr && std::filesystem::exists(file)) return new TestPostgres(Attach(file));
    auto* own = new TestPostgres();
    own->Start();
    std::atexit([] { delete &Shared(); });
    return own;
  }();
  return *server;
}

std::unique_ptr<TestPostgres> TestPostgres::StartOwn() {
  std::unique_ptr<TestPostgres> server(new TestPostgres());
  server->Start();
  return server;
}

// The fixture's file holds one line: "BIN DIR PORT RUN_AS_NOBODY".
void TestPostgres::StartForFixture(const std::string& file) {
  TestPostgres server;
  server.Start();
  std::ofstream(file) << server.bin_ << ' ' << server.dir_ << ' ' << server.port_ << ' ' << !server.as_.empty() << '\n';
  server.owned_ = false;  // it outlives this program, until StopForFixture
}

void TestPostgres::StopForFixture(const std::string& file) {
  if (!std::filesystem::exists(file)) return;
  TestPostgres server = Attach(file);
  server.owned_ = true;
  std::filesystem::remove(file);
}

TestPostgres TestPostgres::Attach(const std::string& file) {
  TestPostgres server;
  bool as_nobody = false;
  std::ifstream(file) >> server.bin_ >> server.dir_ >> server.port_ >> as_nobody;
  if (as_nobody) server.as_ = "runuser -u nobody -- ";
  server.owned_ = false;
  return server;
}

void TestPostgres::Start() {
  std::error_code ec;
  bin_ = std::filesystem::exists("/usr/lib/postgresql", ec) ? ServerBin() : "";
  if (bin_.empty()) Die("no server binaries under /usr/lib/postgresql (scripts/install-deps installs them)", "/dev/null");
  char dir[] = "/tmp/reins-pg-XXXXXX";
  dir_ = ::mkdtemp(dir);
  if (::geteuid() == 0) {
    as_ = "runuser -u nobody -- ";
    std::filesystem::permissions(dir_, std::filesystem::perms::all);
    if (std::system(("chown nobody " + dir_).c_str()) != 0) Die("cannot hand " + dir_ + " to nobody", "/dev/null");
  }
  const std::string initdb = as_ + bin_ + "/initdb -D " + dir_ + "/data -U reins -A trust -E UTF8 --locale=C.UTF-8 "
                             "--no-sync > " + dir_ + "/initdb.log 2>&1";
  if (std::system(initdb.c_str()) != 0) Die("initdb failed", dir_ + "/initdb.log");
  port_ = FreePort();
  if (std::system(Ctl("start").c_str()) != 0) Die("the server did not start", dir_ + "/server.log");
}

std::string TestPostgres::Ctl(const std::string& args) const {
  // fsync off: the tests kill reins, never the machine; it halves the test time.
  return as_ + bin_ + "/pg_ctl -D " + dir_ + "/data -l " + dir_ + "/server.log -w -s -o \"-p " +
         std::to_string(port_) + " -k " + dir_ + " -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200\" " +
         args;
}

TestPostgres::~TestPostgres() {
  if (owned_ && !dir_.empty()) {
    (void)std::system((Ctl("stop -m immediate") + " > /dev/null 2>&1").c_str());
    std::filesystem::remove_all(dir_);
  }
}

void TestPostgres::Restart() {
  if (std::system(Ctl("restart -m fast").c_str()) != 0) Die("the server did not restart", dir_ + "/server.log");
}

void TestPostgres::Stop(const std::string& mode) {
  if (std::system(Ctl("stop -m " + mode).c_str()) != 0) Die("the server did not stop", dir_ + "/server.log");
}

void TestPostgres::StartAgain() {
  if (std::system(Ctl("start").c_str()) != 0) Die("the server did not start again", dir_ + "/server.log");
}

std::string TestPostgres::Url(const std::string& name, const std::string& query) const {
  return "postgres://reins@127.0.0.1:" + std::to_string(port_) + "/" + name + (query.empty() ? "" : "?" + query);
}

std::string TestPostgres::Query(const std::string& name, const std::string& sql) const {
  PGconn* conn = PQconnectdb(Url(name).c_str());
  if (PQstatus(conn) != CONNECTION_OK) Die(std::string("cannot connect: ") + PQerrorMessage(conn), dir_ + "/server.log");
  PGresult* r = PQexec(conn, sql.c_str());
  const ExecStatusType status = PQresultStatus(r);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    Die(sql + ": " + PQresultErrorMessage(r), dir_ + "/server.log");
  }
  std::string out = PQntuples(r) > 0 && PQnfields(r) > 0 ? PQgetvalue(r, 0, 0) : "";
  PQclear(r);
  PQfinish(conn);
  return out;
}

std::string TestPostgres::NewDatabase() {
  const std::string name = "t" + std::to_string(::getpid()) + "_" + std::to_string(++databases_);
  Query("postgres", "CREATE DATABASE " + name);
  return name;
}

}  // namespace reins::testing

