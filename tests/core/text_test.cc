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

TEST(EqualsNoCase, FoldsAsciiLettersOnly) {
  EXPECT_TRUE(EqualsNoCase("Content-Length", "content-length"));
  EXPECT_TRUE(EqualsNoCase("", ""));
  EXPECT_FALSE(EqualsNoCase("host", "hosts"));
  EXPECT_FALSE(EqualsNoCase("Transfer-Encoding", "transfer_encoding"));
  EXPECT_FALSE(EqualsNoCase("\xC3\x89", "\xC3\xA9")) << "UTF-8 is compared as it is";
  EXPECT_FALSE(EqualsNoCase("@", "`")) << "only A-Z fold";
}

}  // namespace
}  // namespace reins
