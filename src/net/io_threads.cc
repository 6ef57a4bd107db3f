#include "net/io_threads.h"

#include <atomic>

#include <boost/asio/strand.hpp>

namespace reins {
namespace {

namespace asio = boost::asio;

class IoThreads final : public asio::execution_context::service {
 public:
  static asio::execution_context::id id;
  explicit IoThreads(asio::execution_context& context) : service(context) {}
  std::atomic<asio::io_context*> multi_threaded{nullptr};
  std::atomic<int> threads{0};  // 0: not declared

 private:
  void shutdown() override {}
};
asio::execution_context::id IoThreads::id;

}  // namespace

void DeclareIoThreads(asio::io_context& io, int threads) {
  IoThreads& declared = asio::use_service<IoThreads>(io);
  declared.multi_threaded = threads > 1 ? &io : nullptr;
  declared.threads = threads;
}

asio::io_context* MultiThreadedIoContext(asio::execution_context& context) {
  if (!asio::has_service<IoThreads>(context)) return nullptr;
  return asio::use_service<IoThreads>(context).multi_threaded;
}

asio::any_io_executor SerialExecutor(asio::io_context& io) {
  if (asio::has_service<IoThreads>(io) && asio::use_service<IoThreads>(io).threads == 1) return io.get_executor();
  return asio::make_strand(io);
}

}  // namespace reins
