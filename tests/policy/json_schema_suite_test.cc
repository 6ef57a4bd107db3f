// Runs the official JSON-Schema-Test-Suite (draft 7, required tests only) against
// SchemaValidator. Every failing case must be listed in
// json_schema_suite_known_failures.txt, and every listed case must still fail, so the
// list (and docs/json-schema-support.md) stays honest.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "schema/schema_validator.h"

namespace reins {
namespace {

namespace fs = std::filesystem;

fs::path SuiteDir() {
  if (const char* dir = std::getenv("REINS_JSON_SCHEMA_SUITE_DIR")) return dir;
  return "/usr/share/json-schema-test-suite/tests/draft7";
}

fs::path KnownFailuresFile() {
  return fs::path(__FILE__).parent_path() / "json_schema_suite_known_failures.txt";
}

std::string Trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\r");
  size_t end = s.find_last_not_of(" \t\r");
  return begin == std::string::npos ? "" : s.substr(begin, end - begin + 1);
}

// "file.json | group | case" lines; '#' starts a comment line.
std::set<std::string> ReadKnownFailures() {
  std::set<std::string> known;
  std::ifstream in(KnownFailuresFile());
  for (std::string line; std::getline(in, line);) {
    line = Trim(line);
    if (!line.empty() && line[0] != '#') known.insert(line);
  }
  return known;
}

std::string Resolve(const std::string& base, const std::string& ref) {
  if (ref.find("://") != std::string::npos || base.find("://") == std::string::npos) return ref;
  return base.substr(0, base.rfind('/') + 1) + ref;
}

std::string Document(const std::string& uri) { return uri.substr(0, uri.find('#')); }

void CollectRefs(const Json& node, std::string base, std::set<std::string>& ids, std::set<std::string>& refs) {
  if (node.is_object()) {
    if (auto id = node.find("$id"); id != node.end() && id->is_string()) {
      base = Document(Resolve(base, id->get<std::string>()));
      ids.insert(base);
    }
    if (auto ref = node.find("$ref"); ref != node.end() && ref->is_string()) {
      std::string target = Document(Resolve(base, ref->get<std::string>()));
      if (!target.empty()) refs.insert(target);
    }
  }
  if (node.is_structured()) {
    for (const Json& child : node) CollectRefs(child, base, ids, refs);
  }
}

// A schema needs the network when it $refs a document it does not embed via $id.
std::string RemoteRef(const Json& schema) {
  std::set<std::string> ids;
  std::set<std::string> refs;
  CollectRefs(schema, "", ids, refs);
  for (const std::string& ref : refs) {
    if (!ids.contains(ref)) return ref;
  }
  return "";
}

TEST(JsonSchemaSuiteTest, Draft7) {
  if (!fs::is_directory(SuiteDir())) {
    GTEST_SKIP() << SuiteDir() << " is missing: run scripts/install-deps (package json-schema-test-suite)";
  }
  std::set<fs::path> files;
  for (const auto& entry : fs::directory_iterator(SuiteDir())) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.insert(entry.path());
  }
  ASSERT_FALSE(files.empty());

  int total = 0, passed = 0, skipped = 0;
  std::set<std::string> failures;
  for (const fs::path& path : files) {
    const std::string file = path.filename().string();
    std::ifstream in(path);
    Json groups = Json::parse(in);
    for (const Json& group : groups) {
      const std::string group_name = group.at("description").get<std::string>();
      const Json& cases = group.at("tests");
      std::string remote = file == "refRemote.json" ? "refRemote.json" : RemoteRef(group.at("schema"));
      if (!remote.empty()) {
        skipped += static_cast<int>(cases.size());
        std::cout << "skip " << file << " | " << group_name << ": remote $ref (" << remote << ")\n";
        continue;
      }
      auto validator = SchemaValidator::Compile(group.at("schema"));
      for (const Json& c : cases) {
        ++total;
        const std::string id = file + " | " + group_name + " | " + c.at("description").get<std::string>();
        if (!validator.ok()) {
          failures.insert(id + "  [compile: " + validator.status().message() + "]");
          continue;
        }
        bool valid = validator->IsValid(c.at("data"));
        if (valid == c.at("valid").get<bool>()) {
          ++passed;
        } else {
          failures.insert(id + "  [expected " + (valid ? "invalid" : "valid") + "]");
        }
      }
    }
  }
  std::cout << "JSON-Schema-Test-Suite draft7: " << passed << "/" << total << " cases pass (" << skipped
            << " skipped: remote $ref)" << std::endl;

  std::set<std::string> known = ReadKnownFailures();
  std::set<std::string> failing_ids;
  for (const std::string& failure : failures) {
    std::string id = failure.substr(0, failure.find("  ["));
    failing_ids.insert(id);
    if (!known.contains(id)) ADD_FAILURE() << "unexpected failure: " << failure;
  }
  for (const std::string& id : known) {
    if (!failing_ids.contains(id)) {
      ADD_FAILURE() << "listed in " << KnownFailuresFile().filename() << " but passes now (remove it): " << id;
    }
  }
}

}  // namespace
}  // namespace reins
