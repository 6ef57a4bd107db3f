#include "policy/rails/ui_allowlist.h"

#include <algorithm>
#include <cctype>

#include <re2/re2.h>

#include "policy/rails/rail_text.h"

namespace reins {
namespace {

constexpr const char* kDefaultPattern =
    R"(\b((?:[A-Z][\w-]*\s+)+(?:panel|tab|view|button|page|widget|chart|menu|screen)s?)\b)";

// The elements a streamed reply's dropped sentences named, for its last sentence.
struct UiTurn {
  std::vector<std::string> unknown;
};

std::string NotOnScreen(const std::vector<std::string>& unknown) {
  std::string list;
  for (size_t i = 0; i < unknown.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == unknown.size() ? " or " : ", ") + ("the " + unknown[i]);
  }
  return "I can't point you to " + list + ": it is not on your screen.";
}

}  // namespace

std::vector<std::string> UnknownUiElements(const Json& rail_config, const std::string& reply, const Json& page_context) {
  std::vector<std::string> known;
  if (page_context.is_object()) {
    for (const Json& e : page_context.value("ui_elements", Json::array())) {
      if (e.is_string()) known.push_back(AsciiLower(e.get<std::string>()));
    }
  }
  Json patterns = rail_config.is_object() ? rail_config.value("element_patterns", Json::array()) : Json::array();
  if (patterns.empty()) patterns.push_back(kDefaultPattern);
  std::vector<std::string> unknown;
  for (const Json& p : patterns) {
    RE2 re(p.get<std::string>(), RE2::Quiet);
    if (!re.ok() || re.NumberOfCapturingGroups() < 1) continue;
    re2::StringPiece input(reply);
    std::string element;
    while (RE2::FindAndConsume(&input, re, &element)) {
      // "The Nodes tab" at the start of a sentence names the "Nodes tab".
      for (const char* article : {"The ", "A ", "An ", "This ", "Your "}) {
        if (element.rfind(article, 0) == 0) element.erase(0, std::string(article).size());
      }
      std::string name = AsciiLower(element);
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
      bool on_screen = std::find(known.begin(), known.end(), name) != known.end();
      if (!on_screen && std::find(unknown.begin(), unknown.end(), element) == unknown.end()) unknown.push_back(element);
    }
  }
  return unknown;
}

bool UiAllowlist::ReviewReply(TurnContext& ctx, std::string& reply) const {
  std::vector<std::string> unknown = UnknownUiElements(config_, reply, ctx.input.page_context);
  if (unknown.empty()) return false;
  std::string kept;
  for (const std::string& sentence : Sentences(reply)) {
    bool points_away = false;
    for (const std::string& element : unknown) points_away = points_away || sentence.find(element) != std::string::npos;
    if (!points_away) kept += sentence;
  }
  while (!kept.empty() && std::isspace(static_cast<unsigned char>(kept.back()))) kept.pop_back();
  reply = (kept.empty() ? "" : kept + " ") + NotOnScreen(unknown);
  return true;
}

bool UiAllowlist::ReviewSentence(TurnContext& ctx, const std::string&, std::string& sentence) const {
  std::vector<std::string> unknown = UnknownUiElements(config_, sentence, ctx.input.page_context);
  if (unknown.empty()) return false;
  std::vector<std::string>& named = ctx.Slot<UiTurn>().unknown;
  for (std::string& e : unknown) {
    if (std::find(named.begin(), named.end(), e) == named.end()) named.push_back(std::move(e));
  }
  sentence.clear();
  return true;
}

bool UiAllowlist::CloseReply(TurnContext& ctx, const std::string& sent, std::string& tail) const {
  const std::vector<std::string>& unknown = ctx.Slot<UiTurn>().unknown;
  if (unknown.empty()) return false;
  tail += (sent.empty() ? "" : " ") + NotOnScreen(unknown);
  return true;
}

}  // namespace reins
