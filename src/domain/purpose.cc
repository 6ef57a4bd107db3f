#include "reins/model_provider.h"

namespace reins {

std::string_view PurposeName(Purpose p) {
  switch (p) {
    case Purpose::kChat: return "chat";
    case Purpose::kPlan: return "plan";
    case Purpose::kStep: return "step";
    case Purpose::kAudit: return "audit";
    case Purpose::kRewrite: return "rewrite";
    case Purpose::kGather: return "gather";
  }
  return "chat";
}

std::string_view FinishReasonName(FinishReason f) {
  switch (f) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kRefusal: return "refusal";
    case FinishReason::kPaused: return "paused";
  }
  return "stop";
}

bool ParsePurpose(std::string_view name, Purpose* p) {
  for (Purpose x : {Purpose::kChat, Purpose::kPlan, Purpose::kStep, Purpose::kAudit, Purpose::kRewrite,
                    Purpose::kGather}) {
    if (PurposeName(x) == name) {
      *p = x;
      return true;
    }
  }
  return false;
}

}  // namespace reins
