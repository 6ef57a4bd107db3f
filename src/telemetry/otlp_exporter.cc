#include "telemetry/otlp_exporter.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "domain/text.h"

namespace reins::telemetry {
namespace {

std::string Env(GetEnv getenv, const char* name) {
  const char* v = getenv(name);
  return v == nullptr ? "" : v;
}

// RFC 9110's token: what a header's name may hold.
bool IsToken(std::string_view s) {
  static constexpr std::string_view kPunctuation = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kPunctuation.find(c) != std::string_view::npos;
  });
}

// A field value: no control bytes but the tab (no NUL, CR or LF to split the request).
bool IsFieldValue(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return (b < 0x20 && b != '\t') || b == 0x7f;
  });
}

// The pairs of OTEL_EXPORTER_OTLP_HEADERS ("name=value,name2=value2", values
// percent-encoded), each a header or, when it cannot be one, a reason in `refused`.
void ReadHeaders(const std::string& text, ExporterOptions& o) {
  for (size_t start = 0; start < text.size();) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string_view pair = std::string_view(text).substr(start, comma - start);
    start = comma + 1;
    if (TrimmedSpace(pair).empty()) continue;
    const size_t eq = pair.find('=');
    const std::string name(TrimmedSpace(pair.substr(0, eq)));
    const std::string value = eq == std::string_view::npos ? "" : PercentDecoded(TrimmedSpace(pair.substr(eq + 1)));
    if (eq == std::string_view::npos) {
      o.refused_headers.push_back("'" + name + "' has no '=' and no value");
    } else if (!IsToken(name)) {
      o.refused_headers.push_back("'" + name + "' is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)");
    } else if (!IsFieldValue(value)) {
      o.refused_headers.push_back("the value of '" + name + "' holds control bytes");
    } else {
      o.headers.push_back({name, value});
    }
  }
}

}  // namespace

ExporterOptions ExporterOptionsFrom(const std::string& config_endpoint, const std::string& config_service,
                                    const std::string& agent_name, GetEnv getenv) {
  ExporterOptions o;
  std::string base = Env(getenv, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (base.empty()) base = config_endpoint;
  while (!base.empty() && base.back() == '/') base.pop_back();
  o.endpoint = Env(getenv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (o.endpoint.empty() && !base.empty()) o.endpoint = base + "/v1/traces";
  ReadHeaders(Env(getenv, "OTEL_EXPORTER_OTLP_HEADERS"), o);
  o.resource.service_name = Env(getenv, "OTEL_SERVICE_NAME");
  if (o.resource.service_name.empty()) o.resource.service_name = config_service;
  if (o.resource.service_name.empty()) o.resource.service_name = agent_name;
  return o;
}

OtlpExporter::OtlpExporter(ExporterOptions options) : options_(std::move(options)), thread_([this] { Run(); }) {}

OtlpExporter::~OtlpExporter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void OtlpExporter::Export(std::vector<Span> spans) {
  size_t dropped = 0;
  bool full_batch = false;
  {
    std::lock_guard lock(mu_);
    for (Span& s : spans) {
      if (queue_.size() >= options_.max_queue) {
        ++dropped;
        continue;
      }
      queue_.push_back(std::move(s));
    }
    full_batch = queue_.size() >= options_.max_batch;
  }
  if (dropped > 0) dropped_queue_full_ += static_cast<int64_t>(dropped);
  if (full_batch) wake_.notify_one();
}

void OtlpExporter::Warn(const std::string& line) const {
  if (options_.warn) options_.warn(line);
  else std::cerr << "reins: " << line << "\n";
}

ExportCounts OtlpExporter::counts() const {
  return ExportCounts{exported_.load(), dropped_queue_full_.load(), dropped_export_failed_.load(),
                      dropped_collector_down_.load()};
}

namespace {
int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

bool OtlpExporter::accepting() const { return SteadyMs() >= down_until_ms_.load(std::memory_order_relaxed); }

void OtlpExporter::Flush() {
  std::unique_lock lock(mu_);
  flushing_ = true;
  wake_.notify_one();
  // The sender clears flushing_ once it finds the queue empty.
  idle_.wait(lock, [this] { return !flushing_ || stopping_; });
}

void OtlpExporter::Run() {
  // This thread's own loop and client: the collector's connection is kept alive
  // between batches.
  boost::asio::io_context io;
  HttpClient client;
  std::unique_lock lock(mu_);
  for (;;) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.flush_interval_ms);
    wake_.wait_until(lock, deadline, [this] { return stopping_ || flushing_ || queue_.size() >= options_.max_batch; });
    if (queue_.empty()) {
      flushing_ = false;  // everything asked for is sent (or dropped)
      idle_.notify_all();
      if (stopping_) return;
      continue;
    }
    std::vector<Span> batch;
    while (!queue_.empty() && batch.size() < options_.max_batch) {
      batch.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    const bool last_chance = stopping_;  // shutting down: one try whatever the backoff
    lock.unlock();
    bool sent = false;
    if (accepting() || last_chance) {
      sent = Send(io, client, std::move(batch));
      // Down: wait 1 s, then 2, 4... up to 30 s before trying again; up: no waiting.
      failures_ = sent ? 0 : std::min(failures_ + 1, 6);
      down_until_ms_ = sent ? 0 : SteadyMs() + std::min<int64_t>(30000, int64_t{1000} << (failures_ - 1));
    } else {
      dropped_collector_down_ += static_cast<int64_t>(batch.size());  // not even serialized
    }
    lock.lock();
    if (!sent && stopping_) {
      dropped_export_failed_ += static_cast<int64_t>(queue_.size());
      queue_.clear();
    }
  }
}

// One request, run to its end: this thread has nothing else to do meanwhile.
bool OtlpExporter::Send(boost::asio::io_context& io, HttpClient& client, std::vector<Span> batch) {
  HttpRequest request;
  request.method = "POST";
  request.url = options_.endpoint;
  request.headers = options_.headers;
  request.headers.push_back({"Content-Type", "application/json"});
  request.body = TraceRequestText(options_.resource, batch);
  request.timeouts = HttpTimeouts{options_.timeout_ms, options_.timeout_ms, options_.timeout_ms, options_.timeout_ms};
  bool sent = false;
  std::string why;
  auto post = [&]() -> Task<void> {
    Result<HttpResponse> r = co_await client.Send(std::move(request));
    sent = r.ok() && r->status / 100 == 2;
    if (!sent) why = r.ok() ? "HTTP " + std::to_string(r->status) : r.status().message();
  };
  io.restart();
  boost::asio::co_spawn(io, post(), boost::asio::detached);
  io.run();
  const int64_t n = static_cast<int64_t>(batch.size());
  if (sent) exported_ += n;
  else dropped_export_failed_ += n;
  // Said once when exports begin to fail and once when they work again, not per batch:
  // the counts in /metrics say how many spans each outage cost.
  if (sent == failing_) {
    failing_ = !sent;
    Warn(sent ? "telemetry: spans reach " + options_.endpoint + " again"
              : "telemetry: exporting spans to " + options_.endpoint + " failed (" + why +
                    "); spans are dropped and counted in reins_telemetry_spans_dropped_total until it answers");
  }
  return sent;
}

}  // namespace reins::telemetry
