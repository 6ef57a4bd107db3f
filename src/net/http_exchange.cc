#include <type_traits>

#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>

#include "domain/await_into.h"
#include "net/http_client_impl.h"
#include "net/no_throw.h"
#include "net/wait_readable.h"
#include "net/write_now.h"

namespace reins {
using namespace outbound;
namespace {

// Ends the first-byte deadline: how the wait for the answer (or its head) went. Not in
// a coroutine: the messages' temporaries would be in its frame.
Status EndFirstByteWait(SocketDeadline& first_byte, boost::system::error_code waited, const Outgoing& out,
                        const Deadlines& deadlines) {
  if (first_byte.End()) return DeadlineExceeded(What(out) + ": no response within the " + deadlines.Describe());
  if (waited) return Unavailable(What(out) + ": the connection closed before a response: " + waited.message());
  return OkStatus();
}

// What the socket did not take at once (WriteNow; all of it on a TLS connection),
// under the send timeout. A coroutine of its own: its buffers are not kept in the frame
// of the exchange, which waits on the model.
template <typename AsyncStream>
Task<Status> WriteRest(AsyncStream& stream, tcp::socket& socket, const Outgoing& out, Deadlines& deadlines,
                       size_t sent) {
  SocketDeadline deadline(socket, deadlines.Begin(deadlines.timeouts().idle_ms, "send"));
  beast::buffers_suffix<std::array<asio::const_buffer, 2>> rest(out.wire.Buffers());
  rest.consume(sent);
  auto write = asio::async_write(stream, rest, kNoThrow);
  auto [ec, written] = co_await std::move(write);
  if (deadline.End()) co_return DeadlineExceeded(What(out) + ": " + deadlines.Describe());
  if (ec) co_return Unavailable(What(out) + ": sending the request failed: " + ec.message());
  co_return OkStatus();
}

// The execution context the awaiting coroutine runs on. A coroutine of its own: the
// executor it is read from (56 bytes) would be a temporary of the exchange's frame.
Task<asio::execution_context*> RunningContext() {
  co_return &asio::query(co_await asio::this_coro::executor, asio::execution::context);
}

// How the wait for the answer's first byte ended: false, why put into `response`, when
// it failed. Not in a coroutine: the status would be in its frame.
bool FirstByteCame(SocketDeadline& first_byte, boost::system::error_code waited, const Outgoing& out,
                   const Deadlines& deadlines, Result<HttpResponse>& response) {
  Status head = EndFirstByteWait(first_byte, waited, out, deadlines);
  if (head.ok()) return true;
  response = std::move(head);
  return false;
}

}  // namespace

// Sends the request, frees what `again` can build again, and starts the first-byte
// deadline. The wait for the answer's first bytes is the exchange's own (Exchange).
template <typename AsyncStream>
Task<bool> HttpClient::Impl::SendRequest(AsyncStream& stream, Connection& c, Outgoing& out, Deadlines& deadlines,
                                         Result<HttpResponse>& failed) {
  // A plain connection's socket never blocks: the request usually goes whole here.
  size_t sent = 0;
  if constexpr (std::is_same_v<AsyncStream, tcp::socket>) sent = WriteNow(stream, out.wire.Buffers());
  if (sent < out.wire.head.size() + out.wire.body.size()) {
    Status rest = co_await WriteRest(stream, c.socket(), out, deadlines, sent);
    if (!rest.ok()) {
      failed = std::move(rest);
      co_return false;
    }
  }
  if (out.again) out.wire.Free();
  c.first_byte.Start(c.socket(), deadlines.Begin(deadlines.timeouts().first_byte_ms, "first byte"));
  co_return true;
}

// Reads the answer whose first bytes have come (Exchange waited for them): its head under
// the first-byte deadline SendRequest started, then the body under the idle one between
// reads.
template <typename AsyncStream>
Task<Result<HttpResponse>> HttpClient::Impl::ReadResponse(AsyncStream& stream, Connection& c, Outgoing& out,
                                                          Deadlines& deadlines, bool* got_bytes, bool* reusable) {
  const HttpTimeouts& t = deadlines.timeouts();
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(options.max_response_bytes);
  c.buffer.reserve(c.buffer.size() + c.read_hint);
  // The head has come (Exchange waited for it) and is usually whole: on a plain
  // connection, whose socket never blocks, it is read and parsed here, without an
  // asynchronous read whose completion is one more pass through the io_context.
  boost::system::error_code hec = asio::error::would_block;
  size_t hn = 0;
  if constexpr (std::is_same_v<AsyncStream, tcp::socket>) hn = http::read_header(stream, c.buffer, parser, hec);
  if (hec == asio::error::would_block) {
    auto read = http::async_read_header(stream, c.buffer, parser, kNoThrow);
    auto [rest_ec, rest_n] = co_await std::move(read);
    hec = rest_ec;
    hn += rest_n;
  }
  if (Status head = EndFirstByteWait(c.first_byte, hec, out, deadlines); !head.ok()) co_return head;
  *got_bytes = true;

  HttpResponse response;
  response.status = static_cast<int>(parser.get().result_int());
  size_t head_bytes = 0;
  for (const auto& field : parser.get()) head_bytes += field.name_string().size() + field.value().size() + 4;
  response.headers.reserve(head_bytes);
  for (const auto& field : parser.get()) response.AddHeader(field.name_string(), field.value());
  const bool streaming = out.streamed && response.status >= 200 && response.status < 300;
  if (streaming && out.streamed->on_headers) out.streamed->on_headers(response);
  // The body arrives through a chunk buffer sized to it when its length is known (a model's
  // answer is usually under 1 KB), left uninitialised: zeroing and freeing 16 KB per
  // response (which also made malloc consolidate its free lists) showed in the profile.
  constexpr size_t kChunkBytes = 16 * 1024;
  const auto length = parser.content_length();  // boost::optional
  const size_t chunk_bytes = length && *length > 0 && *length < kChunkBytes ? static_cast<size_t>(*length) : kChunkBytes;
  auto buf = std::make_unique_for_overwrite<char[]>(chunk_bytes);
  if (length && !streaming) response.body.reserve(static_cast<size_t>(std::min<uint64_t>(*length, 64 * 1024)));
  size_t consumed = hn;
  while (!parser.is_done()) {
    parser.get().body().data = buf.get();
    parser.get().body().size = chunk_bytes;
    // As the head: what has come is read here, and only a wait goes through the io_context.
    boost::system::error_code rec = asio::error::would_block;
    size_t rn = 0;
    if constexpr (std::is_same_v<AsyncStream, tcp::socket>) rn = http::read_some(stream, c.buffer, parser, rec);
    if (rec == asio::error::would_block) {
      SocketDeadline idle(c.socket(), deadlines.Begin(t.idle_ms, "idle"));
      auto read = http::async_read_some(stream, c.buffer, parser, kNoThrow);
      auto [aec, an] = co_await std::move(read);
      rec = idle.End() ? beast::error::timeout : aec;
      rn += an;
    }
    consumed += rn;
    if (rec == http::error::need_buffer) rec = {};
    size_t got = chunk_bytes - parser.get().body().size;
    if (got > 0) {
      std::string_view piece(buf.get(), got);
      if (streaming) {
        if (Status s = out.streamed->on_chunk(piece); !s.ok()) co_return s;
      } else {
        response.body.append(piece);
      }
    }
    if (rec == http::error::body_limit) {
      co_return ResourceExhausted(What(out) + ": the response is larger than " + std::to_string(options.max_response_bytes) + " bytes");
    }
    if (rec == beast::error::timeout) co_return DeadlineExceeded(What(out) + ": the response stalled: " + deadlines.Describe());
    if (rec) co_return Aborted(What(out) + ": the connection failed mid-response: " + rec.message());
  }
  *reusable = parser.keep_alive();
  c.read_hint = std::max(c.read_hint, std::min(consumed, kChunkBytes));
  co_return response;
}

// Plain functions that pick the stream to await (a coroutine of each for a plain and a
// TLS connection), so that the exchange's frame holds one result of each, not two.
Task<bool> HttpClient::Impl::SendOn(Connection& c, Outgoing& out, Deadlines& deadlines, Result<HttpResponse>& failed) {
  if (c.tls) return SendRequest(*c.tls, c, out, deadlines, failed);
  return SendRequest(*c.plain, c, out, deadlines, failed);
}

Task<Result<HttpResponse>> HttpClient::Impl::ReadOn(Connection& c, Outgoing& out, Deadlines& deadlines,
                                                    bool* got_bytes, bool* reusable) {
  if (c.tls) return ReadResponse(*c.tls, c, out, deadlines, got_bytes, reusable);
  return ReadResponse(*c.plain, c, out, deadlines, got_bytes, reusable);
}

Task<bool> HttpClient::Impl::OpenInto(const Url& url, Deadlines& deadlines, std::unique_ptr<Connection>& c,
                                      Result<HttpResponse>& failed) {
  Result<std::unique_ptr<Connection>> opened = co_await Open(url, deadlines);
  if (!opened.ok()) {
    failed = opened.status();
    co_return false;
  }
  c = std::move(*opened);
  co_return true;
}

Task<void> HttpClient::Impl::Exchange(std::shared_ptr<Impl> /*self*/, std::unique_ptr<Outgoing> out,
                                      HttpTimeouts timeouts, Result<HttpResponse>& response) {
  // Connections belong to the io_context they were opened on.
  asio::execution_context& context = *co_await RunningContext();
  Deadlines deadlines(timeouts);

  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<Connection> c = attempt == 0 ? TakeIdle(PoolKey(*out->url, context)) : nullptr;
    bool pooled = c != nullptr;
    if (!c) {
      if (!co_await OpenInto(*out->url, deadlines, c, response)) co_return;
    }
    bool got_bytes = false, reusable = false;
    bool sent = co_await SendOn(*c, *out, deadlines, response);
    if (sent && c->buffer.size() == 0) {
      // While the server thinks (a model takes seconds), nothing is allocated for reading
      // its answer: a thousand turns waiting on one each held a response parser, Beast's
      // read operation, the connection's read buffer and the request's body
      // (docs/PERFORMANCE.md, round 15). The wait is in this frame, which waits anyway:
      // in SendRequest's, its 290 bytes waited too (round 23).
      c->buffer.shrink_to_fit();  // ReadResponse allocates it again, sized by read_hint
      auto wait = WaitReadable(c->socket());
      auto [waited] = co_await std::move(wait);
      if (waited || c->first_byte.passed()) sent = FirstByteCame(c->first_byte, waited, *out, deadlines, response);
    }
    if (sent) co_await ReadInto(*c, *out, deadlines, &got_bytes, &reusable, response);
    c->first_byte.End();  // already, unless the exchange failed first
    // A kept-alive connection the server closed meanwhile fails before any byte:
    // open a fresh one once. The request never reached a handler, so this is safe.
    if (!response.ok() && pooled && !got_bytes && response.status().code() == StatusCode::kUnavailable &&
        WholeAgain(*out)) {
      continue;
    }
    if (response.ok() && reusable) GiveBack(&context, PoolKey(*out->url, context), std::move(c), *response);
    co_return;
  }
}

Task<Result<HttpResponse>> HttpClient::Impl::Returned(std::shared_ptr<Impl> self, std::unique_ptr<Outgoing> out,
                                                      HttpTimeouts timeouts) {
  Result<HttpResponse> response = HttpResponse{};
  co_await Exchange(std::move(self), std::move(out), timeouts, response);
  co_return response;
}

}  // namespace reins
