// Cassette: the model exchanges of one scenario's runs, kept as a plain JSON file
// (`DIR/<scenario id>.json`) by `eval --record DIR` and answered from it by
// `eval --replay DIR`, offline and deterministically (docs/evaluation.md).
//
// An exchange is keyed by a hash of the normalised request: the body the provider
// would get, without its transport switches (`stream`, `stream_options`) and with the
// ids reins generates (turn, session, idempotency keys) replaced by placeholders. The
// URL, headers and API key are never part of it and never stored. The response is kept
// as received: a JSON body as JSON, a stream as its lines.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "model/http_model.h"
#include "reins/json.h"
#include "reins/status.h"

namespace reins {

class CassetteTape;

class Cassette : public std::enable_shared_from_this<Cassette> {
 public:
  enum class Mode { kRecord, kReplay };

  struct Exchange {
    int run = 0;  // 1-based, as eval numbers runs
    bool governor = true;
    int turn = 0;
    int seq = 0;  // order within the run
    std::string key;
    Json request;  // normalised
    int status = 200;
    std::string content_type;
    std::string body;
  };

  // Record: an empty cassette for `scenario_id`, saved to `dir` by Save(). Replay: the
  // one in `dir`; NotFound naming the file when there is none.
  static Result<std::shared_ptr<Cassette>> Open(const std::string& dir, const std::string& scenario_id, Mode mode);

  Mode mode() const { return mode_; }
  const std::string& path() const { return path_; }
  // What the exchanges were recorded with ("openai", "gpt-4o-mini").
  const std::string& provider() const { return provider_; }
  const std::string& model() const { return model_; }
  void SetModel(std::string provider, std::string model);

  // The view one run works through.
  std::shared_ptr<CassetteTape> ForRun(int run, bool governor);

  // Record: writes the file, exchanges in run order (a stable diff from one recording
  // to the next).
  Status Save() const;

  // The normalised form of a request body and its key.
  static Json Normalise(const std::string& body);
  static std::string Key(const Json& normalised);

 private:
  friend class CassetteTape;
  Cassette(Mode mode, std::string path, std::string scenario_id) : mode_(mode), path_(std::move(path)), scenario_(std::move(scenario_id)) {}
  void Add(Exchange e);
  // Replay: the `occurrence`-th exchange of `key` in (run, governor), else any with
  // `key`; null when there is none.
  const Exchange* Find(const std::string& key, int run, bool governor, int occurrence) const;
  // Replay: why `request` (at run/turn) is not in the cassette, naming the nearest
  // recorded request and where it differs.
  std::string ExplainMiss(const Json& request, int run, bool governor, int turn) const;

  Mode mode_;
  std::string path_;
  std::string scenario_;
  std::string provider_, model_;
  mutable std::mutex mu_;
  std::vector<Exchange> exchanges_;
};

// One run's tape: sends and records, or answers from the cassette.
class CassetteTape final : public ModelTape {
 public:
  CassetteTape(std::shared_ptr<Cassette> cassette, int run, bool governor)
      : cassette_(std::move(cassette)), run_(run), governor_(governor) {}
  void SetTurn(int turn) { turn_ = turn; }
  Task<Result<HttpResponse>> Exchange(HttpRequest request, BodyChunkFn on_chunk, HttpClient& client) override;
  // Replay: the first request the cassette did not hold, explained; "" when none.
  const std::string& miss() const { return miss_; }

 private:
  std::shared_ptr<Cassette> cassette_;
  int run_;
  bool governor_;
  int turn_ = 0;
  int seq_ = 0;
  std::vector<std::string> seen_;  // keys asked so far, for repeated requests
  std::string miss_;
};

}  // namespace reins
