#include "net/io_threads.h"

#include <atomic>

namespace reins {
namespace {

namespace asio = boost::asio;

class IoThreads final : public asio::execution_context::service {
 public:
  static asio::execution_context::id id;
  explicit IoThreads(asio::execution_context& context) : service(context) {}
  std::atomic<asio::io_context*> multi_threaded{nullptr};

 private:
  void shutdown() override {}
};
asio::execution_context::id IoThreads::id;

}  // namespace

void DeclareIoThreads(asio::io_context& io, int threads) {
  asio::use_service<IoThreads>(io).multi_threaded = threads > 1 ? &io : nullptr;
}

asio::io_context* MultiThreadedIoContext(asio::execution_context& context) {
  if (!asio::has_service<IoThreads>(context)) return nullptr;
  return asio::use_service<IoThreads>(context).multi_threaded;
}

}  // namespace reins
