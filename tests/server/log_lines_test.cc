// The server's log lines (server/responses.h).
#include <gtest/gtest.h>

#include <sstream>

#include "server/responses.h"

namespace reins {
namespace {

// The request and turn lines are written straight to text: byte for byte Log's lines.
TEST(LogLines, AreWhatLogWritesFromTheDom) {
  ServerRequest req;
  req.method = "POST";
  req.path = "/v1/sessions/s\"1/turns";
  req.remote = "127.0.0.1:5";
  TurnResult r;
  r.turn_id = "t-1";
  r.status = TurnStatus::kCompleted;
  r.model_calls = 2;
  r.tools.resize(1);
  const int64_t now = 1700000000123;
  testing::internal::CaptureStderr();
  LogRequest(req, "/v1/sessions/{id}/turns", 200, 12, "acme", now);
  Log({{"msg", "request"}, {"method", req.method}, {"path", req.path}, {"route", "/v1/sessions/{id}/turns"},
       {"status", 200}, {"ms", int64_t{12}}, {"tenant", "acme"}, {"remote", req.remote}},
      now);
  LogTurn("s-1", r, now);
  Log({{"msg", "turn"}, {"session_id", "s-1"}, {"turn_id", r.turn_id}, {"status", TurnStatusName(r.status)},
       {"model_calls", r.model_calls}, {"tools", r.tools.size()}},
      now);
  std::istringstream lines(testing::internal::GetCapturedStderr());
  std::string request, request_dom, turn, turn_dom;
  std::getline(lines, request);
  std::getline(lines, request_dom);
  std::getline(lines, turn);
  std::getline(lines, turn_dom);
  EXPECT_EQ(request, request_dom);
  EXPECT_EQ(turn, turn_dom);
  EXPECT_NE(request.find("\"status\":200"), std::string::npos) << request;
}

}  // namespace
}  // namespace reins
