// HttpClient::Impl and what an exchange is made of, shared by the client's files:
//   http_request_wire.cc  a request as it goes on the wire, and its deadlines
//   http_pool.cc          connections: opened, kept in the pool, taken again
//   http_exchange.cc      one exchange: the request sent, the answer read (streamed or whole)
//   http_client.cc        HttpClient's calls
// Only those files include it: it brings Boost.Beast and asio's TLS.
#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "domain/await_into.h"
#include "net/http_client.h"
#include "net/socket_deadline.h"
#include "net/url.h"

namespace reins {
namespace outbound {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// One open connection, plain or TLS.
struct Connection {
  std::optional<tcp::socket> plain;
  std::unique_ptr<beast::ssl_stream<tcp::socket>> tls;
  beast::flat_buffer buffer;
  // How many bytes the largest response on this connection took (up to 16 KB), so that
  // the next one is read in one call: left alone, the buffer stays at Beast's first read
  // of 512 bytes, and a model's answer of 700 took two reads, each with its own timer
  // (round 7). The largest, not the last: the buffer is freed between responses, and a
  // tool call and the answer after it differ in length.
  size_t read_hint = 0;
  Clock::time_point keep_until;  // while pooled: reused only before this
  // From a request's last byte to its answer's head. Declared last: it ends before the
  // socket closes, also when an exchange is abandoned with its connection.
  SocketDeadline first_byte;

  tcp::socket& socket() { return tls ? tls->next_layer() : *plain; }
};

// The deadline arithmetic of one exchange: each phase waits for its own timeout or
// what is left of the total, whichever is shorter.
class Deadlines {
 public:
  explicit Deadlines(const HttpTimeouts& t) : t_(t), end_(Clock::now() + std::chrono::milliseconds(t.total_ms)) {}
  // The deadline of a phase.
  Clock::time_point Begin(int phase_ms, const char* phase) {
    auto phase_end = Clock::now() + std::chrono::milliseconds(phase_ms);
    total_is_shorter_ = end_ < phase_end;
    phase_ = phase;
    phase_ms_ = phase_ms;
    return std::min(phase_end, end_);
  }
  std::string Describe() const {
    if (total_is_shorter_) return "total timeout of " + std::to_string(t_.total_ms) + " ms";
    return std::string(phase_) + " timeout of " + std::to_string(phase_ms_) + " ms";
  }
  const HttpTimeouts& timeouts() const { return t_; }

 private:
  HttpTimeouts t_;
  Clock::time_point end_;
  bool total_is_shorter_ = false;
  const char* phase_ = "";
  int phase_ms_ = 0;
};

// A request as it goes on the wire: the head formatted once and the body taken from the
// caller, written together in one call. Formatted here rather than by Beast's
// serializer, whose buffer sequences cost about 17 k instructions per message
// (docs/PERFORMANCE.md, round 7).
struct WireRequest {
  std::string head;
  std::string body;

  std::array<asio::const_buffer, 2> Buffers() const { return {asio::buffer(head), asio::buffer(body)}; }
  // Gives their memory back: an empty string assigned would leave it allocated.
  void Free() {
    std::string().swap(head);
    std::string().swap(body);
  }
};

// What an exchange sends, and to whom: built before it starts (HttpClient::Send, not a
// coroutine) and kept on the heap, so that the frame of an exchange waiting on its
// response holds a pointer (GCC keeps every local and temporary of a coroutine, those of
// this preparation included, in its frame for the coroutine's whole life).
struct Outgoing {
  std::shared_ptr<const Url> url;  // HttpClient::Impl::Parsed
  http::verb verb = http::verb::post;
  // What a retry on a fresh connection sends again. Where `again` can build it again (a
  // model provider's request), the head and the body are freed once written, so that a
  // turn waiting on its model holds neither (docs/PERFORMANCE.md, round 23); a retry
  // whose request comes back a different length is given up.
  WireRequest wire;
  std::function<HttpRequest()> again;
  size_t head_bytes = 0;
  size_t body_bytes = 0;
  // A streamed exchange's callbacks (HttpClient::Stream); none for HttpClient::Send.
  struct Streamed {
    BodyChunkFn on_chunk;
    HeadersFn on_headers;
  };
  std::unique_ptr<Streamed> streamed;
};

// "POST http://host:port/path", for errors: built when one is, not kept by every
// exchange while it waits.
std::string What(const Outgoing& out);
// The pool's key: origin and io_context (a connection belongs to the one it was opened on).
std::string PoolKey(const Url& url, const asio::execution_context& context);
// How long a connection may wait in the pool after this response: `fallback_ms`, or
// less when the server announced when it closes idle ones (`Keep-Alive: timeout=N`,
// seconds), a second before that so that a request never races the server's close.
int KeepAliveMs(std::string_view keep_alive, int fallback_ms);
// What an exchange of `request` sends, to `url`; an error for a request that cannot go.
Result<std::unique_ptr<Outgoing>> Prepare(HttpRequest& request, Result<std::shared_ptr<const Url>> url,
                                          size_t max_request_bytes);
// The request again for a retry, when it was freed once written; false when it cannot be
// had byte for byte (the retry is then given up).
bool WholeAgain(Outgoing& out);

}  // namespace outbound

struct HttpClient::Impl : std::enable_shared_from_this<HttpClient::Impl> {
  using Connection = outbound::Connection;
  using Deadlines = outbound::Deadlines;
  using Outgoing = outbound::Outgoing;
  using Clock = outbound::Clock;

