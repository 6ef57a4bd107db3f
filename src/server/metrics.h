// Metrics: a small Prometheus registry (counters, gauges, histograms with labels),
// rendered in the text exposition format 0.0.4. Thread-safe.
#pragma once

#include <functional>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace reins {

// A sample's labels, as the caller has them: an update renders them into a reused
// buffer and finds its series without allocating (a served turn makes about ten).
using Label = std::pair<std::string_view, std::string_view>;
using Labels = std::initializer_list<Label>;

class Metrics {
 public:
  Metrics();  // describes the standard reins metrics (docs/http-api.md)
  void Inc(std::string_view name, Labels labels = {}, double by = 1);
  void Set(std::string_view name, Labels labels, double value);
  void Observe(std::string_view name, Labels labels, double seconds);
  std::string Render() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Series {
    double value = 0;                 // counter, gauge; histogram sum
    std::vector<uint64_t> buckets;    // histogram, not cumulative
    uint64_t count = 0;
  };
  // Looked up by a string_view without making a string (a served turn makes about
  // eleven updates); Render sorts what it writes.
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  template <typename V>
  using TextMap = std::unordered_map<std::string, V, TextHash, std::equal_to<>>;
  struct Family {
    Type type = Type::kCounter;
    std::string help;
    TextMap<Series> series;  // rendered label set -> series
    bool unlabeled = false;  // rendered as 0 before its first sample
  };
  Family& Get(std::string_view name, Type type);
  // The series of `labels` in `family`, created on its first sample. Under mu_.
  Series& At(Family& family, Labels labels);
  void Describe(std::string name, bool unlabeled, Type type, std::string help);

  mutable std::mutex mu_;
  TextMap<Family> families_;
  std::string label_text_;  // At's buffer
};

}  // namespace reins
