#include "eval/cassette.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include <re2/re2.h>

#include "domain/json_parse.h"
#include "domain/text.h"

namespace reins {
namespace {

constexpr const char* kSchema = "reins.cassette";

bool IsStream(const std::string& content_type) { return content_type.starts_with("text/event-stream"); }

// Ids reins makes (t_…, s_…, with an idempotency key's run salt) differ from run to run
// of a kept session; the model's answer does not depend on them.
void NormaliseIds(Json& j) {
  static const RE2 kId(R"(\b([a-z]{1,3})_[0-9a-f]{35}(?:\.[0-9a-f]{16})?)");
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    if (RE2::GlobalReplace(&s, kId, "\\1_<id>") > 0) j = std::move(s);
  } else if (j.is_structured()) {
    for (Json& child : j) NormaliseIds(child);
  }
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) lines.push_back(text.substr(start, nl - start));
  lines.push_back(text.substr(start));
  return lines;
}

Json ResponseToJson(const Cassette::Exchange& e) {
  Json r = {{"status", e.status}, {"content_type", e.content_type}};
  if (IsStream(e.content_type)) {
    r["stream"] = Lines(e.body);
  } else if (Json body = ParseJsonOrDiscarded(e.body, kMaxStoredJsonDepth); !body.is_discarded()) {
    r["json"] = std::move(body);
  } else {
    r["body"] = e.body;
  }
  return r;
}

std::string BodyFromJson(const Json& r) {
  if (r.contains("stream") && r["stream"].is_array()) {
    std::string body;
    for (size_t i = 0; i < r["stream"].size(); ++i) {
      if (i > 0) body += '\n';
      body += r["stream"][i].get<std::string>();
    }
    return body;
  }
  if (r.contains("json")) return r["json"].dump();
  return r.value("body", "");
}

std::string Short(const Json& v) {
  std::string s = v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.dump();
  return Clipped(s, 80);
}

// Counts the leaves where `a` and `b` differ; the first few go to `where`.
int Differences(const Json& a, const Json& b, const std::string& path, std::vector<std::string>& where) {
  auto note = [&](const std::string& what) {
    if (where.size() < 3) where.push_back(path.empty() ? what : path + ": " + what);
    return 1;
  };
  if (a.is_object() && b.is_object()) {
    int n = 0;
    for (const auto& [k, v] : a.items()) {
      n += b.contains(k) ? Differences(v, b[k], path + "/" + k, where) : note("recorded has /" + k + ", now absent");
    }
    for (const auto& [k, v] : b.items()) {
      if (!a.contains(k)) n += note("now has /" + k + " = " + Short(v) + ", not recorded");
    }
    return n;
  }
  if (a.is_array() && b.is_array()) {
    int n = 0;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) n += Differences(a[i], b[i], path + "/" + std::to_string(i), where);
    if (a.size() != b.size()) {
      n += note(std::to_string(a.size()) + " items recorded, " + std::to_string(b.size()) + " now");
    }
    return n;
  }
  if (a != b) return note("recorded " + Short(a) + ", now " + Short(b));
  return 0;
}

}  // namespace

Result<std::shared_ptr<Cassette>> Cassette::Open(const std::string& dir, const std::string& scenario_id, Mode mode) {
  const std::string path = (std::filesystem::path(dir) / (scenario_id + ".json")).string();
  std::shared_ptr<Cassette> c(new Cassette(mode, path, scenario_id));
  if (mode == Mode::kRecord) return c;
  std::ifstream in(path);
  if (!in) return NotFound("no cassette for scenario '" + scenario_id + "' (" + path + "); record one with --record " + dir);
  std::stringstream text;
  text << in.rdbuf();
  Json j = ParseJsonOrDiscarded(text.str(), kMaxStoredJsonDepth);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != kSchema || !j.contains("exchanges") ||
      !j["exchanges"].is_array()) {
    return InvalidArgument(path + " is not a reins cassette");
  }
  c->provider_ = j.value("provider", "");
  c->model_ = j.value("model", "");
  try {
    for (const Json& x : j["exchanges"]) {
      Exchange e;
      e.run = x.at("run").get<int>();
      e.governor = x.value("governor", "on") == "on";
      e.turn = x.value("turn", 0);
      e.seq = x.value("seq", 0);
      e.request = x.at("request");
      e.key = Key(e.request);
      const Json& r = x.at("response");
      e.status = r.value("status", 200);
      e.content_type = r.value("content_type", "application/json");
      e.body = BodyFromJson(r);
      c->exchanges_.push_back(std::move(e));
    }
  } catch (const Json::exception& e) {
    return InvalidArgument(path + ": a malformed exchange: " + e.what());
  }
  return c;
}

