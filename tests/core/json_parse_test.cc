// ParseJson: nesting is bounded while parsing, so no deep value is ever built.
#include "domain/json_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace reins {
namespace {

TEST(ParseJson, StopsAtTheDepthLimitWithAClearError) {
  for (const std::string& open : {std::string("["), std::string("{\"k\":")}) {
    std::string deep;
    for (int i = 0; i < 100000; ++i) deep += open;  // unterminated too: the limit comes first
    Result<Json> parsed = ParseJson(deep);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(parsed.status().message(), "JSON nested deeper than 128 levels");
  }
}

TEST(ParseJson, AcceptsExactlyTheLimit) {
  std::string at = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParseJson(at).ok());
  std::string over = "[" + at + "]";
  EXPECT_FALSE(ParseJson(over).ok());
  EXPECT_TRUE(ParseJson(over, kMaxJsonDepth + 1).ok());
}

TEST(ParseJson, GivesTheSameValuesAsTheLibrary) {
  for (const char* text : {R"({"a":[1,2.5,-3,"x\u00e9",true,null,{"b":{}}],"c":18446744073709551615})", "[]", "\"s\"",
                           "0", "{\"dup\":1,\"dup\":2}"}) {
    Result<Json> ours = ParseJson(text);
    ASSERT_TRUE(ours.ok()) << text;
    EXPECT_EQ(*ours, Json::parse(text)) << text;
  }
}

// The same tree as nlohmann's parser builds: the same types at every node (unsigned for
// non-negative integers, signed for negative ones) and the same text when written out.
void ExpectSameAsTheLibrary(const std::string& text) {
  Json theirs = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  Result<Json> ours = ParseJson(text, 100000);
  ASSERT_EQ(ours.ok(), !theirs.is_discarded()) << "accepted by one parser only: " << text;
  if (!ours.ok()) return;
  EXPECT_EQ(ours->dump(), theirs.dump()) << text;
  std::vector<std::pair<const Json*, const Json*>> todo = {{&*ours, &theirs}};
  while (!todo.empty()) {
    auto [a, b] = todo.back();
    todo.pop_back();
    ASSERT_EQ(a->type(), b->type()) << a->dump() << " in " << text;
    if (a->is_structured()) {
      ASSERT_EQ(a->size(), b->size()) << text;
      for (auto ia = a->begin(), ib = b->begin(); ia != a->end(); ++ia, ++ib) todo.push_back({&*ia, &*ib});
    }
  }
}

TEST(ParseJson, AgreesWithTheLibraryOnTheEdges) {
  for (const char* text : {
           "-0", "-0.0", "0.0", "1.0", "1e2", "1E-2", "-1e-400", "1e400", "1.7976931348623157e308", "4.9e-324",
           "0.1", "0.30000000000000004", "123456789012345678901234567890", "-9223372036854775808",
           "-9223372036854775809", "9223372036854775807", "9223372036854775808", "18446744073709551615",
           "18446744073709551616", "4294967295", "4294967296", "-2147483648", "-2147483649", "01", "-", "1.", ".5",
           "+1", "1e", "NaN", "Infinity", "true", "false", "null", "tru", " [ 1 , 2 ] ", "\t[]\n", "[1,]", "{,}",
           "{\"a\":1,}", "[1 2]", "{\"a\"}", "{1:2}", "0e400", "0.0e18446744073709551616", "-0e999", "[1e400]",
           "{\"a\":[0.000000000000000000001e330]}", "1e-99999999999999999999", "\"\\u0000\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\"",
           "\"\\ude00\"", "\"\\ud83dx\"", "\"\\u00e9\\u4e2d\"", "\"\xc3\xa9\"", "\"\xe4\xb8\xad\"",
           "\"\xf0\x9f\x98\x80\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"",
           "\"\xe4\xb8\"", "\"\x80\"", "\"\xe0\x9f\xbf\"", "\"\xf0\x8f\xbf\xbf\"", "\"\xf5\x80\x80\x80\"",
           "\"\xef\xbf\xbf\"", "\"\xf4\x8f\xbf\xbf\"", "\"\xed\x9f\xbf\"", "\"\xee\x80\x80\"", "\"\xc2\x80\"",
           "\"\xc1\xbf\"", "\"\xc2\"", "\"\xf0\x9f\x98\"", "\"0123456789abcdef\xff\"", "\"01234567\xc3\xa9" "0123\"",
           "{\"k\xff\":1}", "{\"\\udc00\":1}", "\"a\tb\"", "\"\\x\"", "\"\\/\\b\\f\\n\\r\\t\"",
           "\xef\xbb\xbf[1]", "\xef\xbb[1]", "[1]\xef\xbb\xbf", "{\"a\":{\"b\":[{}, [], \"\"]}}",
           "{\"k\":1,\"k\":[2],\"k\":{\"x\":3}}", "[\"\"]", "\"", "[", "]", "{", "}", "", " ", "[[[]]]"}) {
    ExpectSameAsTheLibrary(text);
  }
}

