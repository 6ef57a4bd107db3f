// A model provider's answer -> both wire formats' response parsers: a whole body, an
// error body, and a stream read through the SSE parser into the stream assembler.
#include <memory>

#include "fuzz/fuzz_target.h"
#include "model/wire_format.h"
#include "net/sse.h"

namespace reins {

REINS_FUZZ_TARGET(provider_response) {
  ModelRequest request;
  request.messages = {Message::System("s"), Message::User("u")};
  std::unique_ptr<WireFormat> wires[] = {MakeOpenAIWire(), MakeAnthropicWire()};
  for (const std::unique_ptr<WireFormat>& wire : wires) {
    (void)wire->ParseBody(input, request);
    (void)wire->ErrorMessage(input);
    std::string text;
    std::unique_ptr<StreamAssembler> assembler = wire->NewAssembler(request, [&](std::string_view t) { text += t; });
    SseParser parser;
    Status failed;
    const size_t half = input.size() / 2;
    for (std::string_view piece : {input.substr(0, half), input.substr(half)}) {
      parser.Feed(piece, [&](SseEvent&& event) {
        if (failed.ok()) failed = assembler->OnEvent(event);
      });
    }
    if (failed.ok()) (void)assembler->Finish();
  }
}

}  // namespace reins
