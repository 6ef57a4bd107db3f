// A request body -> the JSON body readers of every endpoint, and a query string -> the
// trace query reader.
#include "fuzz/fuzz_target.h"
#include "server/request_bodies.h"

namespace reins {

REINS_FUZZ_TARGET(json_bodies) {
  Json metadata;
  (void)ParseSessionBody(input, &metadata);
  TurnInput in;
  if (!ParseTurnBody(input, "", &in)) (void)TurnInputToJson(in).dump();
  TraceQuery query;
  (void)ParseTraceQuery(input, &query);
}

}  // namespace reins
