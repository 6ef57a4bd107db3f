#include "telemetry/otlp_exporter.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>

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

}  // namespace

ExporterOptions ExporterOptionsFrom(const std::string& config_endpoint, const std::string& config_service,
                                    const std::string& agent_name, GetEnv getenv) {
  ExporterOptions o;
  std::string base = Env(getenv, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (base.empty()) base = config_endpoint;
  while (!base.empty() && base.back() == '/') base.pop_back();
  o.endpoint = Env(getenv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (o.endpoint.empty() && !base.empty()) o.endpoint = base + "/v1/traces";
  const std::string headers = Env(getenv, "OTEL_EXPORTER_OTLP_HEADERS");
  for (size_t start = 0; start < headers.size();) {
    size_t comma = headers.find(',', start);
    if (comma == std::string::npos) comma = headers.size();
    const std::string pair = headers.substr(start, comma - start);
    if (const size_t eq = pair.find('='); eq != std::string::npos) {
      const std::string name(TrimmedSpace(std::string_view(pair).substr(0, eq)));
      if (!name.empty()) o.headers.push_back({name, PercentDecoded(TrimmedSpace(std::string_view(pair).substr(eq + 1)))});
    }
    start = comma + 1;
  }
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
  auto post = [&]() -> Task<void> {
    Result<HttpResponse> r = co_await client.Send(std::move(request));
    sent = r.ok() && r->status / 100 == 2;
  };
  io.restart();
  boost::asio::co_spawn(io, post(), boost::asio::detached);
  io.run();
  const int64_t n = static_cast<int64_t>(batch.size());
  if (sent) exported_ += n;
  else dropped_export_failed_ += n;
  return sent;
}

}  // namespace reins::telemetry