// `check` on `seed` and on every change of one byte of it: each byte replaced, and each
// place given an extra byte or one fewer, by bytes that matter to a JSON reader.
void ForEachOneByteChange(const std::string& seed, void (*check)(const std::string&)) {
  using namespace std::string_literals;  // the NUL byte below stays in the string
  const std::string bytes = "{}[]\",:0123456789.-+eE tfnul\\/\x00\x7f\xc3\xa9\xff\xef\xbb\xbf\xed\xa0ud8"s;
  check(seed);
  for (size_t at = 0; at < seed.size(); ++at) {
    for (char b : bytes) {
      std::string mutated = seed;
      mutated[at] = b;
      check(mutated);
      check(seed.substr(0, at) + b + seed.substr(at));  // and inserted
    }
    check(seed.substr(0, at) + seed.substr(at + 1));  // and removed
  }
}

// Strings are copied sixteen aligned bytes at a time: an escape, a multi-byte
// character or a forbidden control byte at every place of strings of every length up
// to three blocks, starting at every offset within a block.
TEST(ParseJson, ReadsEveryStringAlikeWhereverItsBlocksFall) {
  for (size_t pad = 0; pad < 16; ++pad) {
    for (size_t length = 0; length < 48; ++length) {
      for (size_t at = 0; at <= length; at += (pad < 2 ? 1 : 5)) {
        for (const char* odd : {"\\\"", "\\n", "\\u00e9", "\xC3\xA9", "\x01", ""}) {
          const std::string text =
              std::string(pad, ' ') + "[\"" + std::string(at, 'a') + odd + std::string(length - at, 'b') + "\"]";
          ExpectSameAsTheLibrary(text);
        }
      }
    }
  }
}

TEST(ParseJson, AgreesWithTheLibraryOnMutatedDocuments) {
  // Every single-byte change of a document with every kind of value: each must be taken
  // or refused by both parsers alike, and give the same tree when taken.
  const std::string seed = R"({"id":"chatcmpl-1","n":[0,-1,2.5e3,18446744073709551615],"s":"\u00e9\n","t":true,)"
                           R"("f":false,"z":null,"o":{"a":[{}],"b":"x"},"u":"\ud83d\ude00x"})";
  ForEachOneByteChange(seed, ExpectSameAsTheLibrary);
}

TEST(ParseJson, ANumberOnlyNlohmannReadsKeepsTheDepthLimit) {
  // RapidJSON refuses "0e400" (nlohmann reads 0): such texts are read again by nlohmann.
  auto nested = [](int depth) { return std::string(depth, '[') + "0e400" + std::string(depth, ']'); };
  Result<Json> at = ParseJson(nested(kMaxJsonDepth));
  ASSERT_TRUE(at.ok()) << at.status().message();
  EXPECT_EQ(*at, Json::parse(nested(kMaxJsonDepth)));
  Result<Json> over = ParseJson(nested(kMaxJsonDepth + 1));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(), "JSON nested deeper than 128 levels");
}

