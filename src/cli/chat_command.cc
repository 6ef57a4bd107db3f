// `reins chat`: a terminal conversation with the configured model, every turn governed
// by the runtime. Tool events print as short lines under each reply; a pending question
// is answered by typing (an option's number or name, yes or no: domain/typed_answer.h)
// or with slash commands, which also change speaker and show the trace.
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "cli/commands.h"
#include "host/runtime_parts.h"
#include "cli/term.h"
#include "cli/timeline_text.h"
#include "cli/transcript.h"
#include "config/agent_config_loader.h"
#include "domain/detail_log.h"
#include "domain/json_parse.h"
#include "domain/typed_answer.h"
#include "host/agent_host.h"
#include "model/provider_factory.h"
#include "reins/runtime.h"

namespace reins {
namespace {

// An API key in the environment names the real provider a scripted agent chats with.
std::string ProviderFromEnvironment() {
  if (std::getenv("OPENAI_API_KEY") != nullptr) return "openai";
  if (std::getenv("ANTHROPIC_API_KEY") != nullptr) return "anthropic";
  return "";
}

// Applies the command-line overrides. An agent whose config scripts its model with
// `replies` chats with that script (how an agent is tried offline) unless the command
// line names a real model (--provider or --base-url). One scripted without replies
// (the examples: their scenarios hold the script) chats with the provider whose key
// is in the environment. Returns false with advice when no model can be reached.
bool ChooseModel(const ChatFlags& flags, ModelConfig& m, std::string* advice) {
  const bool scripted = m.provider == "scripted" || m.provider == "sim";
  std::string provider = flags.provider;
  if (scripted && provider.empty() && flags.base_url.empty()) {
    if (m.provider == "scripted" && m.options.contains("replies")) return true;
    provider = ProviderFromEnvironment();
    if (provider.empty()) {
      *advice = std::string(m.provider == "sim" ? "This agent's model is the simulated one, which needs a scenario (reins run, eval)"
                                                : "This agent's model is scripted but its config has no model.replies to replay") +
                ":\n  chat with a real model: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or pass\n"
                "  --base-url http://127.0.0.1:11434/v1 --model llama3.1 (any OpenAI-compatible server, Ollama here).\n"
                "  For a scripted conversation with no key: build/reins demo";
      return false;
    }
  }
  if (!provider.empty()) m.provider = provider;
  if (scripted && provider.empty()) m.provider = "openai";  // --base-url alone: an OpenAI-compatible server
  if (scripted && m.model.empty()) m.model = m.provider == "anthropic" ? "claude-sonnet-4-5" : "gpt-4o-mini";
  if (!flags.model.empty()) m.model = flags.model;
  if (!flags.base_url.empty()) m.base_url = flags.base_url;
  if (!IsHttpProvider(m.provider)) {
    *advice = "--provider must be openai or anthropic, got '" + m.provider + "'";
    return false;
  }
  ApplyProviderEnvironment(m);
  bool local = !m.base_url.empty() && m.base_url.find("api.openai.com") == std::string::npos &&
               m.base_url.find("api.anthropic.com") == std::string::npos;
  if (m.api_key.empty() && !local) {
    *advice = std::string("No API key for ") + m.provider + ": set " +
              (m.provider == "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY") +
              " (or write api_key: ${VAR} under model: in the agent config).\n"
              "  For a scripted conversation with no key: build/reins demo";
    return false;
  }
  return true;
}

void PrintHelp(const Term& term) {
  std::cout << term.Dim(
      "  /as NAME     speak as someone else (multi-speaker sessions)\n"
      "  /select ID   answer the pending clarification with an option (or type its number or name)\n"
      "  /approve     approve the pending call (or type yes)   /deny [why]  deny it (or type no)\n"
      "  /approve ARG=VALUE ...   approve it with changed arguments (when the tool allows it)\n"
      "  /always      approve it and allow that tool for the rest of the session (when the tool allows it)\n"
      "  /trace       the full event trace of the last turn\n"
      "  /quit        leave (Ctrl-D works too)\n");
}

void PrintOptions(const Clarification& c, const Term& term) {
  for (size_t i = 0; i < c.options.size(); ++i) {
    std::cout << "    " << term.Yellow(std::to_string(i + 1) + ".") << " " << OptionLine(c.options[i]) << "\n";
  }
  std::cout << term.Dim("    answer with a number or a name (/select ID works too)") << "\n";
}

// `streamed`: how much of the reply was already printed as it was written.
void PrintResult(const TurnResult& r, const Term& term, size_t streamed) {
  if (streamed > 0) {
    // The rest of a streamed reply (a correction, a failure note) ends its line.
    if (streamed < r.reply.size()) std::cout << r.reply.substr(streamed);
    std::cout << "\n";
  }
  PrintStepLines(std::cout, r.events, term);
  switch (r.status) {
    case TurnStatus::kFailed:
      std::cout << term.Red("  turn failed: ") << r.error << "\n";
      return;
    case TurnStatus::kBlocked:
      std::cout << term.Yellow("  blocked: ") << r.blocked_reason << "\n";
      return;
    default:
      break;
  }
  if (!r.reply.empty() && streamed == 0) std::cout << term.Bold(term.Cyan("agent> ")) << r.reply << "\n";
  if (r.clarification && r.status == TurnStatus::kAwaitingClarification) PrintOptions(r.clarification->clarification, term);
  if (r.approval) {
    std::string how = "answer yes or no (/approve, /deny)";
    if (r.approval->allow_edit) how += "; /approve ARG=VALUE changes an argument";
    if (r.approval->may_remember) how += "; /always allows it for this session";
    std::cout << "    " << term.Dim(how) << "\n";
  }
}

// `/approve quantity=60 pickup=true`: each ARG=VALUE (words split at spaces, so a value
// holds none), the value read as JSON when it is JSON (60, true), else as the text it is.
std::optional<Json> EditedArgs(const std::string& text, const Term& term) {
  Json args = Json::object();
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cout << term.Yellow("  write each change as ARG=VALUE, e.g. /approve quantity=60") << "\n";
      return std::nullopt;
    }
    const std::string value = word.substr(eq + 1);
    Result<Json> parsed = ParseJson(value);
    args[word.substr(0, eq)] = parsed.ok() ? *parsed : Json(value);
  }
  return args;
}

