// A tool's raw result -> the envelope normaliser (every tool result goes through it).
#include "domain/json_parse.h"
#include "fuzz/fuzz_target.h"
#include "reins/envelope.h"

namespace reins {

REINS_FUZZ_TARGET(envelope) {
  Result<Json> raw = ParseJson(input);
  if (!raw.ok()) return;
  ResultEnvelope e = NormaliseToolResult(*raw);
  (void)EnvelopeToJson(e).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace reins
