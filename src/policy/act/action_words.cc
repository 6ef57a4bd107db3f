#include "policy/act/action_words.h"

#include "policy/act/speech.h"

namespace reins {

using namespace speech;

namespace action_words {


// Words too common in tool descriptions to tell one tool from another (as stems).
bool IsPlainWord(const std::string& stem) {
  static const std::set<std::string> kPlain = [] {
    std::set<std::string> out;
    for (const char* w : {"request", "information", "info", "details", "user", "someone", "person", "people", "their",
                          "about", "which", "there", "these", "those", "other", "short", "whole", "some", "with", "from",
                          "into", "this", "that", "what", "when", "where", "while", "them", "they", "your", "thing",
                          "result", "results", "returns", "top", "may"}) {
      out.insert(Stem(w));
    }
    return out;
  }();
  return kPlain.count(stem) > 0;
}

// Two stems name the same thing: equal, or one a short extension of the other
// ("pray" and "prayer", "visit" and "visitor").
bool SameStem(const std::string& a, const std::string& b) {
  if (a == b) return true;
  const std::string& shorter = a.size() < b.size() ? a : b;
  const std::string& longer = a.size() < b.size() ? b : a;
  return shorter.size() >= 4 && longer.size() - shorter.size() <= 2 && longer.compare(0, shorter.size(), shorter) == 0;
}

bool HasStem(const Stems& stems, const std::string& stem) {
  return std::any_of(stems.begin(), stems.end(), [&](const std::string& s) { return SameStem(s, stem); });
}

// A noun's stem, its possessive aside: "week's" names the week.
std::string NounStem(std::string_view w) { return Stem(w.ends_with("'s") ? w.substr(0, w.size() - 2) : w); }

Stems StemsOf(const std::vector<std::string>& words, size_t from) {
  Stems out;
  for (size_t i = from; i < words.size(); ++i) {
    const std::string& w = words[i];
    out.push_back(NounStem(w));
  }
  return out;
}

// "e-mail" (the verb and the noun) as one word, "email", the way the synonyms and most
// tools' words spell it.
std::string OneWordEmail(std::string_view text) {
  std::string out(text);
  for (size_t at = 0; (at = AsciiLower(out).find("e-mail", at)) != std::string::npos;) out.erase(at + 1, 1);
  return out;
}

}  // namespace action_words

using namespace action_words;

namespace {

// How much a word of a tool's input schema weighs against one of its name, title or
// description: property names and enums are often plain ("name", "next").
constexpr double kSchemaWeight = 0.5;

// The description opens with its verb: "Sends a short text message", "Looks up a Bible
// verse", "Compares today's partitions"; not "Kids ministry rooms", "Links, traffic share".
bool DescribedByVerb(const std::vector<std::string>& d) {
  if (d.empty() || d.front().size() <= 3 || !d.front().ends_with("s")) return false;
  if (IsActionVerb(Stem(d.front()))) return true;
  return d.size() > 1 && OneOf({"a", "an", "the", "up", "someone", "what", "one", "every", "all", "whether"}, d[1]);
}

// The words of an input schema's property names and string enums, one level deep:
// {"status": {"enum": ["online", "offline"]}} -> status, online, offline.
std::vector<std::string> SchemaWords(const Json& schema) {
  std::vector<std::string> out;
  if (!schema.is_object() || !schema.contains("properties") || !schema["properties"].is_object()) return out;
  for (const auto& [property, spec] : schema["properties"].items()) {
    for (std::string& w : IdentifierWords(property)) out.push_back(std::move(w));
    if (!spec.is_object() || !spec.contains("enum") || !spec["enum"].is_array()) continue;
    for (const Json& value : spec["enum"]) {
      if (!value.is_string()) continue;
      for (std::string& w : IdentifierWords(value.get<std::string>())) out.push_back(std::move(w));
    }
  }
  return out;
}

}  // namespace

ActionReader::ActionReader(const std::vector<ToolDef>& tools) {
  std::map<std::string, int> shared;
  for (const ToolDef& def : tools) {
    Tool t;
    t.def = &def;
    t.lower_name = AsciiLower(def.name);
    t.lower_title = AsciiLower(def.title);
    t.identifier_name = std::any_of(def.name.begin() + (def.name.empty() ? 0 : 1), def.name.end(), [](char c) {
      return c == '_' || c == '.' || c == '-' || std::isupper(static_cast<unsigned char>(c));
    });
    t.writes = !def.annotations.value("readOnlyHint", false);
    for (const std::string& p : def.claims) {
      auto re = std::make_unique<RE2>(p, RE2::Quiet);
      if (re->ok()) t.claims.push_back(std::move(re));
    }
    std::set<std::string> own_verbs, objects;
    // A name's words are chosen: "web" of webSearch tells it from the others.
    std::vector<std::string> name = IdentifierWords(def.name);
    for (size_t i = 0; i < name.size(); ++i) {
      const std::string s = Stem(name[i]);
      if (i == 0 && IsActionVerb(s)) own_verbs.insert(s);
      else if (s.size() >= 3) objects.insert(s);
    }
    std::set<std::string> to_verbs;  // "... to call the person back": its verbs, and its objects too
    // "Records a prayer request for the prayer team": the description's first word is
    // its verb when it reads like one (an action's verb, or a word ending in -s before
    // "a", "the", "up": not "Kids ministry rooms"), its longer words what it acts on.
    std::vector<std::string> description = Words(def.description);
    size_t first_object = 0;
    const bool asks = !description.empty() && OneOf({"ask", "request"}, Stem(description.front()));
    if (DescribedByVerb(description)) {
      own_verbs.insert(Stem(description.front()));
      if (description.size() > 1 && description[1] == "up") first_object = 2;  // "Looks up"
      else first_object = 1;
    }
    for (size_t i = first_object; i < description.size(); ++i) {
      // "Asks a pastor to call the person back": what it asks done is its action too
      // (not "Shares a file to edit": what the file may then have done to it)
      if (asks && i > 0 && description[i - 1] == "to" && IsActionVerb(Stem(description[i]))) {
        to_verbs.insert(Stem(description[i]));
      }
      if (description[i].size() >= 4) objects.insert(NounStem(description[i]));
    }
    // What it takes names what it acts on, more weakly: "phone" of a callback, the
    // "offline" of a status enum.
    std::set<std::string> schema_objects;
    for (const std::string& w : SchemaWords(def.input_schema)) {
      if (w.size() >= 4) schema_objects.insert(Stem(w));
    }
    for (const std::string& w : Words(def.title)) {
      const std::string s = NounStem(w);
      if (w.ends_with("ing") && IsActionVerb(s)) {
        own_verbs.insert(s);  // "message sending"
      } else if (w.size() >= 4 && !IsPlainWord(s)) {
        objects.insert(s);
        t.title_words.insert(s);
      }
    }
    own_verbs.insert(to_verbs.begin(), to_verbs.end());
    t.own_verbs = own_verbs;
    for (const std::string& v : own_verbs) {
      t.verbs.insert(v);
      if (auto it = Synonyms().find(v); it != Synonyms().end()) t.verbs.insert(it->second.begin(), it->second.end());
    }
    for (const std::string& o : objects) {
      if (IsPlainWord(o) || (own_verbs.count(o) > 0 && to_verbs.count(o) == 0)) continue;
      t.objects[o] = 1.0;
      ++shared[o];
    }
    for (const std::string& o : schema_objects) {
      if (IsPlainWord(o) || own_verbs.count(o) > 0 || t.objects.count(o) > 0) continue;
      t.objects[o] = kSchemaWeight;
      ++shared[o];
    }
    tools_.push_back(std::move(t));
  }
  for (Tool& t : tools_) {
    for (auto& [object, weight] : t.objects) weight /= shared[object];
  }
}

ActionReader::~ActionReader() = default;

}  // namespace reins
