#include "domain/json_parse.h"

#include <string>

namespace reins {
namespace {

// nlohmann's own DOM builder, stopped at the depth limit: returning false from a SAX
// callback ends the parse at once.
class BoundedDomParser : public nlohmann::detail::json_sax_dom_parser<Json> {
 public:
  BoundedDomParser(Json& out, int max_depth) : json_sax_dom_parser(out, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  bool start_object(std::size_t n) { return Enter() && json_sax_dom_parser::start_object(n); }
  bool end_object() {
    --depth_;
    return json_sax_dom_parser::end_object();
  }
  bool start_array(std::size_t n) { return Enter() && json_sax_dom_parser::start_array(n); }
  bool end_array() {
    --depth_;
    return json_sax_dom_parser::end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const Exception& e) {
    error_ = e.what();
    // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
    if (size_t close = error_.find("] "); error_.starts_with("[json.exception") && close != std::string::npos) {
      error_ = error_.substr(close + 2);
    }
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::string& error() const { return error_; }

 private:
  bool Enter() {
    if (++depth_ <= max_depth_) return true;
    too_deep_ = true;
    return false;
  }

  int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
  std::string error_;
};

}  // namespace

Result<Json> ParseJson(std::string_view text, int max_depth) {
  Json out;
  BoundedDomParser parser(out, max_depth);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &parser);
  if (parser.too_deep()) return InvalidArgument("JSON nested deeper than " + std::to_string(max_depth) + " levels");
  if (!ok || parser.is_errored()) {
    return InvalidArgument(parser.error().empty() ? std::string("invalid JSON") : "invalid JSON: " + parser.error());
  }
  return out;
}

Json ParseJsonOrDiscarded(std::string_view text, int max_depth) {
  Result<Json> parsed = ParseJson(text, max_depth);
  if (!parsed.ok()) return Json(Json::value_t::discarded);
  return std::move(parsed).value();
}

}  // namespace reins
