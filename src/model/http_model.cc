#include "model/http_model.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <re2/re2.h>

#include "domain/await_into.h"
#include "domain/detail_log.h"
#include "net/io_threads.h"
#include "net/url.h"

namespace reins {

struct HttpModel::Attempt {
  std::unique_ptr<StreamAssembler> assembler;
  bool emitted_text = false;  // once text reached the caller, a retry would repeat it
  // A server that answers a streamed request with one JSON body (it does not stream):
  // the body, read whole.
  bool whole = false;
  std::string body;
};

namespace {

namespace asio = boost::asio;

// A stream read on a strand of its own hands its text to the caller's strand (where the
// turn, its reply stream and its rails live). Text that arrives while a hand-off is
// already on its way joins it, so a busy caller takes one hop for many chunks; the
// caller gets every piece, in order, before the exchange returns to it.
class TextHandoff : public std::enable_shared_from_this<TextHandoff> {
 public:
  TextHandoff(asio::any_io_executor caller, const std::function<void(std::string_view)>& deliver)
      : caller_(std::move(caller)), deliver_(deliver) {}

  // On the reading strand.
  void Add(std::string_view text) {
    {
      std::lock_guard lock(mu_);
      pending_.append(text);
      if (posted_) return;
      posted_ = true;
    }
    asio::post(caller_, [self = shared_from_this()] { self->Deliver(); });
  }

  // On the caller's strand once the stream has ended: the rest of the text, and what
  // delivering any of it threw.
  void Close() {
    Deliver();
    closed_ = true;
    if (thrown_) std::rethrow_exception(std::exchange(thrown_, nullptr));
  }

 private:
  void Deliver() {
    std::string text;
    {
      std::lock_guard lock(mu_);
      text.swap(pending_);
      posted_ = false;
    }
    if (closed_ || text.empty() || thrown_) return;
    try {
      deliver_(text);
    } catch (...) {
      thrown_ = std::current_exception();  // rethrown by Close, in the turn's coroutine
    }
  }

  const asio::any_io_executor caller_;
  const std::function<void(std::string_view)>& deliver_;  // valid until Close
  std::mutex mu_;
  std::string pending_;
  bool posted_ = false;
  // Caller's strand only.
  bool closed_ = false;
  std::exception_ptr thrown_;
};

// A strand of its own on the caller's io_context when more than one thread runs that
// context (an embedder's, DeclareIoThreads), so that reading a long stream (a read, an SSE parse
// and a JSON parse per token) does not queue on the turn's strand; null otherwise.
std::optional<asio::strand<asio::io_context::executor_type>> ReadingStrand(const asio::any_io_executor& caller) {
  asio::io_context* io = MultiThreadedIoContext(asio::query(caller, asio::execution::context));
  if (io == nullptr) return std::nullopt;
  return asio::make_strand(*io);
}

// co_spawn wants a result it can default-construct.
Task<std::optional<Result<HttpResponse>>> Spawnable(Task<Result<HttpResponse>> exchange) {
  co_return co_await std::move(exchange);
}

int OptionInt(const ModelConfig& c, const char* key, int fallback) {
  const Json& v = c.options;
  return v.is_object() && v.contains(key) && v[key].is_number_integer() ? v[key].get<int>() : fallback;
}

std::string JoinUrl(std::string base, const std::string& path) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + path;
}

const char* Plural(int n) { return n == 1 ? "" : "s"; }

}  // namespace