// What a typed line answers while a question is pending: a choice, or yes or no;
// nullopt (after saying why) when it fits no option or several, or is neither.
std::optional<TurnInput> TypedAnswer(const std::string& line, TurnInput in, const TurnResult& last, const Term& term) {
  if (last.approval) {
    if (std::optional<bool> yes = TypedDecision(line)) {
      in.approve = *yes;
      return in;
    }
    std::cout << term.Yellow("  please answer yes or no: ") << last.approval->prompt << "\n";
    return std::nullopt;
  }
  const Clarification& c = last.clarification->clarification;
  const OptionMatch match = MatchOption(c.options, line);
  if (match.kind == OptionMatch::Kind::kOne) {
    in.select = c.options[match.index].id;
    return in;
  }
  std::cout << term.Yellow("  " + AskAgain(c, match)) << "\n";
  PrintOptions(c, term);
  return std::nullopt;
}

// Turns one typed line into a turn input; nullopt for a line handled here.
std::optional<TurnInput> ParseLine(const std::string& line, std::string& speaker, const TurnResult* last,
                                   const Term& term, bool* quit) {
  TurnInput in;
  in.speaker = speaker;
  if (line.empty()) return std::nullopt;
  if (line[0] != '/') {
    if (last != nullptr && (last->approval || last->clarification)) return TypedAnswer(line, std::move(in), *last, term);
    in.say = line;
    return in;
  }
  std::string cmd = line.substr(0, line.find(' '));
  std::string arg = line.size() > cmd.size() + 1 ? line.substr(cmd.size() + 1) : "";
  if (cmd == "/quit" || cmd == "/exit") {
    *quit = true;
  } else if (cmd == "/as" && !arg.empty()) {
    speaker = arg;
    std::cout << term.Dim("  now speaking as " + speaker) << "\n";
  } else if (cmd == "/select" && !arg.empty()) {
    in.select = arg;
    return in;
  } else if (cmd == "/approve" || cmd == "/always") {
    ApprovalAnswer answer(true);
    answer.remember = cmd == "/always";
    if (!arg.empty()) {
      std::optional<Json> edits = EditedArgs(arg, term);
      if (!edits) return std::nullopt;
      answer.args = std::move(*edits);
    }
    in.approve = std::move(answer);
    return in;
  } else if (cmd == "/deny") {
    ApprovalAnswer answer(false);
    answer.message = arg;
    in.approve = std::move(answer);
    return in;
  } else if (cmd == "/trace") {
    if (last != nullptr) PrintEvents(std::cout, last->events, term);
  } else {
    PrintHelp(term);
  }
  return std::nullopt;
}

}  // namespace

