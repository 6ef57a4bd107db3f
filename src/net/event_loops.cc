#include "net/event_loops.h"

#include <algorithm>
#include <thread>

#include "net/io_threads.h"

namespace reins {

EventLoops::EventLoops(int threads) {
  for (int i = 0; i < std::max(1, threads); ++i) {
    loops_.push_back(std::make_unique<boost::asio::io_context>(1));
    DeclareIoThreads(*loops_.back(), 1);
    busy_.push_back(boost::asio::make_work_guard(*loops_.back()));
  }
}

EventLoops::~EventLoops() { Stop(); }

std::vector<boost::asio::io_context*> EventLoops::all() const {
  std::vector<boost::asio::io_context*> out;
  for (const auto& loop : loops_) out.push_back(loop.get());
  return out;
}

void EventLoops::Run() {
  std::vector<std::thread> threads;
  for (size_t i = 1; i < loops_.size(); ++i) threads.emplace_back([loop = loops_[i].get()] { loop->run(); });
  loops_.front()->run();
  for (std::thread& t : threads) t.join();
}

void EventLoops::Stop() {
  for (const auto& loop : loops_) loop->stop();
}

}  // namespace reins