HttpModel::HttpModel(ModelConfig config, std::unique_ptr<WireFormat> wire, std::shared_ptr<HttpClient> client,
                     std::shared_ptr<Clock> clock, uint64_t seed, std::shared_ptr<ModelTape> tape)
    : config_(std::move(config)), wire_(std::move(wire)), client_(std::move(client)), clock_(std::move(clock)),
      tape_(std::move(tape)), rng_(seed != 0 ? seed : std::random_device{}()) {
  url_ = JoinUrl(config_.base_url.empty() ? wire_->DefaultBaseUrl() : config_.base_url, wire_->Path());
  retry_.max_retries = config_.max_retries;
  retry_.base_delay_ms = OptionInt(config_, "retry_base_ms", 500);
  timeouts_.total_ms = config_.timeout_ms;
  timeouts_.connect_ms = OptionInt(config_, "connect_timeout_ms", std::min(10000, config_.timeout_ms));
  timeouts_.first_byte_ms = OptionInt(config_, "first_byte_timeout_ms", config_.timeout_ms);
  timeouts_.idle_ms = OptionInt(config_, "idle_timeout_ms", std::min(30000, config_.timeout_ms));
  stream_ = !(config_.options.is_object() && config_.options.value("stream", true) == false);
}

HttpRequest HttpModel::NewHttpRequest(const ModelRequest& request, bool streaming, const HttpTimeouts& timeouts) const {
  HttpRequest http = WireBytes(request, streaming);
  http.url = url_;
  http.timeouts = timeouts;
  // The request outlives the exchange (CompleteInto awaits it), and the same request gives
  // the same bytes: the client frees them once sent and asks for them again only to
  // send them once more. Two captures, so that std::function holds them without allocating.
  if (streaming) {
    http.again = [this, &request] { return WireBytes(request, true); };
  } else {
    http.again = [this, &request] { return WireBytes(request, false); };
  }
  return http;
}

HttpRequest HttpModel::WireBytes(const ModelRequest& request, bool streaming) const {
  HttpRequest http;
  for (HttpHeader& h : wire_->Headers(config_)) http.headers.push_back({std::move(h.name), std::move(h.value)});
  if (streaming) http.headers.push_back({"Accept", "text/event-stream"});
  if (!request.traceparent.empty()) http.headers.push_back({"traceparent", request.traceparent});
  http.body = wire_->BuildBody(config_, request, streaming);
  return http;
}

Task<void> HttpModel::Try(const ModelRequest& request, bool streaming, const HttpTimeouts& timeouts, Attempt& attempt,
                          Result<HttpResponse>& outcome) {
  // Each try gets a request of its own, moved down to the socket: a turn waiting on its
  // model holds the body once (a retry, which is rare, builds it again).
  if (streaming || tape_) {
    return AwaitInto(Exchange(NewHttpRequest(request, streaming, timeouts), request, attempt), outcome);
  }
  // Without Exchange's frame, sized for streams, and without AwaitInto's.
  return client_->Send(NewHttpRequest(request, streaming, timeouts), outcome);
}

Task<Result<HttpResponse>> HttpModel::Exchange(HttpRequest http, const ModelRequest& request, Attempt& attempt) {
  BodyChunkFn on_chunk;  // null: the body is read whole
  std::optional<SseParser> parser;
  Status failed;
  std::optional<asio::strand<asio::io_context::executor_type>> reading;
  std::shared_ptr<TextHandoff> handoff;
  if (stream_ && request.on_text_delta) {
    const asio::any_io_executor caller = co_await asio::this_coro::executor;
    if (!tape_) reading = ReadingStrand(caller);
    if (reading) handoff = std::make_shared<TextHandoff>(caller, request.on_text_delta);
    attempt.assembler = wire_->NewAssembler(request, [&](std::string_view text) {
      attempt.emitted_text = attempt.emitted_text || !text.empty();
      if (handoff) {
        handoff->Add(text);
      } else {
        request.on_text_delta(text);
      }
    });
    parser.emplace();
    on_chunk = [&](std::string_view bytes) -> Status {
      if (attempt.whole) {
        attempt.body.append(bytes);
        return OkStatus();
      }
      parser->Feed(bytes, [&](SseEvent&& event) {
        if (failed.ok()) failed = attempt.assembler->OnEvent(event);
      });
      return failed;
    };
  }
  if (tape_) {
    Task<Result<HttpResponse>> taped = SendTaped(http, on_chunk);
    co_return co_await std::move(taped);
  }
  HeadersFn on_headers = [&attempt](const HttpResponse& head) {
    attempt.whole = !head.Header("content-type").starts_with("text/event-stream");
  };
  Task<Result<HttpResponse>> read = SendStreamed(http, on_chunk, on_headers);
  std::optional<Result<HttpResponse>> streamed;
  if (!reading) {
    streamed.emplace(co_await std::move(read));
  } else {
    std::exception_ptr thrown;
    try {
      auto there = asio::co_spawn(*reading, Spawnable(std::move(read)), asio::use_awaitable);
      streamed = co_await std::move(there);
    } catch (...) {
      thrown = std::current_exception();
    }
    handoff->Close();
    if (thrown) std::rethrow_exception(thrown);
  }
  if (streamed->ok() && attempt.whole) (*streamed)->body = std::move(attempt.body);
  co_return std::move(*streamed);
}

