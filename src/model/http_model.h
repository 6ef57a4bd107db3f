// HttpModel: a ModelProvider that speaks one wire format (OpenAI Chat Completions,
// Anthropic Messages) over the HTTP client, with retries. The wire format builds and
// parses; this class sends, streams, retries and turns failures into clear errors
// ("openai: HTTP 401: Incorrect API key provided (after 1 attempt)"), secrets redacted
// and no URL in them (they reach API clients); the URL goes to the detail log.
//
// Streaming is used when the request asks for text deltas (`on_text_delta`) and the
// config does not say `stream: false`. Retries (net/retry.h) happen only while no text
// has reached the caller; transport retries are not logical model calls. When more than
// one thread runs the caller's io_context (net/io_threads.h: an embedder's; reins serve
// runs one a thread), a stream is read, and its SSE and JSON parsed, on a strand of its
// own; only its text is handed to the caller's strand, in order, before the call returns.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <random>
#include <string>

#include "model/wire_format.h"
#include "net/http_client.h"
#include "net/retry.h"
#include "reins/agent_config.h"
#include "reins/clock.h"
#include "reins/model_provider.h"

namespace reins {

// Stands between an HttpModel and the network: every exchange goes through it (eval's
// record and replay, src/eval/cassette.h). It may send through `client` or answer
// from what it kept; a non-null `on_chunk` asks for a 2xx body streamed to it.
class ModelTape {
 public:
  virtual ~ModelTape() = default;
  virtual Task<Result<HttpResponse>> Exchange(HttpRequest request, BodyChunkFn on_chunk, HttpClient& client) = 0;
};

class HttpModel final : public ModelProvider {
 public:
  HttpModel(ModelConfig config, std::unique_ptr<WireFormat> wire, std::shared_ptr<HttpClient> client,
            std::shared_ptr<Clock> clock, uint64_t seed = 0, std::shared_ptr<ModelTape> tape = nullptr);
  std::string_view Name() const override { return wire_->Provider(); }
  Task<Result<ModelResponse>> Complete(const ModelRequest& request) override;
  Task<void> CompleteInto(const ModelRequest& request, Result<ModelResponse>& answer) override;
  bool KeepsDeadline() const override { return true; }

  // Attempts made by the last call to end (1 + retries), for tests and metrics.
  int last_attempts() const { return last_attempts_.load(std::memory_order_relaxed); }

 private:
  struct Attempt;
  HttpRequest NewHttpRequest(const ModelRequest& request, bool streaming, const HttpTimeouts& timeouts) const;
  // What goes on the wire for `request`: its header fields and body (NewHttpRequest's,
  // and again for a retry).
  HttpRequest WireBytes(const ModelRequest& request, bool streaming) const;
  // One try of a call, its outcome put into `outcome`. Not a coroutine: the request it
  // builds would otherwise be a temporary in CompleteInto's frame, held while the call waits.
  Task<void> Try(const ModelRequest& request, bool streaming, const HttpTimeouts& timeouts, Attempt& attempt,
                 Result<HttpResponse>& outcome);
  // A streamed exchange, or any through the tape; Try sends a whole one itself.
  Task<Result<HttpResponse>> Exchange(HttpRequest http, const ModelRequest& request, Attempt& attempt);
  // The calls Exchange awaits, made in plain functions: the request and the callbacks
  // they take by value would otherwise be temporaries in Exchange's frame, which waits.
  Task<Result<HttpResponse>> SendStreamed(HttpRequest& http, const BodyChunkFn& on_chunk,
                                          const HeadersFn& on_headers) const;
  Task<Result<HttpResponse>> SendTaped(HttpRequest& http, BodyChunkFn& on_chunk) const;
  // The model's answer in a 2xx response. Not a coroutine: its parser and the parsed
  // response would sit in CompleteInto's frame while the request waits.
  Result<ModelResponse> Read(const ModelRequest& request, Attempt& attempt, const HttpResponse& ok) const;
  // The call's answer from its last try: the model's response, or why there is none.
  Result<ModelResponse> Answer(const ModelRequest& request, Attempt& attempt, const Result<HttpResponse>& outcome,
                               int attempts) const;
  Status Failure(const Result<HttpResponse>& outcome, int attempts) const;
  std::string Redact(std::string text, bool hide_urls = true) const;

  ModelConfig config_;
  std::unique_ptr<WireFormat> wire_;
  std::shared_ptr<HttpClient> client_;
  std::shared_ptr<Clock> clock_;
  std::shared_ptr<ModelTape> tape_;
  std::string url_;
  RetryPolicy retry_;
  HttpTimeouts timeouts_;
  bool stream_ = true;
  // Calls of turns on different strands may run at once (docs/architecture.md
  // "Concurrency"): the retry jitter's generator is shared under its mutex, and a call's
  // attempts are its own until it ends.
  std::mutex rng_mu_;
  std::mt19937_64 rng_;  // under rng_mu_
  std::atomic<int> last_attempts_ = 0;
};

// The provider `config.provider` names when it speaks HTTP (openai, anthropic);
// InvalidArgument for other names. Options read from `config.options`: stream,
// max_tokens, parallel_tool_calls, retry_base_ms, connect_timeout_ms,
// first_byte_timeout_ms, idle_timeout_ms.
Result<std::shared_ptr<ModelProvider>> MakeHttpModel(const ModelConfig& config, std::shared_ptr<HttpClient> client,
                                                     std::shared_ptr<Clock> clock,
                                                     std::shared_ptr<ModelTape> tape = nullptr);

}  // namespace reins
