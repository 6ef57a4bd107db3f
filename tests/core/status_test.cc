// Status and Result: a Result is a value or an error, never neither.
#include "reins/status.h"

#include <gtest/gtest.h>

#include <string>

#include "support/run_sync.h"

namespace reins {
namespace {

TEST(ResultTest, HoldsAValueOrAnError) {
  Result<int> value = 7;
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, 7);
  Result<int> error = NotFound("no such session");
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.status().code(), StatusCode::kNotFound);
}

TEST(ResultTest, BuiltFromAnOkStatusItIsAnInternalError) {
  Result<std::string> half = OkStatus();
  ASSERT_FALSE(half.ok()) << "a Result without a value must not read as OK";
  EXPECT_EQ(half.status().code(), StatusCode::kInternal);
  EXPECT_NE(half.status().message().find("OK status"), std::string::npos);
}

Result<int> Twice(Result<int> in) {
  REINS_ASSIGN_OR_RETURN(int v, std::move(in));
  return v * 2;
}

Status Check(Status in) {
  REINS_RETURN_IF_ERROR(in);
  return OkStatus();
}

TEST(ResultTest, TheMacrosPassErrorsOnAndValuesThrough) {
  EXPECT_EQ(*Twice(21), 42);
  EXPECT_EQ(Twice(Unavailable("down")).status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Check(OkStatus()).ok());
  EXPECT_EQ(Check(Aborted("cut")).code(), StatusCode::kAborted);
}

Task<Result<int>> CoTwice(Result<int> in) {
  REINS_CO_ASSIGN_OR_RETURN(int v, std::move(in));
  co_return v * 2;
}

Task<Status> CoCheck(Status in) {
  REINS_CO_RETURN_IF_ERROR(in);
  co_return OkStatus();
}

TEST(ResultTest, TheCoroutineMacrosDoTheSame) {
  EXPECT_EQ(*testing::RunSync(CoTwice(21)), 42);
  EXPECT_EQ(testing::RunSync(CoTwice(Unavailable("down"))).status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(testing::RunSync(CoCheck(OkStatus())).ok());
  EXPECT_EQ(testing::RunSync(CoCheck(Aborted("cut"))).code(), StatusCode::kAborted);
}

}  // namespace
}  // namespace reins