  Options options;
  outbound::ssl::context tls_context{outbound::ssl::context::tls_client};
  std::once_flag system_cas_loaded;
  std::mutex mu;
  // Per pool key, oldest first: connections come back at the end and are taken from it.
  std::map<std::string, std::deque<std::unique_ptr<Connection>>> idle;
  int opened = 0;
  // URLs as parsed, shared by the exchanges that go to them: a model provider sends every
  // request to one URL, and each exchange waiting on its answer kept a parse of its own
  // (four strings and the path's heap block, 160 bytes). Bounded by forgetting all at
  // kMaxParsedUrls. Under mu.
  static constexpr size_t kMaxParsedUrls = 64;
  std::unordered_map<std::string, std::shared_ptr<const Url>> parsed_urls;

  explicit Impl(Options o) : options(std::move(o)) {
    if (!options.ca_file.empty()) tls_context.load_verify_file(options.ca_file);
    tls_context.set_verify_mode(outbound::ssl::verify_peer);
  }

  // The system's CA store is read on the first TLS connection: parsing it takes about
  // 50 ms, which every process that made a client paid at start (reins serve took
  // 105 ms to listen, 52 without it), also with a model on plain HTTP. Should it fail,
  // the handshake does, saying the certificate could not be verified.
  outbound::ssl::context& Tls() {
    std::call_once(system_cas_loaded, [this] {
      boost::system::error_code failed;
      tls_context.set_default_verify_paths(failed);
    });
    return tls_context;
  }

  Result<std::shared_ptr<const Url>> Parsed(const std::string& text) {
    std::lock_guard lock(mu);
    if (auto known = parsed_urls.find(text); known != parsed_urls.end()) return known->second;
    REINS_ASSIGN_OR_RETURN(Url url, ParseUrl(text));
    if (parsed_urls.size() >= kMaxParsedUrls) parsed_urls.clear();
    auto parsed = std::make_shared<const Url>(std::move(url));
    parsed_urls.emplace(text, parsed);
    return parsed;
  }

  // The most recently returned connection, unless its time is up (then so is every
  // older one's, and they are all closed).
  std::unique_ptr<Connection> TakeIdle(const std::string& key) {
    // Closed after the lock is released. A vector: an empty deque allocates, and this
    // runs on every exchange.
    std::vector<std::unique_ptr<Connection>> expired;
    std::lock_guard lock(mu);
    auto it = idle.find(key);
    if (it == idle.end() || it->second.empty()) return nullptr;
    if (it->second.back()->keep_until <= Clock::now()) {
      std::move(it->second.begin(), it->second.end(), std::back_inserter(expired));
      it->second.clear();
      return nullptr;
    }
    auto c = std::move(it->second.back());
    it->second.pop_back();
    return c;
  }

  void GiveBack(outbound::asio::execution_context* context, const std::string& key, std::unique_ptr<Connection> c,
                const HttpResponse& response);

  // Pooled sockets must not outlive their io_context: drop them when it shuts down.
  void DropContext(outbound::asio::execution_context* context) {
    std::vector<std::unique_ptr<Connection>> doomed;
    std::lock_guard lock(mu);
    watched.erase(context);
    std::string suffix = "@" + std::to_string(reinterpret_cast<uintptr_t>(context));
    for (auto it = idle.begin(); it != idle.end();) {
      if (it->first.ends_with(suffix)) {
        for (auto& c : it->second) doomed.push_back(std::move(c));
        it = idle.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::set<outbound::asio::execution_context*> watched;

  Task<Result<std::unique_ptr<Connection>>> Open(const Url& url, Deadlines& deadlines);
  // Open's connection put into `c`, or why there is none into `failed` (false): the
  // exchange's frame, which waits on the model, keeps no result of Open's.
  Task<bool> OpenInto(const Url& url, Deadlines& deadlines, std::unique_ptr<Connection>& c,
                      Result<HttpResponse>& failed);
  // `self` keeps the pool alive while the exchange runs. The answer goes to `response`,
  // the caller's: returned, it would have a place in this frame, which waits on the
  // server (a model thinks for seconds), besides the one in the caller's.
  Task<void> Exchange(std::shared_ptr<Impl> self, std::unique_ptr<Outgoing> out, HttpTimeouts timeouts,
                      Result<HttpResponse>& response);
  // An exchange whose response is returned, for callers that await it (Send, Stream).
  Task<Result<HttpResponse>> Returned(std::shared_ptr<Impl> self, std::unique_ptr<Outgoing> out, HttpTimeouts timeouts);
  // The request sent; false, why not put into `failed`, when it could not be.
  Task<bool> SendOn(Connection& c, Outgoing& out, Deadlines& deadlines, Result<HttpResponse>& failed);
  // `got_bytes`: the answer's head came (the server had the request). `reusable`: the
  // connection may serve another request.
  Task<Result<HttpResponse>> ReadOn(Connection& c, Outgoing& out, Deadlines& deadlines, bool* got_bytes,
                                    bool* reusable);
  // ReadOn's answer put into `into` (AwaitInto), so that the exchange's frame, which
  // waits on the model, keeps no result of its own. Not a coroutine: ReadOn's task would
  // be one more temporary of the exchange's frame.
  Task<void> ReadInto(Connection& c, Outgoing& out, Deadlines& deadlines, bool* got_bytes, bool* reusable,
                      Result<HttpResponse>& into) {
    return AwaitInto(ReadOn(c, out, deadlines, got_bytes, reusable), into);
  }
  template <typename AsyncStream>
  Task<bool> SendRequest(AsyncStream& stream, Connection& c, Outgoing& out, Deadlines& deadlines,
                         Result<HttpResponse>& failed);
  template <typename AsyncStream>
  Task<Result<HttpResponse>> ReadResponse(AsyncStream& stream, Connection& c, Outgoing& out, Deadlines& deadlines,
                                          bool* got_bytes, bool* reusable);
};

}  // namespace reins
