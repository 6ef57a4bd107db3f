// The server's small parts: API keys, the rate limiter, the metrics registry.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "server/keys.h"
#include "server/metrics.h"
#include "server/rate_limiter.h"

namespace reins {
namespace {

std::string TempPath(const char* name) { return "/tmp/reins-" + std::to_string(getpid()) + "-" + name; }

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string TenantOf(const KeyStore& store, std::string_view key) {
  const KeyStore::Grant* grant = store.Authenticate(key);
  return grant != nullptr ? grant->tenant : "";
}

TEST(Keys, AKeyMaySpeakOnlyForItsSpeakersAndCarriesItsRoles) {
  std::string path = TempPath("grants.yaml");
  unlink(path.c_str());
  auto open = AddKey(path, "riverside");
  auto jo = AddKey(path, "riverside", {"jo"}, {"pharmacist"});
  ASSERT_TRUE(open.ok() && jo.ok()) << jo.status().message();
  EXPECT_FALSE(AddKey(path, "riverside", {""}, {}).ok());
  EXPECT_FALSE(AddKey(path, "riverside", {}, {"no spaces"}).ok());
  auto store = KeyStore::Load(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  const KeyStore::Grant* any = store->Authenticate(*open);
  const KeyStore::Grant* pharmacist = store->Authenticate(*jo);
  ASSERT_TRUE(any != nullptr && pharmacist != nullptr);
  EXPECT_TRUE(any->SpeaksFor("whoever"));
  EXPECT_TRUE(any->roles.empty());
  EXPECT_TRUE(pharmacist->SpeaksFor("jo"));
  EXPECT_FALSE(pharmacist->SpeaksFor("james"));
  EXPECT_EQ(pharmacist->roles, std::vector<std::string>{"pharmacist"});
  EXPECT_EQ(pharmacist->tenant, "riverside");
  for (const char* body : {"tenants: { a: [ { hash: zz } ] }", "tenants: { a: [ { hash: %H, color: red } ] }",
                           "tenants: { a: [ { hash: %H, speakers: jo } ] }"}) {
    std::string text = body;
    if (size_t at = text.find("%H"); at != std::string::npos) text.replace(at, 2, Sha256Hex("k"));
    std::ofstream(path) << text;
    chmod(path.c_str(), 0600);
    EXPECT_FALSE(KeyStore::Load(path).ok()) << text;
  }
  unlink(path.c_str());
}

TEST(Keys, Sha256MatchesTheKnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Keys, AddedKeysAuthenticateTheirTenantAndOnlyHashesAreStored) {
  std::string path = TempPath("keys.yaml");
  unlink(path.c_str());
  auto alice = AddKey(path, "alice");
  auto alice2 = AddKey(path, "alice");
  auto bob = AddKey(path, "bob");
  ASSERT_TRUE(alice.ok() && alice2.ok() && bob.ok()) << alice.status().message();
  EXPECT_EQ(alice->rfind("rk_", 0), 0u);
  EXPECT_EQ(alice->size(), 3u + 43u);
  auto store = KeyStore::Load(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(store->size(), 3u);
  EXPECT_EQ(TenantOf(*store, *alice), "alice");
  EXPECT_EQ(TenantOf(*store, *alice2), "alice");
  EXPECT_EQ(TenantOf(*store, *bob), "bob");
  EXPECT_EQ(store->Authenticate("rk_not_a_key"), nullptr);
  EXPECT_EQ(store->Authenticate(""), nullptr);
  std::string text = Slurp(path);
  EXPECT_EQ(text.find(*alice), std::string::npos) << "a key was stored in clear";
  EXPECT_NE(text.find(Sha256Hex(*bob)), std::string::npos);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  unlink(path.c_str());
}

TEST(Keys, RefusesBadTenantsAndMalformedFiles) {
  std::string path = TempPath("bad.yaml");
  EXPECT_FALSE(AddKey(path, "no spaces").ok());
  EXPECT_FALSE(AddKey(path, "").ok());
  EXPECT_EQ(KeyStore::Load(TempPath("missing.yaml")).status().code(), StatusCode::kNotFound);
  for (const char* body : {"tenants: [1, 2]", "tenants: { a: nothash }", "tenants: { a: [zz] }", "{ unclosed"}) {
    std::ofstream(path) << body;
    auto loaded = KeyStore::Load(path);
    EXPECT_FALSE(loaded.ok()) << body;
    EXPECT_NE(loaded.status().message().find(path), std::string::npos) << loaded.status().message();
  }
  unlink(path.c_str());
}

TEST(Keys, RefusesAKeysFileOthersMayWrite) {
  std::string path = TempPath("loose.yaml");
  unlink(path.c_str());
  ASSERT_TRUE(AddKey(path, "alice").ok());
  ASSERT_TRUE(KeyStore::Load(path).ok());
  for (mode_t mode : {0620, 0602, 0666}) {
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
    auto loaded = KeyStore::Load(path);
    ASSERT_FALSE(loaded.ok()) << std::oct << mode;
    EXPECT_EQ(loaded.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(loaded.status().message().find("chmod 600"), std::string::npos) << loaded.status().message();
  }
  unlink(path.c_str());
}

TEST(Keys, ReadsATenantsSessionQuotaAndKeepsItWhenAKeyIsAdded) {
  std::string path = TempPath("quota.yaml");
  unlink(path.c_str());
  std::ofstream(path) << "tenants:\n  acme: { keys: [" << Sha256Hex("k1") << "], max_sessions: 3 }\n  bob: ["
                      << Sha256Hex("k2") << "]\n";
  chmod(path.c_str(), 0600);
  auto store = KeyStore::Load(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(TenantOf(*store, "k1"), "acme");
  EXPECT_EQ(store->MaxSessions("acme"), 3);
  EXPECT_EQ(store->MaxSessions("bob"), std::nullopt);
  ASSERT_TRUE(AddKey(path, "acme").ok());
  store = KeyStore::Load(path);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(store->MaxSessions("acme"), 3);
  EXPECT_EQ(store->size(), 3u);
  std::ofstream(path) << "tenants:\n  acme: { keys: [], max_sessions: lots }\n";
  EXPECT_FALSE(KeyStore::Load(path).ok());
  std::ofstream(path) << "tenants:\n  acme: { keys: [], quota: 3 }\n";
  EXPECT_FALSE(KeyStore::Load(path).ok());
  unlink(path.c_str());
}

TEST(RateLimiter, AllowsABurstThenAsksToWaitAndRefills) {
  RateLimiter limiter(2, 3);  // 2 per second, bursts of 3
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.Acquire("k", 1000), 0);
  int64_t wait = limiter.Acquire("k", 1000);
  EXPECT_GT(wait, 0);
  EXPECT_LE(wait, 500);
  EXPECT_EQ(limiter.Acquire("other", 1000), 0) << "keys are independent";
  EXPECT_EQ(limiter.Acquire("k", 1000 + wait), 0) << "refilled after the announced wait";
  EXPECT_GT(limiter.Acquire("k", 1000 + wait), 0);
}

TEST(Metrics, RendersCountersGaugesAndCumulativeHistograms) {
  Metrics m;
  m.Inc("reins_turns_total", {{"status", "completed"}});
  m.Inc("reins_turns_total", {{"status", "completed"}}, 2);
  m.Inc("reins_turns_total", {{"status", "failed"}});
  m.Set("reins_outbox_depth", {}, 4);
  m.Observe("reins_model_call_duration_seconds", {{"provider", "openai"}, {"purpose", "chat"}}, 0.2);
  m.Observe("reins_model_call_duration_seconds", {{"purpose", "chat"}, {"provider", "openai"}}, 3);
  m.Inc("reins_custom_total", {{"path", "a\"b\\c\nd"}});
  std::string text = m.Render();
  EXPECT_NE(text.find("# TYPE reins_turns_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("reins_turns_total{status=\"completed\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("reins_turns_total{status=\"failed\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("reins_outbox_depth 4\n"), std::string::npos);
  EXPECT_NE(text.find("reins_leases_blocked_total 0\n"), std::string::npos);
  const std::string h = "reins_model_call_duration_seconds";
  EXPECT_NE(text.find(h + "_bucket{provider=\"openai\",purpose=\"chat\",le=\"0.1\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find(h + "_bucket{provider=\"openai\",purpose=\"chat\",le=\"0.25\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find(h + "_bucket{provider=\"openai\",purpose=\"chat\",le=\"5\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find(h + "_bucket{provider=\"openai\",purpose=\"chat\",le=\"+Inf\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find(h + "_sum{provider=\"openai\",purpose=\"chat\"} 3.2\n"), std::string::npos);
  EXPECT_NE(text.find(h + "_count{provider=\"openai\",purpose=\"chat\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("reins_custom_total{path=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos) << text;
}

TEST(Metrics, ManyLabelsAreSortedToo) {
  Metrics m;
  m.Inc("reins_custom_total", {{"e", "5"}, {"d", "4"}, {"c", "3"}, {"b", "2"}, {"a", "1"}});
  m.Inc("reins_custom_total", {{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}});
  EXPECT_NE(m.Render().find("reins_custom_total{a=\"1\",b=\"2\",c=\"3\",d=\"4\",e=\"5\"} 2\n"), std::string::npos)
      << m.Render();
}

// The same exposition from scrape to scrape: families by name, each one's series by
// their labels, whatever order they were first seen in.
TEST(Metrics, RendersInTheOrderOfNamesAndLabels) {
  Metrics m;
  m.Inc("reins_turns_total", {{"status", "failed"}});
  m.Inc("reins_turns_total", {{"status", "completed"}});
  m.Inc("reins_audit_repairs_total", {{"repair", "none"}});
  const std::string text = m.Render();
  const size_t audit = text.find("reins_audit_repairs_total{");
  const size_t completed = text.find("reins_turns_total{status=\"completed\"}");
  const size_t failed = text.find("reins_turns_total{status=\"failed\"}");
  ASSERT_NE(failed, std::string::npos) << text;
  EXPECT_LT(audit, completed) << text;
  EXPECT_LT(completed, failed) << text;
  EXPECT_EQ(text, m.Render());
}

TEST(Metrics, ConcurrentIncrementsAddUp) {
  Metrics m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) m.Inc("reins_http_requests_total", {{"route", "/x"}, {"status", "200"}});
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_NE(m.Render().find("reins_http_requests_total{route=\"/x\",status=\"200\"} 4000\n"), std::string::npos);
}

}  // namespace
}  // namespace reins
