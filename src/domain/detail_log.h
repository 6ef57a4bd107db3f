// DetailLog: where reins writes what an operator needs but an API client or a model
// must not see: internal URLs, upstream error bodies, transport errors naming hosts.
// Those go here in full; what reaches a client or a model names only the provider or
// the tool and the kind of failure (docs/security.md, "leaking internals").
//
// The sink is set once at start-up, before any thread logs (`reins serve` writes JSON
// lines to its log, `reins run` and `chat` write to stderr); without one, nothing is
// written.
#pragma once

#include <functional>
#include <string_view>

namespace reins {

using DetailSink = std::function<void(std::string_view source, std::string_view message)>;

void SetDetailSink(DetailSink sink);
void LogDetail(std::string_view source, std::string_view message);

}  // namespace reins
