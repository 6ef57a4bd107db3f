#include "policy/floor/floor_policy.h"

#include <gtest/gtest.h>

#include "policy/rails/rail_text.h"

namespace reins {
namespace {

class AdmissionGateTest : public ::testing::Test {
 protected:
  AdmissionGateTest() : cancel_(CompilePatterns(Json::array({R"((?i)^\s*(stop|cancel)\b)"}))) {
    lease_ = {"alice", "music", 10'000, 3};
  }
  AdmitVerdict::Kind Decide(const std::string& speaker, const std::string& text, int64_t now = 5'000) {
    return DecideAdmission(lease_, speaker, text, now, cancel_).kind;
  }
  std::vector<std::unique_ptr<RE2>> cancel_;
  Lease lease_;
};

TEST_F(AdmissionGateTest, AdmitsTheOwnerWhileLeaseActive) {
  EXPECT_EQ(Decide("alice", "the Cohen one"), AdmitVerdict::Kind::kAdmit);
}

TEST_F(AdmissionGateTest, BlocksOtherSpeakerWhileLeaseActive) {
  AdmitVerdict v = DecideAdmission(lease_, "bob", "play Despacito", 5'000, cancel_);
  EXPECT_EQ(v.kind, AdmitVerdict::Kind::kBlock);
  EXPECT_EQ(v.reason, "floor held by alice (music) until 1970-01-01T00:00:10Z");
}

TEST_F(AdmissionGateTest, CancelByOwnerCancels) { EXPECT_EQ(Decide("alice", "Stop please"), AdmitVerdict::Kind::kCancel); }

TEST_F(AdmissionGateTest, CancelByOtherSpeakerIsBlocked) { EXPECT_EQ(Decide("bob", "stop"), AdmitVerdict::Kind::kBlock); }

TEST_F(AdmissionGateTest, ExpiredLeaseAdmitsEveryone) {
  EXPECT_EQ(Decide("bob", "play jazz", 10'000), AdmitVerdict::Kind::kAdmit);
  EXPECT_EQ(Decide("alice", "stop", 10'001), AdmitVerdict::Kind::kAdmit);  // nothing left to cancel
}

TEST_F(AdmissionGateTest, NoLeaseAdmitsEveryone) {
  lease_ = Lease{};
  EXPECT_EQ(Decide("bob", "stop"), AdmitVerdict::Kind::kAdmit);
  EXPECT_EQ(Decide("carol", "hello"), AdmitVerdict::Kind::kAdmit);
}

}  // namespace
}  // namespace reins
