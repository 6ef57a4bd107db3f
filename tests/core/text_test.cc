// The plain-text helpers of domain/text.h that no other test reaches directly.
#include "domain/text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <random>
#include <string>

namespace reins {
namespace {

TEST(Clipped, KeepsWhatFitsAndCutsTheRestToExactlyMaxBytes) {
  EXPECT_EQ(Clipped("", 10), "");
  EXPECT_EQ(Clipped("exactly10!", 10), "exactly10!");
  EXPECT_EQ(Clipped("eleven byte", 10), "eleven ...");
  EXPECT_EQ(Clipped(std::string(500, 'x'), 400).size(), 400u);
  // "é" is two bytes: a cut that would split it keeps neither.
  EXPECT_EQ(Clipped("caf\xC3\xA9 au lait", 7), "caf...");
}

TEST(EqualsNoCase, FoldsAsciiLettersOnly) {
  EXPECT_TRUE(EqualsNoCase("Content-Length", "content-length"));
  EXPECT_TRUE(EqualsNoCase("", ""));
  EXPECT_FALSE(EqualsNoCase("host", "hosts"));
  EXPECT_FALSE(EqualsNoCase("Transfer-Encoding", "transfer_encoding"));
  EXPECT_FALSE(EqualsNoCase("\xC3\x89", "\xC3\xA9")) << "UTF-8 is compared as it is";
  EXPECT_FALSE(EqualsNoCase("@", "`")) << "only A-Z fold";
}

// Well-formed UTF-8 byte by byte (RFC 3629, table 3-7 of Unicode), to hold the word-at-a-
// time checks against.
bool ReferenceUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    size_t len = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      low = c == 0xE0 ? 0xA0 : 0x80;
      high = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      low = c == 0xF0 ? 0x90 : 0x80;
      high = c == 0xF4 ? 0x8F : 0xBF;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    if (len > 1 && (b(i + 1) < low || b(i + 1) > high)) return false;
    for (size_t k = 2; k < len; ++k) {
      if (b(i + k) < 0x80 || b(i + k) > 0xBF) return false;
    }
    i += len;
  }
  return true;
}

TEST(IsWellFormedUtf8, AgreesWithAByteByByteCheckOnEveryShortStringAndAtEveryLength) {
  // Bytes at the edges of each class: ASCII, continuation, leads of each length, never valid.
  const unsigned char alphabet[] = {'a', 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF,
                                    0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  const size_t k = sizeof alphabet;
  for (size_t n = 1; n <= 3; ++n) {  // every string of one to three of them
    size_t count = 1;
    for (size_t i = 0; i < n; ++i) count *= k;
    for (size_t code = 0; code < count; ++code) {
      std::string s;
      for (size_t i = 0, c = code; i < n; ++i, c /= k) s += static_cast<char>(alphabet[c % k]);
      ASSERT_EQ(IsWellFormedUtf8(s), ReferenceUtf8(s)) << testing::PrintToString(s);
    }
  }
  // Longer ones, mostly ASCII with a character or a stray byte somewhere, so that the
  // word checks see it in a whole word, in the last short run, and in the bytes a short
  // run reads twice.
  const std::string pieces[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\x80", "\xC3", "\xE2\x82",
                                "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xC0\xAF"};
  std::mt19937 rng(7);
  for (int round = 0; round < 20000; ++round) {
    std::string s(rng() % 20, 'x');
    const std::string& piece = pieces[rng() % std::size(pieces)];
    s.insert(rng() % (s.size() + 1), piece);
    if (rng() % 4 == 0) s.insert(rng() % (s.size() + 1), pieces[rng() % std::size(pieces)]);
    ASSERT_EQ(IsWellFormedUtf8(s), ReferenceUtf8(s)) << testing::PrintToString(s);
  }
  EXPECT_TRUE(IsWellFormedUtf8(""));
  EXPECT_TRUE(IsWellFormedUtf8("caf\xC3\xA9"));
  EXPECT_FALSE(IsWellFormedUtf8("caf\xC3"));
}

}  // namespace
}  // namespace reins
