// A turn's timeline: what the model proposed and what reins did with each call and why,
// built from the turn's trace events for people to read. One builder, three readers:
// the trace viewer at /ui/ and the `reins eval` report's drill-down render it with the
// same script (src/ui/timeline.js), and `reins trace` prints it in the terminal.
//
// The shape (docs/trace-viewer.md): {turn, speaker, said, status, reply, steps: [...]},
// each step {kind, tone, outcome, title, why?, at_ms, details: [[label, text], ...]},
// every value plain text; tone is ok, held or bad, for colour. Renderers lay a step out by its kind and outcome; they never need
// to read the trace themselves, and nothing in a step is markup.
#pragma once

#include <string>
#include <vector>

#include "reins/json.h"
#include "reins/trace.h"

namespace reins {

struct TimelineTurn {
  int number = 0;
  std::string speaker;
  std::string said;    // what the person sent, in a few words (SaidText)
  std::string status;  // the turn's status name
  std::string reply;
  const std::vector<TraceEvent>* events = nullptr;
};

Json TurnTimeline(const TimelineTurn& turn);

// What a turn's input (the trace's `turn.started` input, or a stored turn's) said:
// the text, or "(chose X)", "(approved)", "(declined)", "(cancelled)", after the words
// the person typed when the OpenAI door read them as the choice or the decision
// ("\"John Smith\" (chose u_smith)").
std::string SaidText(const Json& input);

}  // namespace reins
