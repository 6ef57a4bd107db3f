// The identifiers untrusted_data traces (policy/untrusted/outside_values.h): a table of
// real-shaped values, each with what it must read as, and near misses that must not
// read as one.
#include "policy/untrusted/outside_values.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

std::vector<std::string> Keys(std::string_view text) {
  std::vector<std::string> keys;
  for (const Identifier& id : FindIdentifiers(text)) keys.push_back(id.key);
  return keys;
}

struct Case {
  const char* text;
  std::vector<std::string> keys;
};

TEST(OutsideValues, RealShapedIdentifiersReadAsTheirNormalisedKeys) {
  const std::vector<Case> cases = {
      // e-mail addresses: case folded
      {"Send it to Mark.Black-2134@Gmail.com please.", {"email:mark.black-2134@gmail.com"}},
      {"cc: jane_doe+billing@mail.example.co.uk", {"email:jane_doe+billing@mail.example.co.uk"}},
      // URLs: scheme, www. and a trailing slash or full stop dropped; the host too
      {"Visit https://www.True-Informations.com/verify?id=7.",
       {"url:true-informations.com/verify?id=7", "host:true-informations.com"}},
      {"see www.secure-bank-verify.com", {"url:secure-bank-verify.com", "host:secure-bank-verify.com"}},
      {"(http://203.0.113.5:8080/x)", {"url:203.0.113.5:8080/x", "host:203.0.113.5"}},
      // bare host names, with a known top-level domain
      {"Log in at secure-bank-verify.com now", {"host:secure-bank-verify.com"}},
      {"mail WWW.Example.ORG", {"url:example.org", "host:example.org"}},
      // IBANs: with or without the spaces of print
      {"IBAN UK12345678901234567890.", {"iban:UK12345678901234567890"}},
      {"to GB82 WEST 1234 5698 7654 32 by Friday", {"iban:GB82WEST12345698765432"}},
      {"US133000000121212121212", {"iban:US133000000121212121212"}},
      // phone and account numbers: digits, the last ten
      {"Call +1 (555) 123-4567 today", {"phone:5551234567"}},
      {"call 555-123-4567", {"phone:5551234567"}},
      {"account 0012 3456 7890", {"phone:1234567890"}},
      // tokens: 8+ characters mixing letters and digits, case folded
      {"your code is ORD-7731X9 and key sk_live_4eC39HqLyjWDarjtT1zdp7dc",
       {"token:ord-7731x9", "token:sk_live_4ec39hqlyjwdarjtt1zdp7dc"}},
      {"the order AB12CD34", {"token:ab12cd34"}},
      {"bill-december-2023.txt", {"token:bill-december-2023"}},  // a file name with digits is a token too
      {"call me at 555-1234", {"phone:5551234"}},                // seven digits: a local number
  };
  for (const Case& c : cases) EXPECT_EQ(Keys(c.text), c.keys) << c.text;
}

TEST(OutsideValues, NearMissesAreNoIdentifiers) {
  const std::vector<const char*> none = {
      "The amount is 98.70 and the total 1234567.89",   // sums of money
      "on 2024-05-13 at 10:30, or 13/05/2024",          // dates and times
      "2024-05-13T10:30:00Z",                           // a timestamp
      "open notes.md and run.sh, then main.py",         // file names are not hosts
      "call me at 12-34",                               // too few digits for a number
      "password123",                                    // a token needs 8 characters... and this has 11: see below
  };
  for (size_t i = 0; i + 1 < none.size(); ++i) {
    EXPECT_TRUE(Keys(none[i]).empty()) << none[i] << " -> " << (Keys(none[i]).empty() ? "" : Keys(none[i])[0]);
  }
  // "password123" mixes letters and digits over 8 characters: a token, as an API key would be.
  EXPECT_EQ(Keys("password123"), std::vector<std::string>{"token:password123"});
  EXPECT_TRUE(Keys("Meeting").empty());
  EXPECT_TRUE(Keys("AB12 CDEF").empty());  // too short for an IBAN, too short for a token
}

TEST(OutsideValues, AnIdentifierIsFoundWhereItIsWritten) {
  const std::string text = "Pay UK12345678901234567890 today";
  std::vector<Identifier> ids = FindIdentifiers(text);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(text.substr(ids[0].begin, ids[0].end - ids[0].begin), "UK12345678901234567890");
}

TEST(OutsideValues, WholeValuesOfFourCharactersOrMoreFoldCaseAndSpace) {
  EXPECT_EQ(WholeValueKey("  Riverside View "), "value:riverside view");
  EXPECT_FALSE(WholeValueKey("abc").has_value());
  EXPECT_FALSE(WholeValueKey("1100.00").has_value());  // a number written as text is a number
  EXPECT_FALSE(WholeValueKey("2024").has_value());
  const std::string long_value(200, 'x');
  std::optional<std::string> key = WholeValueKey(long_value);
  ASSERT_TRUE(key.has_value());
  EXPECT_TRUE(key->starts_with("value#"));
  EXPECT_EQ(key, WholeValueKey(std::string(200, 'X')));
}

TEST(OutsideValues, EveryStringLeafGivesItsWholeValueAndItsIdentifiers) {
  Json result = {{"from", "Mark <mark@evil.example>"}, {"amount", 98.7}, {"lines", {"Visit evil.example now", "ok"}}};
  std::vector<std::string> keys;
  ForEachKey(result, [&](const std::string& key) {
    keys.push_back(key);
    return true;
  });
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"email:mark@evil.example", "host:evil.example", "value:mark <mark@evil.example>",
                                            "value:visit evil.example now"}));
}

TEST(OutsideValues, TheTrustedCorpusReadsThePersonsWordsWordBoundedAndCaseAside) {
  TrustedCorpus corpus;
  corpus.AddText("Please book the Riverside View for me and mail Ana@Example.com");
  EXPECT_TRUE(corpus.Holds("value:riverside view", "riverside VIEW"));
  EXPECT_FALSE(corpus.Holds("value:riverside vie", "Riverside Vie"));  // not a whole word there
  EXPECT_TRUE(corpus.Holds("email:ana@example.com", "ana@example.com"));
  EXPECT_FALSE(corpus.Holds("email:bob@example.com", "bob@example.com"));
  corpus.AddValue(Json{{"iban", "GB82 WEST 1234 5698 7654 32"}});
  EXPECT_TRUE(corpus.Holds("iban:GB82WEST12345698765432", "GB82WEST12345698765432"));
}

}  // namespace
}  // namespace reins
