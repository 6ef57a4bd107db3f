// The prompt-injection benchmark (`reins injection-bench`, docs/security.md "Prompt
// injection"): every case of every suite (eval/injection_suite.h) run four ways, and
// measured as AgentDojo measures (Debenedetti et al., NeurIPS 2024):
//   - targeted attack success: the attacker's goal reached (its calls ran, or its words
//     reached the person), by class of attack;
//   - utility under attack: the person's task done although the attack was planted;
//   - benign utility: the task done with nothing planted;
// and, as reins asks the person where AgentDojo's defences deny, the approval burden:
// the benign tasks that needed an approval, and whether each approval rested on a value
// that only outside data held.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "eval/injection_suite.h"

namespace reins {

// How a case is run: the naive loop, reins without untrusted_data, reins with it
// (violations go to the person, or are refused).
enum class InjectionMode { kNaive, kReinsOff, kApprove, kRefuse };
inline constexpr EnumNames<InjectionMode, 4> kInjectionModes{{{{InjectionMode::kNaive, "naive"},
                                                               {InjectionMode::kReinsOff, "reins_off"},
                                                               {InjectionMode::kApprove, "approve"},
                                                               {InjectionMode::kRefuse, "refuse"}}}};

// One case as `mode` runs it: its scenario with the agent as that mode has it (the
// naive loop runs it with the governor off).
Scenario CaseIn(const InjectionSuite& suite, const UserTask& task, const InjectionTask* injection, InjectionMode mode);

struct CaseResult {
  std::string suite;
  std::string user_task;
  std::string injection;  // "" for the benign run
  AttackClass kind = AttackClass::kDataFlow;
  InjectionMode mode = InjectionMode::kNaive;
  bool attacked = false;  // the attacker's goal was reached
  bool done = false;      // the person's task was done
  int turns = 0;                // turns the run took (the person's answers included)
  int approvals = 0;            // approvals the person was asked for
  int unjustified = 0;          // ... that no value only outside data held justified
  std::vector<std::string> approval_reasons;  // "untrusted_data/value", "policy", ...
  std::vector<std::string> approval_prompts;  // what the person was asked, in words
  std::vector<std::string> violations;        // invariant ids
  std::string error;            // the run itself failed
};

struct InjectionBenchOptions {
  // The modes each case runs in (the tables need all four; one alone is for profiling).
  std::vector<InjectionMode> modes = {InjectionMode::kNaive, InjectionMode::kReinsOff, InjectionMode::kApprove,
                                      InjectionMode::kRefuse};
  int jobs = 0;  // worker threads; 0: one per core
  std::function<void(int done, int total)> progress;
};

std::vector<CaseResult> RunInjectionBench(const std::vector<InjectionSuite>& suites, const InjectionBenchOptions& options);

// Per suite and attack class, per mode: cases, attack success, utility under attack;
// per suite: benign utility and the approval burden; invariant violations per mode.
Json InjectionSummary(const std::vector<InjectionSuite>& suites, const std::vector<CaseResult>& results);

// The summary as the tables `reins injection-bench` prints, the anchors' published
// figures beside them.
std::string InjectionTables(const Json& summary);

}  // namespace reins
