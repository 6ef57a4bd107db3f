#include "net/sse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace reins {
namespace {

std::vector<SseEvent> ParseInPieces(const std::string& stream, size_t piece) {
  SseParser parser;
  std::vector<SseEvent> out;
  for (size_t i = 0; i < stream.size(); i += piece) {
    parser.Feed(std::string_view(stream).substr(i, piece), [&](SseEvent&& e) { out.push_back(std::move(e)); });
  }
  return out;
}

TEST(SseParser, SplitsEventsWhateverTheChunking) {
  const std::string stream =
      "event: content_block_delta\r\ndata: {\"text\":\"Gr\xC3\xBC\xC3\x9F" "e\"}\r\n\r\n"
      ": heartbeat\n\n"
      "data: line one\ndata: line two\nid: 7\n\n"
      "data: [DONE]\n\n";
  for (size_t piece : {1, 2, 3, 5, 7, 1000}) {
    auto events = ParseInPieces(stream, piece);
    ASSERT_EQ(events.size(), 3u) << "piece " << piece;
    EXPECT_EQ(events[0].event, "content_block_delta");
    EXPECT_EQ(events[0].data, "{\"text\":\"Gr\xC3\xBC\xC3\x9F" "e\"}");
    EXPECT_EQ(events[1].data, "line one\nline two");
    EXPECT_EQ(events[1].id, "7");
    EXPECT_EQ(events[2].data, "[DONE]");
    EXPECT_EQ(events[2].event, "");
  }
}

TEST(SseParser, HoldsAnUnfinishedEventBack) {
  SseParser parser;
  int n = 0;
  parser.Feed("data: {\"a\":", [&](SseEvent&&) { ++n; });
  EXPECT_EQ(n, 0);
  EXPECT_GT(parser.buffered(), 0u);
  parser.Feed("1}\n\n", [&](SseEvent&& e) {
    ++n;
    EXPECT_EQ(e.data, "{\"a\":1}");
  });
  EXPECT_EQ(n, 1);
}

TEST(SseParser, IgnoresEventsWithoutData) {
  auto events = ParseInPieces("event: ping\n\nretry: 100\n\ndata:x\n\n", 4);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "x");
}

}  // namespace
}  // namespace reins
