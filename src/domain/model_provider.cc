#include "reins/model_provider.h"

namespace reins {

Task<void> ModelProvider::CompleteInto(const ModelRequest& request, Result<ModelResponse>& answer) {
  answer = co_await Complete(request);
}

}  // namespace reins
