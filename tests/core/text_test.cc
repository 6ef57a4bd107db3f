// The plain-text helpers of domain/text.h that no other test reaches directly.
#include "domain/text.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

TEST(Clipped, KeepsWhatFitsAndCutsTheRestToExactlyMaxBytes) {
  EXPECT_EQ(Clipped("", 10), "");
  EXPECT_EQ(Clipped("exactly10!", 10), "exactly10!");
  EXPECT_EQ(Clipped("eleven byte", 10), "eleven ...");
  EXPECT_EQ(Clipped(std::string(500, 'x'), 400).size(), 400u);
}

}  // namespace
}  // namespace reins
