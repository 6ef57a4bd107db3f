// Typed answers (domain/typed_answer): what a person types back to a question, read
// without guessing. The door's and `reins chat`'s use of it: chat_wire_test, chat_test.
#include "domain/typed_answer.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

std::vector<ClarificationOption> Patients() {
  ClarificationOption older{"p_4471", "Maria Garcia", "born 2 March 1962", std::nullopt, nullptr};
  ClarificationOption younger{"p_5810", "Maria Garcia", "born 2 November 1991", std::nullopt, nullptr};
  ClarificationOption other{"p_2001", "James Okafor", "", std::nullopt, nullptr};
  return {older, younger, other};
}

TEST(TypedAnswerTest, OptionsAreShownNumberedOnTheLinesTheyAreMatchedBy) {
  EXPECT_EQ(NumberedOptions(Patients()),
            "1. Maria Garcia (born 2 March 1962)\n2. Maria Garcia (born 2 November 1991)\n3. James Okafor");
}

TEST(TypedAnswerTest, OneOptionIsFoundByNumberIdLineTitleOrADistinctivePart) {
  const std::vector<ClarificationOption> options = Patients();
  auto chosen = [&](std::string_view answer) -> std::string {
    OptionMatch m = MatchOption(options, answer);
    return m.kind == OptionMatch::Kind::kOne ? options[m.index].id : "";
  };
  EXPECT_EQ(chosen("2"), "p_5810");
  EXPECT_EQ(chosen("#1"), "p_4471");
  EXPECT_EQ(chosen("the second one"), "p_5810");
  EXPECT_EQ(chosen("p_2001"), "p_2001");
  EXPECT_EQ(chosen("Maria Garcia (born 2 November 1991)"), "p_5810");
  EXPECT_EQ(chosen("3. James Okafor"), "p_2001");
  EXPECT_EQ(chosen("james okafor"), "p_2001");
  EXPECT_EQ(chosen("the 1962 one"), "p_4471");
}

TEST(TypedAnswerTest, AnAnswerThatFitsSeveralOrNoneMatchesNothingAndIsAskedAgain) {
  const std::vector<ClarificationOption> options = Patients();
  EXPECT_EQ(MatchOption(options, "maria garcia").kind, OptionMatch::Kind::kSeveral);
  EXPECT_EQ(MatchOption(options, "4").kind, OptionMatch::Kind::kNone);
  EXPECT_EQ(MatchOption(options, "the one in Ohio").kind, OptionMatch::Kind::kNone);
  EXPECT_EQ(MatchOption(options, "not the 1991 one").kind, OptionMatch::Kind::kNone) << "a negation is not a choice";
  Clarification c;
  c.question = "Which Maria Garcia?";
  c.options = options;
  const std::string again = AskAgain(c, MatchOption(options, "maria garcia"));
  EXPECT_NE(again.find("more than one"), std::string::npos) << again;
  EXPECT_NE(again.find("Which Maria Garcia? Answer with its number:"), std::string::npos) << again;
}

TEST(TypedAnswerTest, AnApprovalIsAnsweredYesOrNoInWords) {
  for (const char* yes : {"yes", "Yes!", "y", "approve", "ok", "go ahead", "yes please"}) {
    EXPECT_EQ(TypedDecision(yes), true) << yes;
  }
  for (const char* no : {"no", "N", "deny", "no thanks", "don't"}) EXPECT_EQ(TypedDecision(no), false) << no;
  for (const char* unclear : {"maybe", "what is it?", "", "yes and no"}) EXPECT_FALSE(TypedDecision(unclear)) << unclear;
}

}  // namespace
}  // namespace reins
