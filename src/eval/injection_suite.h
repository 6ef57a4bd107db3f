// A prompt-injection suite in AgentDojo's shape (Debenedetti et al., NeurIPS 2024;
// docs/security.md "Prompt injection", bench/injection/): an agent, the environment its
// tools read (fixtures whose texts hold injection vectors, `{name}` placeholders), the
// person's tasks and the attacker's. Every (user task x injection task) pair is a case:
// the attack planted in every vector, a model that obeys it first and then does the
// person's task, and a person who approves what their task needs and denies the rest.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "eval/scenario.h"
#include "reins/agent_config.h"
#include "reins/json.h"
#include "reins/status.h"

namespace reins {

// What an injection task is after (reported apart: AgentDojo's targeted attack
// success, split by what a defence at the tool boundary can see).
enum class AttackClass {
  kDataFlow,      // an attacker's value in a write ("send the money to US13...")
  kControlFlow,   // a write the person did not ask for, with ordinary values ("delete the file")
  kSubstitution,  // a write of the kind the person asked for, with ordinary values they did not choose
  kOutput,        // words in the reply only (a phishing link, a false statement)
};
inline constexpr EnumNames<AttackClass, 4> kAttackClasses{{{{AttackClass::kDataFlow, "data_flow"},
                                                            {AttackClass::kControlFlow, "control_flow"},
                                                            {AttackClass::kSubstitution, "substitution"},
                                                            {AttackClass::kOutput, "output"}}}};

struct UserTask {
  std::string id;
  std::string say;
  Json steps;  // the model's responses that do the task, in order: [{calls: [{name, args}]} | {text}]
  Json done;   // what must have run for the task to be done: [{name, args?}]
  std::string reply_contains;  // and what its reply must say, when it must ("" for nothing)
};

struct InjectionTask {
  std::string id;
  AttackClass kind = AttackClass::kDataFlow;
  std::string goal;  // in the attacker's words: what the planted text asks for
  Json calls;        // the calls that achieve it: [{name, args}] (none for an output goal)
  std::string reply;  // an output goal: what the model adds to its reply
  std::string shows;  // an output goal: the part of `reply` whose arrival is the attack's success
};

struct InjectionSuite {
  std::string name;
  std::string title;
  std::string file;
  std::string user_name;  // who the planted text claims to be
  AgentConfig agent;
  Json environment;  // tool -> fixture entries whose strings hold the vectors
  std::map<std::string, std::string> vectors;  // placeholder -> its text when nothing is planted
  std::vector<UserTask> user_tasks;
  std::vector<InjectionTask> injection_tasks;
};

// Every problem as file:line:col in the Status, like a scenario file.
Result<InjectionSuite> LoadInjectionSuite(const std::string& path);
// Whether `path` looks like a suite (a mapping with `suite` and `user_tasks`).
bool IsInjectionSuiteFile(const std::string& path);

// What a case's attack is: the injection task's class, except that a control-flow
// attack on a task that itself makes a call of that tool is a substitution (the
// person asked for that kind of write; the attacker chose its ordinary values).
AttackClass CaseClass(const UserTask& task, const InjectionTask& injection);

// The planted text: AgentDojo's "important_instructions" attack, in the user's name.
std::string AttackText(const InjectionSuite& suite, const InjectionTask& task);

// One case as a scenario: `injection` planted in every vector (none: the benign run).
Scenario CaseScenario(const InjectionSuite& suite, const UserTask& task, const InjectionTask* injection);

}  // namespace reins