Task<Result<HttpResponse>> HttpModel::SendStreamed(HttpRequest& http, const BodyChunkFn& on_chunk,
                                                    const HeadersFn& on_headers) const {
  return client_->Stream(std::move(http), on_chunk, on_headers);
}

Task<Result<HttpResponse>> HttpModel::SendTaped(HttpRequest& http, BodyChunkFn& on_chunk) const {
  return tape_->Exchange(std::move(http), std::move(on_chunk), *client_);
}

Task<Result<ModelResponse>> HttpModel::Complete(const ModelRequest& request) {
  Result<ModelResponse> answer = ModelResponse{};
  co_await CompleteInto(request, answer);
  co_return answer;
}

Task<void> HttpModel::CompleteInto(const ModelRequest& request, Result<ModelResponse>& answer) {
  const bool streaming = stream_ && request.on_text_delta != nullptr;
  // The caller's budget (the turn's deadline) bounds every attempt and the waits between.
  const int64_t deadline = request.timeout_ms > 0 ? clock_->NowMs() + request.timeout_ms : 0;
  auto bound = [&](int ms) {
    if (deadline == 0) return ms;
    return static_cast<int>(std::clamp<int64_t>(deadline - clock_->NowMs(), 1, ms));
  };
  Attempt attempt;
  // Each try's outcome, put here by the try (HttpClient::Send): this frame, which waits
  // as long as the model thinks, holds it once, and the exchange's holds none.
  Result<HttpResponse> outcome = HttpResponse{};
  for (int n = 0;; ++n) {
    attempt = Attempt{};
    const HttpTimeouts bounded{bound(timeouts_.connect_ms), bound(timeouts_.first_byte_ms), bound(timeouts_.idle_ms),
                               bound(timeouts_.total_ms)};
    co_await Try(request, streaming, bounded, attempt, outcome);
    const bool last = n >= retry_.max_retries || attempt.emitted_text || !ShouldRetry(outcome);
    int64_t delay = 0;
    if (!last) {
      std::lock_guard lock(rng_mu_);
      delay = RetryDelayMs(retry_, n, outcome, clock_->NowMs(), rng_);
    }
    // Without time left for another try, this one is the answer.
    if (last || (deadline != 0 && clock_->NowMs() + delay >= deadline)) {
      last_attempts_.store(n + 1, std::memory_order_relaxed);
      answer = Answer(request, attempt, outcome, n + 1);
      co_return;
    }
    co_await clock_->Sleep(delay);
  }
}

Result<ModelResponse> HttpModel::Answer(const ModelRequest& request, Attempt& attempt,
                                        const Result<HttpResponse>& outcome, int attempts) const {
  if (!outcome.ok() || outcome->status < 200 || outcome->status >= 300) return Failure(outcome, attempts);
  return Read(request, attempt, *outcome);
}

