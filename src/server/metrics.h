// Metrics: a small Prometheus registry (counters, gauges, histograms with labels),
// rendered in the text exposition format 0.0.4. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reins {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Metrics {
 public:
  Metrics();  // describes the standard reins metrics (docs/http-api.md)
  void Inc(std::string_view name, const Labels& labels = {}, double by = 1);
  void Set(std::string_view name, const Labels& labels, double value);
  void Observe(std::string_view name, const Labels& labels, double seconds);
  std::string Render() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Series {
    double value = 0;                 // counter, gauge; histogram sum
    std::vector<uint64_t> buckets;    // histogram, not cumulative
    uint64_t count = 0;
  };
  struct Family {
    Type type = Type::kCounter;
    std::string help;
    std::map<std::string, Series> series;  // rendered label set -> series
    bool unlabeled = false;                // rendered as 0 before its first sample
  };
  Family& Get(std::string_view name, Type type);
  void Describe(std::string name, bool unlabeled, Type type, std::string help);

  mutable std::mutex mu_;
  std::map<std::string, Family, std::less<>> families_;
};

}  // namespace reins