void Cassette::SetModel(std::string provider, std::string model) {
  std::lock_guard lock(mu_);
  provider_ = std::move(provider);
  model_ = std::move(model);
}

std::shared_ptr<CassetteTape> Cassette::ForRun(int run, bool governor) {
  // The tape keeps the cassette alive; the cassette never points back at a tape.
  return std::make_shared<CassetteTape>(shared_from_this(), run, governor);
}

Json Cassette::Normalise(const std::string& body) {
  Json j = ParseJsonOrDiscarded(body, kMaxStoredJsonDepth);
  if (j.is_discarded()) return Json(body);
  if (j.is_object()) {
    j.erase("stream");
    j.erase("stream_options");
  }
  NormaliseIds(j);
  return j;
}

std::string Cassette::Key(const Json& normalised) {
  const std::string text = normalised.dump();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

void Cassette::Add(Exchange e) {
  std::lock_guard lock(mu_);
  exchanges_.push_back(std::move(e));
}

const Cassette::Exchange* Cassette::Find(const std::string& key, int run, bool governor, int occurrence) const {
  std::lock_guard lock(mu_);
  // Runs beyond those recorded replay the recorded ones in turn.
  int recorded_runs = 0;
  for (const Exchange& e : exchanges_) {
    if (e.governor == governor) recorded_runs = std::max(recorded_runs, e.run);
  }
  const int as_run = recorded_runs > 0 ? (run - 1) % recorded_runs + 1 : run;
  const Exchange* last = nullptr;
  int seen = 0;
  for (const Exchange& e : exchanges_) {
    if (e.run != as_run || e.governor != governor || e.key != key) continue;
    if (seen++ == occurrence) return &e;
    last = &e;
  }
  if (last != nullptr) return last;
  for (const Exchange& e : exchanges_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

namespace {

// The tool whose call `id` is, from the assistant messages of `messages` (OpenAI's
// tool_calls, Anthropic's tool_use blocks); "" when none names it.
std::string ToolOfCall(const Json& messages, const std::string& id) {
  for (const Json& m : messages) {
    for (const Json& c : m.value("tool_calls", Json::array())) {
      if (c.value("id", "") == id && c.contains("function")) return c["function"].value("name", "");
    }
    const Json content = m.value("content", Json());
    if (!content.is_array()) continue;
    for (const Json& b : content) {
      if (b.is_object() && b.value("type", "") == "tool_use" && b.value("id", "") == id) return b.value("name", "");
    }
  }
  return "";
}

// The tool whose result one of the differences `where` (paths such as
// "/messages/3/content: ...") lies in, or nullopt when they are not in a tool's result.
std::optional<std::string> ToolThatDiffers(const Json& request, const std::vector<std::string>& where) {
  const Json messages = request.value("messages", Json::array());
  for (const std::string& w : where) {
    if (!w.starts_with("/messages/")) continue;
    const size_t i = static_cast<size_t>(std::atoi(w.c_str() + 10));
    if (i >= messages.size() || !messages[i].is_object()) continue;
    const Json& m = messages[i];
    if (m.value("role", "") == "tool") return ToolOfCall(messages, m.value("tool_call_id", ""));
    const Json content = m.value("content", Json());
    if (!content.is_array()) continue;
    for (const Json& b : content) {  // Anthropic: a user message of tool_result blocks
      if (b.is_object() && b.value("type", "") == "tool_result") return ToolOfCall(messages, b.value("tool_use_id", ""));
    }
  }
  return std::nullopt;
}

}  // namespace

std::string Cassette::ExplainMiss(const Json& request, int run, bool governor, int turn) const {
  std::lock_guard lock(mu_);
  std::string message = "scenario '" + scenario_ + "' turn " + std::to_string(turn) +
                        ": no recorded model exchange matches this request (" + path_ + ")";
  const Exchange* nearest = nullptr;
  int fewest = 0;
  bool nearest_aligned = false;
  std::vector<std::string> where;
  const size_t messages = request.value("messages", Json::array()).size();
  for (const Exchange& e : exchanges_) {
    std::vector<std::string> w;
    int n = Differences(e.request, request, "", w);
    // An exchange at the same point of the conversation (as many messages) comes first:
    // one earlier differs only in its length, which counts once, and would hide that a
    // tool's result is what changed. Ties go to the same run and turn: that is the
    // exchange the request replaced.
    const bool aligned = e.request.value("messages", Json::array()).size() == messages;
    bool closer = nearest == nullptr || (aligned && !nearest_aligned) ||
                  (aligned == nearest_aligned &&
                   (n < fewest || (n == fewest && e.run == run && e.governor == governor && e.turn == turn)));
    if (closer) {
      nearest = &e;
      fewest = n;
      nearest_aligned = aligned;
      where = std::move(w);
    }
  }
  if (nearest == nullptr) return message + "; the cassette is empty";
  message += "; the nearest recorded one (run " + std::to_string(nearest->run) + ", turn " +
             std::to_string(nearest->turn) + ") differs in " + std::to_string(fewest) + " place" +
             (fewest == 1 ? "" : "s") + ": ";
  for (size_t i = 0; i < where.size(); ++i) message += (i > 0 ? "; " : "") + where[i];
  if (std::optional<std::string> tool = ToolThatDiffers(request, where)) {
    // Not the prompt: a tool answered differently in this run than when it was recorded.
    const std::string named = tool->empty() ? "a tool" : "tool '" + *tool + "'";
    return message + ". The difference is in what " + named + " returned, not in the prompt: a cassette holds the " +
           "model's exchanges only, and the agent's tools run again in replay. If the tool's service is down or " +
           "answers differently, start it, or give the scenario a fixture for " +
           (tool->empty() ? "the tool" : "'" + *tool + "'") + " (fixtures:, docs/scenarios.md) so that replay runs offline";
  }
  return message + ". Record again with --record when the prompt or the tools changed";
}

Status Cassette::Save() const {
  std::lock_guard lock(mu_);
  std::vector<const Exchange*> order;
  for (const Exchange& e : exchanges_) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const Exchange* a, const Exchange* b) {  // governed runs first
    return std::make_tuple(!a->governor, a->run, a->seq) < std::make_tuple(!b->governor, b->run, b->seq);
  });
  Json list = Json::array();
  for (const Exchange* e : order) {
    list.push_back({{"run", e->run},
                    {"governor", e->governor ? "on" : "off"},
                    {"turn", e->turn},
                    {"seq", e->seq},
                    {"key", e->key},
                    {"request", e->request},
                    {"response", ResponseToJson(*e)}});
  }
  Json file = {{"schema", kSchema}, {"version", 1},         {"scenario", scenario_},
               {"provider", provider_}, {"model", model_}, {"exchanges", std::move(list)}};
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  std::ofstream out(path_);
  out << file.dump(2) << "\n";
  if (!out) return Unavailable("cannot write the cassette " + path_);
  return OkStatus();
}

Task<Result<HttpResponse>> CassetteTape::Exchange(HttpRequest request, BodyChunkFn on_chunk, HttpClient& client) {
  Json normalised = Cassette::Normalise(request.body);
  std::string key = Cassette::Key(normalised);
  if (cassette_->mode() == Cassette::Mode::kRecord) {
    std::string streamed;
    BodyChunkFn capture;
    if (on_chunk) {
      capture = [&](std::string_view bytes) {
        streamed.append(bytes);
        return on_chunk(bytes);
      };
    }
    Task<Result<HttpResponse>> sent = capture ? client.Stream(std::move(request), capture) : client.Send(std::move(request));
    Result<HttpResponse> response = co_await std::move(sent);
    if (response.ok() && response->status >= 200 && response->status < 300) {
      Cassette::Exchange e;
      e.run = run_;
      e.governor = governor_;
      e.turn = turn_;
      e.seq = seq_++;
      e.key = std::move(key);
      e.request = std::move(normalised);
      e.status = response->status;
      e.content_type = response->Header("content-type");
      e.body = capture ? streamed : response->body;
      cassette_->Add(std::move(e));
    }
    co_return response;
  }
  const int occurrence = static_cast<int>(std::count(seen_.begin(), seen_.end(), key));
  seen_.push_back(key);
  const Cassette::Exchange* e = cassette_->Find(key, run_, governor_, occurrence);
  if (e == nullptr) {
    if (miss_.empty()) miss_ = cassette_->ExplainMiss(normalised, run_, governor_, turn_);
    co_return FailedPrecondition("replay: " + miss_);
  }
  HttpResponse response;
  response.status = e->status;
  response.AddHeader("content-type", e->content_type);
  if (on_chunk && IsStream(e->content_type)) {
    if (Status fed = on_chunk(e->body); !fed.ok()) co_return fed;
  } else {
    response.body = e->body;
  }
  co_return response;
}

}  // namespace reins