Result<ModelResponse> HttpModel::Read(const ModelRequest& request, Attempt& attempt, const HttpResponse& ok) const {
  // A 2xx answer to a streamed request arrives in chunks; one that came whole (a tape
  // replaying a response recorded without streaming) is read like any whole body.
  if (attempt.assembler && !ok.body.empty()) attempt.assembler.reset();
  if (!attempt.assembler && ok.Header("content-type").starts_with("text/event-stream")) {
    // Some compatible servers stream even when not asked to: read the stream whole.
    attempt.assembler = wire_->NewAssembler(request, nullptr);
    Status failed;
    SseParser parser;
    parser.Feed(ok.body, [&](SseEvent&& event) {
      if (failed.ok()) failed = attempt.assembler->OnEvent(event);
    });
    if (!failed.ok()) return Status(failed.code(), std::string(Name()) + ": " + Redact(failed.message()));
  }
  Result<ModelResponse> response = attempt.assembler ? attempt.assembler->Finish() : wire_->ParseBody(ok.body, request);
  if (!response.ok()) {
    return Status(response.status().code(), std::string(Name()) + ": " + Redact(response.status().message()));
  }
  return response;
}

// What the caller (and through it an API client) is told names the provider, the
// status and what the provider said; where the request went stays in the detail log.
Status HttpModel::Failure(const Result<HttpResponse>& outcome, int attempts) const {
  std::string after = " (after " + std::to_string(attempts) + " attempt" + Plural(attempts) + ")";
  if (!outcome.ok()) {
    LogDetail(Name(), url_ + ": " + Redact(outcome.status().message(), false) + after);
    return Status(outcome.status().code(), std::string(Name()) + ": " + Redact(outcome.status().message()) + after);
  }
  std::string said = wire_->ErrorMessage(outcome->body);
  // A body not in the provider's error format (a proxy's page, a gateway's text) may
  // name internal hosts, addresses and tokens: the client gets a fixed sentence, the
  // log the body.
  const bool foreign = said.empty();
  if (foreign) said = outcome->body.substr(0, 200);
  const std::string status = "HTTP " + std::to_string(outcome->status);
  LogDetail(Name(), status + " from " + url_ + ": " + Redact(said, false) + after);
  std::string message = std::string(Name()) + ": " + status + ": " +
                        (foreign ? "an answer not in the provider's error format (the server's log has it)" : Redact(said)) +
                        after;
  if (outcome->status == 401 || outcome->status == 403) {
    message += std::string("; check the API key (model.api_key in the agent config, or ") +
               (Name() == "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY") + ")";
  }
  return IsRetryableHttpStatus(outcome->status) ? Unavailable(message) : InvalidArgument(message);
}

// Provider errors sometimes echo part of the key ("Incorrect API key provided: sk-ab***");
// transport errors name the URL they failed on.
std::string HttpModel::Redact(std::string text, bool hide_urls) const {
  if (config_.api_key.size() >= 4) {
    for (size_t at; (at = text.find(config_.api_key)) != std::string::npos;) text.replace(at, config_.api_key.size(), "[redacted]");
  }
  static const RE2 kKeyLike(R"(\b(sk|key)-[A-Za-z0-9_\-*]{6,})");
  RE2::GlobalReplace(&text, kKeyLike, "\\1-[redacted]");
  return hide_urls ? WithoutUrls(std::move(text), "the provider") : text;
}

Result<std::shared_ptr<ModelProvider>> MakeHttpModel(const ModelConfig& config, std::shared_ptr<HttpClient> client,
                                                     std::shared_ptr<Clock> clock, std::shared_ptr<ModelTape> tape) {
  std::unique_ptr<WireFormat> wire;
  if (config.provider == "openai") {
    wire = MakeOpenAIWire();
  } else if (config.provider == "anthropic") {
    wire = MakeAnthropicWire();
  } else {
    return InvalidArgument("provider '" + config.provider + "' does not speak HTTP (expected openai or anthropic)");
  }
  if (config.model.empty()) return InvalidArgument("model: provider " + config.provider + " needs a model name");
  return std::shared_ptr<ModelProvider>(
      std::make_shared<HttpModel>(config, std::move(wire), std::move(client), std::move(clock), 0, std::move(tape)));
}

}  // namespace reins