TEST(ParseJson, ANulByteIsAnErrorWhereverItIs) {
  // nlohmann's parser stops at a NUL as if the text ended there; JSON text has none.
  using namespace std::string_literals;
  for (const std::string& text : {"[1]\0x"s, "\"a\0b\""s, "\0"s, "{\"k\":1}\0"s}) {
    Result<Json> parsed = ParseJson(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().message().rfind("invalid JSON: a NUL byte at offset ", 0), 0u) << parsed.status().message();
  }
}

TEST(ParseJson, ReportsSyntaxErrorsWithTheirPosition) {
  for (const char* text : {"{", "[1,", "{\"a\" 1}", "", "nul", "\"\xff\"", "[1] x"}) {
    Result<Json> parsed = ParseJson(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().message().rfind("invalid JSON", 0), 0u) << parsed.status().message();
    EXPECT_TRUE(ParseJsonOrDiscarded(text).is_discarded()) << text;
  }
}

// The full value with what `shape` leaves out removed: what ParseJsonShaped must build.
Json Projected(const Json& value, const JsonShape* shape) {
  if (shape == nullptr) return value;
  if (value.is_array()) {
    Json out = Json::array();
    for (const Json& item : value) out.push_back(Projected(item, shape));
    return out;
  }
  if (!value.is_object()) return value;
  Json out = Json::object();
  for (const auto& [key, item] : value.items()) {
    if (const JsonShape::Member* m = shape->Find(key)) out[key] = Projected(item, m->shape);
  }
  return out;
}

const JsonShape kInner{{{"a"}, {"b", nullptr}}};
const JsonShape kOuter{{{"id"}, {"n"}, {"o", &kInner}, {"u"}, {"list", &kInner}}};

void ExpectShapedIsProjected(const std::string& text) {
  Result<Json> full = ParseJson(text);
  Result<Json> shaped = ParseJsonShaped(text, kOuter);
  ASSERT_EQ(full.ok(), shaped.ok()) << text;
  if (!full.ok()) {
    EXPECT_EQ(full.status().message(), shaped.status().message()) << text;
    return;
  }
  EXPECT_EQ(*shaped, Projected(*full, &kOuter)) << text;
}

// Members left out are still read and checked: a document is taken or refused as
// ParseJson takes or refuses it, with the same error, and the members kept are the same.
TEST(ParseJsonShaped, BuildsWhatTheShapeNamesOfEveryMutatedDocument) {
  const std::string seed = R"({"id":"chatcmpl-1","skip":{"deep":[1,{"x":"\u00e9"}],"s":"\ud83d\ude00"},"n":[0,-1,2.5e3],)"
                           R"("o":{"a":[{}],"b":{"c":[true]},"c":"left out"},"list":[{"a":1,"z":2},3,[{"b":4,"y":5}]],"u":null})";
  ForEachOneByteChange(seed, ExpectShapedIsProjected);
}

// A number left out is not built but is still checked: one that overflows is refused
// as ParseJson refuses it, wherever it is.
TEST(ParseJsonShaped, ALeftOutNumberIsCheckedAsParseJsonChecksIt) {
  for (const std::string& number : {std::string("123456789012345678901234567890"), std::string("-5"), std::string("1e400"),
                                    std::string("-1e400"), std::string(299, '9'), std::string(310, '9')}) {
    ExpectShapedIsProjected(R"({"skip":)" + number + R"(,"id":1})");
    ExpectShapedIsProjected(R"({"o":{"c":[)" + number + R"(]},"id":1})");
  }
  EXPECT_FALSE(ParseJsonShaped(R"({"skip":)" + std::string(310, '9') + "}", kOuter).ok());
}

