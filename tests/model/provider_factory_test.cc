// The environment fills what a provider's config leaves out, as the providers' SDKs do;
// what the config says wins.
#include "model/provider_factory.h"

#include <cstdlib>

#include <gtest/gtest.h>

namespace reins {
namespace {

TEST(ProviderEnvironmentTest, FillsTheKeyAndBaseUrlTheConfigLeavesOut) {
  ::setenv("OPENAI_API_KEY", "sk-from-env", 1);
  ::setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1", 1);
  ::setenv("ANTHROPIC_API_KEY", "sk-ant-from-env", 1);
  ModelConfig openai;
  openai.provider = "openai";
  ApplyProviderEnvironment(openai);
  EXPECT_EQ(openai.api_key, "sk-from-env");
  EXPECT_EQ(openai.base_url, "http://127.0.0.1:1/v1");

  ModelConfig configured;
  configured.provider = "openai";
  configured.api_key = "sk-config";
  configured.base_url = "http://10.0.0.1/v1";
  ApplyProviderEnvironment(configured);
  EXPECT_EQ(configured.api_key, "sk-config");
  EXPECT_EQ(configured.base_url, "http://10.0.0.1/v1");

  ModelConfig anthropic;
  anthropic.provider = "anthropic";
  ApplyProviderEnvironment(anthropic);
  EXPECT_EQ(anthropic.api_key, "sk-ant-from-env");
  EXPECT_EQ(anthropic.base_url, "");

  ModelConfig scripted;
  scripted.provider = "scripted";
  ApplyProviderEnvironment(scripted);
  EXPECT_EQ(scripted.api_key, "");
  for (const char* v : {"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"}) ::unsetenv(v);
}

}  // namespace
}  // namespace reins
