// SessionState: what a session remembers between turns besides its message history:
// the entity ids tool results produced (for provenance, I3), the ids the user chose
// in clarifications, and the pending clarification. Persisted as JSON with the
// session in the same transaction as the turn that changed it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "reins/json.h"
#include "reins/turn.h"

namespace reins {

// An optional value held on the heap: absent, it costs a pointer where std::optional
// costs the whole value. For what a session rarely has (a pending question or
// approval): a session's state is cached with the session and copied once per turn,
// to restore if the turn is refused. Copies are deep, as std::optional's.
template <typename T>
class HeapOptional {
 public:
  HeapOptional() = default;
  HeapOptional(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: implicit, as optional's
  HeapOptional(std::optional<T> value)  // NOLINT
      : value_(value ? std::make_unique<T>(std::move(*value)) : nullptr) {}
  HeapOptional(const HeapOptional& other) : value_(other ? std::make_unique<T>(*other) : nullptr) {}
  HeapOptional(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(const HeapOptional& other) {
    if (this != &other) value_ = other ? std::make_unique<T>(*other) : nullptr;
    return *this;
  }
  HeapOptional& operator=(HeapOptional&&) noexcept = default;

  explicit operator bool() const { return value_ != nullptr; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  void reset() { value_.reset(); }

 private:
  std::unique_ptr<T> value_;
};

class EntityLedger {
 public:
  void AddProduced(const std::string& type, const std::string& id) { produced_[type].insert(id); }
  bool WasProduced(const std::string& type, const std::string& id) const;
  // The user chose `id` for `type` in the turn numbered `turn`; binds that turn.
  void Choose(const std::string& type, const std::string& id, int turn) { chosen_[type] = {id, turn}; }
  // The id the user chose for `type` if the choice binds `turn`.
  std::optional<std::string> ChosenFor(const std::string& type, int turn) const;

  Json ToJson() const;
  static EntityLedger FromJson(const Json& j);

 private:
  std::map<std::string, std::set<std::string>> produced_;
  std::map<std::string, std::pair<std::string, int>> chosen_;
};

struct SessionState {
  EntityLedger entities;
  HeapOptional<PendingClarification> pending_clarification;
  HeapOptional<PendingApproval> pending_approval;
  // A plan interrupted by a clarification or an approval: its steps and the step it
  // stopped in, resumed once the person answers.
  std::vector<PlanStep> pending_plan;
  size_t pending_plan_step = 0;
  // What a mechanism keeps between turns in a slot of its own, by the mechanism's name
  // (Policy::Name): any JSON, stored with the session in the turn's transaction. A new
  // mechanism keeps its session state here instead of adding fields to this struct.
  Json& Slot(std::string_view mechanism) { return slots[std::string(mechanism)]; }
  std::map<std::string, Json> slots;

  Json ToJson() const;
  static SessionState FromJson(const Json& j);
};

Json PendingClarificationToJson(const PendingClarification& p);
std::optional<PendingClarification> PendingClarificationFromJson(const Json& j);

}  // namespace reins