TEST(ParseJsonShaped, ALeftOutMemberStillCountsTowardsTheDepthLimit) {
  std::string deep = R"({"skip":)" + std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']') + "}";
  Result<Json> shaped = ParseJsonShaped(deep, kOuter);
  ASSERT_FALSE(shaped.ok());
  EXPECT_EQ(shaped.status().message(), ParseJson(deep).status().message());
}

// Writes the events back as compact text: over a document, the text nlohmann dumps.
class Echo : public JsonEvents {
 public:
  std::string text;
  bool Null() override { return Value("null"); }
  bool Bool(bool value) override { return Value(value ? "true" : "false"); }
  bool Number(std::string_view written) override { return Value(std::string(written)); }
  bool String(std::string_view value) override { return Value(Json(std::string(value)).dump()); }
  bool Key(std::string_view key) override {
    Comma();
    text += Json(std::string(key)).dump() + ":";
    after_key_ = true;
    return true;
  }
  bool StartObject() override { return Open('{'); }
  bool EndObject() override { return Close('}'); }
  bool StartArray() override { return Open('['); }
  bool EndArray() override { return Close(']'); }

 private:
  void Comma() {
    if (!after_key_ && !text.empty() && text.back() != '{' && text.back() != '[') text += ',';
    after_key_ = false;
  }
  bool Value(const std::string& written) {
    Comma();
    text += written;
    return true;
  }
  bool Open(char c) {
    Comma();
    text += c;
    return true;
  }
  bool Close(char c) {
    text += c;
    return true;
  }
  bool after_key_ = false;
};

TEST(ReadJsonEvents, HandsOnEveryValueInOrder) {
  const std::string doc = R"({"a":[1,-2,3.5,"x\u00e9",true,false,null,{}],"b":{"c":[[]]},"z":"\ud83d\ude00"})";
  Echo echo;
  ASSERT_TRUE(ReadJsonEvents("\xEF\xBB\xBF" + doc, echo));
  EXPECT_EQ(echo.text, Json::parse(doc).dump());
}

// The text is read in place: escapes unescaped inside the buffer, each string handed on
// where it lies, also after one that got shorter, and numbers by their length.
TEST(ReadJsonEvents, ReadsStringsInPlaceWhateverComesBefore) {
  std::string pad;
  for (int shift = 0; shift < 17; ++shift, pad += ' ') {
    const std::string doc = pad + R"({"k\"ey":"a\\b\nc","n":12,"long one, past sixteen bytes":"x\u00e9 and a longer tail",)"
                                  R"("e":[-7,"\"",""],"t":"tab\there","after":"the end"})";
    Echo echo;
    ASSERT_TRUE(ReadJsonEvents(doc, echo)) << doc;
    EXPECT_EQ(echo.text, nlohmann::ordered_json::parse(doc).dump()) << doc;  // the keys in the text's order
  }
}

TEST(ReadJsonEvents, RefusesWhatParseJsonRefuses) {
  const std::string deep = std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  const std::string at_limit = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  for (const std::string& text : {std::string("{\"a\":1}\0", 8), std::string("[\"\xC3\"]"), std::string("{\"\xFF\":1}"),
                                  deep, std::string("[1,]"), std::string("[1] 2"), std::string("[1e400]"),
                                  std::string("")}) {
    Echo echo;
    EXPECT_FALSE(ReadJsonEvents(text, echo)) << text;
    EXPECT_FALSE(ParseJson(text).ok()) << text;
  }
  Echo echo;
  EXPECT_TRUE(ReadJsonEvents(at_limit, echo));
}

TEST(ReadJsonEvents, AHandlerStopsTheRead) {
  struct StopAtKey final : Echo {
    bool Key(std::string_view key) override { return key != "stop" && Echo::Key(key); }
  } reader;
  EXPECT_FALSE(ReadJsonEvents(R"({"go":1,"stop":2})", reader));
}

}  // namespace
}  // namespace reins
