#include "pipeline/spare_blocks.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace reins {
namespace {

struct Block : FromSpareBlocks<Block> {
  char bytes[2000];
};

// Under AddressSanitizer every block goes back to malloc, whose quarantine keeps a freed
// block from being handed out again at once: a use after free stays visible.
TEST(SpareBlocksTest, AFreedBlockServesTheNextObjectOfItsTypeOnItsThreadButUnderAsan) {
  auto* first = new Block;
  void* const at = first;
  delete first;
  auto* second = new Block;
#ifndef __SANITIZE_ADDRESS__
  EXPECT_EQ(static_cast<void*>(second), at);
#else
  EXPECT_NE(static_cast<void*>(second), at);
#endif
  delete second;
}

#ifndef __SANITIZE_ADDRESS__

TEST(SpareBlocksTest, AnotherThreadDoesNotGetThisThreadsBlocks) {
  auto* kept = new Block;
  void* const at = kept;
  delete kept;  // now this thread's spare
  void* elsewhere = nullptr;
  std::thread([&] {
    auto* b = new Block;
    elsewhere = b;
    delete b;
  }).join();
  EXPECT_NE(elsewhere, at);
  delete new Block;  // takes the spare back
}

TEST(SpareBlocksTest, KeepsSixteenBlocksOfOneSizeAndNoOther) {
  SpareBlocks spare;
  std::vector<void*> given;
  for (int i = 0; i < 20; ++i) given.push_back(::operator new(64));
  for (void* b : given) spare.Give(b, 64);  // the last four go back to malloc
  for (int i = 15; i >= 0; --i) EXPECT_EQ(spare.Take(64), given[static_cast<size_t>(i)]) << i;
  void* odd = ::operator new(64);
  spare.Give(odd, 64);
  void* larger = spare.Take(128);
  EXPECT_NE(larger, odd) << "a block of another size is never handed out";
  ::operator delete(larger);
  for (int i = 0; i < 16; ++i) ::operator delete(given[static_cast<size_t>(i)]);
}

#endif

}  // namespace
}  // namespace reins
