// WireFormat: one model API's wire format (OpenAI Chat Completions, Anthropic
// Messages), kept apart from the transport. An adapter builds the request body from
// the provider-neutral history, parses a whole response, assembles a streamed one from
// its SSE events, and reads the provider's own error message. Pure functions of their
// input: unit-tested against captured payloads (tests/model/*_wire_test.cc).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/sse.h"
#include "reins/agent_config.h"
#include "reins/model_provider.h"
#include "reins/status.h"

namespace reins {

struct HttpHeader {
  std::string name;
  std::string value;
};

// Receives text as the model writes it (streaming), in order; never split inside a
// UTF-8 sequence by the assembler (it passes on what the provider's JSON decoded).
using TextDeltaFn = std::function<void(std::string_view)>;

class StreamAssembler {
 public:
  virtual ~StreamAssembler() = default;
  // One SSE event. A non-OK Status is a failed stream: an error event from the
  // provider, or a chunk that is not the JSON the format promises.
  virtual Status OnEvent(const SseEvent& event) = 0;
  // True once the terminal event arrived (`data: [DONE]`, `message_stop`).
  virtual bool Complete() const = 0;
  // The assembled response. An error when the stream ended before Complete().
  virtual Result<ModelResponse> Finish() = 0;
};

class WireFormat {
 public:
  virtual ~WireFormat() = default;
  virtual std::string_view Provider() const = 0;  // "openai" | "anthropic"
  virtual std::string DefaultBaseUrl() const = 0;
  // Appended to base_url: "/chat/completions", "/v1/messages".
  virtual std::string Path() const = 0;
  // Authentication and version headers (Content-Type is the transport's).
  virtual std::vector<HttpHeader> Headers(const ModelConfig& config) const = 0;
  virtual std::string BuildBody(const ModelConfig& config, const ModelRequest& request, bool stream) const = 0;
  virtual Result<ModelResponse> ParseBody(std::string_view body, const ModelRequest& request) const = 0;
  virtual std::unique_ptr<StreamAssembler> NewAssembler(const ModelRequest& request, TextDeltaFn on_text) const = 0;
  // The provider's own message from an error body; "" when the body has none.
  virtual std::string ErrorMessage(std::string_view body) const = 0;
};

std::unique_ptr<WireFormat> MakeOpenAIWire();
std::unique_ptr<WireFormat> MakeAnthropicWire();

}  // namespace reins
