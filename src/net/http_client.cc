#include "net/http_client.h"

#include "domain/text.h"
#include "net/http_client_impl.h"

namespace reins {
using namespace outbound;
namespace {

Task<Result<HttpResponse>> Refused(Status why) { co_return why; }

Task<void> Refused(Status why, Result<HttpResponse>& response) {
  response = std::move(why);
  co_return;
}

}  // namespace

std::string HttpResponse::Header(std::string_view name) const {
  return std::string(HeaderLineValue(headers, name, Repeated::kFirst));
}

void HttpResponse::AddHeader(std::string_view name, std::string_view value) {
  headers.append(name).append(": ").append(value).append("\r\n");
}

HttpClient::HttpClient() : HttpClient(Options{}) {}
HttpClient::HttpClient(Options options) : impl_(std::make_shared<Impl>(std::move(options))) {}
HttpClient::~HttpClient() = default;

// Not coroutines: a frame of their own would be held by every exchange while it waits,
// and the request is prepared here so that no frame holds it. The response goes to
// the caller's variable, or through a small frame (Returned) to those that await it.
Task<void> HttpClient::Send(HttpRequest request, Result<HttpResponse>& response) {
  Result<std::unique_ptr<Outgoing>> out =
      Prepare(request, impl_->Parsed(request.url), impl_->options.max_request_bytes);
  if (!out.ok()) return Refused(out.status(), response);
  return impl_->Exchange(impl_, std::move(*out), request.timeouts, response);
}

Task<Result<HttpResponse>> HttpClient::Send(HttpRequest request) {
  Result<std::unique_ptr<Outgoing>> out =
      Prepare(request, impl_->Parsed(request.url), impl_->options.max_request_bytes);
  if (!out.ok()) return Refused(out.status());
  return impl_->Returned(impl_, std::move(*out), request.timeouts);
}

Task<void> HttpClient::Stream(HttpRequest request, BodyChunkFn on_chunk, HeadersFn on_headers,
                              Result<HttpResponse>& response) {
  Result<std::unique_ptr<Outgoing>> out =
      Prepare(request, impl_->Parsed(request.url), impl_->options.max_request_bytes);
  if (!out.ok()) return Refused(out.status(), response);
  (*out)->streamed = std::make_unique<Outgoing::Streamed>(Outgoing::Streamed{std::move(on_chunk), std::move(on_headers)});
  return impl_->Exchange(impl_, std::move(*out), request.timeouts, response);
}

Task<Result<HttpResponse>> HttpClient::Stream(HttpRequest request, BodyChunkFn on_chunk, HeadersFn on_headers) {
  Result<std::unique_ptr<Outgoing>> out =
      Prepare(request, impl_->Parsed(request.url), impl_->options.max_request_bytes);
  if (!out.ok()) return Refused(out.status());
  (*out)->streamed = std::make_unique<Outgoing::Streamed>(Outgoing::Streamed{std::move(on_chunk), std::move(on_headers)});
  return impl_->Returned(impl_, std::move(*out), request.timeouts);
}

int HttpClient::connections_opened() const {
  std::lock_guard lock(impl_->mu);
  return impl_->opened;
}

}  // namespace reins
