// The HTML report's table of critical failures and invariant violations.
#include "eval/eval_report.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

TEST(EvalReportHtml, ListsInvariantsInTheSpecsOrder) {
  Json report = {{"modes",
                  {{{"governor", "off"},
                    {"critical", {{"wrong_recipient", 1}}},
                    {"invariant_violations", {{"I10", 2}, {"I2", 3}, {"I1", 1}, {"I12", 4}}},
                    {"scenarios", Json::array()}},
                   {{"governor", "on"}, {"invariant_violations", Json::object()}, {"scenarios", Json::array()}}}},
                 {"gates", Json::array()}};
  const std::string html = ReportToHtml(report);
  size_t last = 0;
  for (const char* row : {"critical: wrong_recipient", "invariant I1<", "invariant I2<", "invariant I10<", "invariant I12<"}) {
    size_t at = html.find(row);
    ASSERT_NE(at, std::string::npos) << row;
    EXPECT_GT(at, last) << row << " is out of order";
    last = at;
  }
}

}  // namespace
}  // namespace reins
