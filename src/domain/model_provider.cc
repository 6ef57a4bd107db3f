#include "reins/model_provider.h"

#include "domain/await_into.h"

namespace reins {

Task<void> ModelProvider::CompleteInto(const ModelRequest& request, Result<ModelResponse>& answer) {
  return AwaitInto(Complete(request), answer);
}

}  // namespace reins