int ChatCommand(const ChatFlags& flags) {
  // Where a failed call really went (hidden from replies and traces) is for this user.
  SetDetailSink([](std::string_view source, std::string_view message) {
    std::cerr << "reins: " << source << ": " << message << "\n";
  });
  Term term = Term::ForStdout();
  Result<AgentConfig> config = LoadAgentConfigFile(flags.config);
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    if (config.status().message().find("environment variable") != std::string::npos) {
      std::cerr << "Set that variable, or run build/reins demo for a scripted conversation with no key.\n";
    }
    return 2;
  }
  std::string advice;
  if (!ChooseModel(flags, config->model, &advice)) {
    std::cerr << advice << "\n";
    return 2;
  }
  auto clock = std::make_shared<SystemClock>();
  const std::string store_url = flags.store.empty() ? config->store : flags.store;
  Result<RuntimeParts> made = MakeRuntimeParts(*config, flags.store, clock);
  if (!made.ok()) {
    std::cerr << made.status().message() << "\n";
    return 2;
  }
  // The agent with its MCP servers (started before the runtime, stopped after it).
  Result<std::unique_ptr<AgentHost>> host = AgentHost::Start(*config, clock);
  if (!host.ok()) {
    std::cerr << host.status().message() << "\n";
    return 2;
  }
  Result<Runtime*> runtime = (*host)->StartRuntime(std::move(made).value());
  if (!runtime.ok()) {
    std::cerr << runtime.status().message() << "\n";
    return 2;
  }
  auto session = (*runtime)->CreateSession();
  if (!session.ok()) {
    std::cerr << session.status().message() << "\n";
    return 1;
  }
  std::cout << term.Bold("reins chat") << "  " << config->name << " with " << config->model.provider << " "
            << config->model.model << term.Dim("   /help for commands") << "\n";
  if (!(*runtime)->Greeting().empty()) std::cout << term.Bold(term.Cyan("agent> ")) << (*runtime)->Greeting() << "\n";

  boost::asio::io_context io;
  std::string speaker = flags.speaker;
  std::optional<TurnResult> last;
  for (bool quit = false; !quit;) {
    std::cout << term.Bold(speaker + "> ") << std::flush;
    std::string line;
    if (!std::getline(std::cin, line)) break;
    std::optional<TurnInput> in = ParseLine(line, speaker, last ? &*last : nullptr, term, &quit);
    if (!in) continue;
    Result<TurnResult> result = FailedPrecondition("the turn did not finish");
    // The reply prints sentence by sentence as the rails pass it (docs/streaming.md).
    size_t streamed = 0;
    in->on_event = [&](const TraceEvent& e) {
      if (e.type != EventType::kReplyDelta) return;
      const std::string text = e.data.value("text", "");
      if (streamed == 0) std::cout << term.Bold(term.Cyan("agent> "));
      std::cout << text << std::flush;
      streamed += text.size();
    };
    // An MCP server's tool list changed during the last turn: this one sees the new one.
    (*host)->AwaitCatalog();
    auto turn = [&]() -> Task<void> { result = co_await (*runtime)->RunTurn(*session, std::move(*in)); };
    boost::asio::co_spawn(io, turn(), boost::asio::detached);
    io.restart();
    io.run();
    if (!result.ok()) {
      std::cout << term.Yellow("  " + result.status().message()) << "\n";
      continue;
    }
    PrintResult(*result, term, streamed);
    last = std::move(*result);
  }
  std::cout << "\n" << term.Dim("session " + *session + " (reins trace --store " + store_url + " --session " + *session + ")") << "\n";
  (*host)->StopServers();  // before `io` goes: a question left open holds its executor
  return 0;
}

}  // namespace reins
