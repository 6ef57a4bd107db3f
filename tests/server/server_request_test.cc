#include <gtest/gtest.h>

#include "server/http_server.h"

namespace reins {
namespace {

TEST(ServerRequest, AHeaderIsFoundByItsLowerCaseNameTheLastOneWinning) {
  ServerRequest req;
  req.AddHeader("Content-Type", "application/json");
  req.AddHeader("Content", "not the type");
  req.AddHeader("X-Tenant", "acme");
  req.AddHeader("x-tenant", "globex");
  req.AddHeader("Idempotency-Key", "");
  EXPECT_EQ(req.Header("content-type"), "application/json");
  EXPECT_EQ(req.Header("content"), "not the type") << "a name is not a prefix of another";
  EXPECT_EQ(req.Header("x-tenant"), "globex") << "the last of repeated fields, as a map assigned in order";
  EXPECT_EQ(req.Header("idempotency-key"), "");
  EXPECT_EQ(req.Header("authorization"), "");
  EXPECT_EQ(req.Header("content-typ"), "");
  EXPECT_EQ(ServerRequest{}.Header("host"), "");
}

}  // namespace
}  // namespace reins
