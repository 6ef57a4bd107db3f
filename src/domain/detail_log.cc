#include "domain/detail_log.h"

namespace reins {
namespace {

DetailSink& Sink() {
  static DetailSink sink;
  return sink;
}

}  // namespace

void SetDetailSink(DetailSink sink) { Sink() = std::move(sink); }

void LogDetail(std::string_view source, std::string_view message) {
  if (const DetailSink& sink = Sink()) sink(source, message);
}

}  // namespace reins
