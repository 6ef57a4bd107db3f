// `reins chat`: a terminal conversation with the configured model, every turn governed
// by the runtime. Tool events print as short lines under each reply; slash commands
// answer clarifications and approvals, change speaker, and show the trace.
#include <cstdlib>
#include <iostream>
#include <optional>

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
      "  /select ID   answer the pending clarification with an option\n"
      "  /approve     approve the pending call     /deny   deny it\n"
      "  /trace       the full event trace of the last turn\n"
      "  /quit        leave (Ctrl-D works too)\n");
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
  if (r.clarification) {
    for (const ClarificationOption& o : r.clarification->clarification.options) {
      std::cout << "    " << term.Yellow("/select " + o.id) << "  " << o.title
                << (o.subtitle.empty() ? "" : term.Dim("  " + o.subtitle)) << "\n";
    }
  }
  if (r.approval) {
    std::cout << "    " << term.Yellow("/approve") << " or " << term.Yellow("/deny") << "  " << r.approval->tool << " "
              << term.Dim(r.approval->args.dump()) << "\n";
  }
}

// Turns one typed line into a turn input; nullopt for a line handled here.
std::optional<TurnInput> ParseLine(const std::string& line, std::string& speaker, const TurnResult* last,
                                   const Term& term, bool* quit) {
  TurnInput in;
  in.speaker = speaker;
  if (line.empty()) return std::nullopt;
  if (line[0] != '/') {
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
  } else if (cmd == "/approve" || cmd == "/deny") {
    in.approve = cmd == "/approve";
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
