#include "server/keys.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

namespace reins {
namespace {

using Tenants = std::map<std::string, std::vector<std::string>>;

Result<Tenants> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("keys file " + path + " does not exist");
  std::stringstream text;
  text << in.rdbuf();
  Tenants tenants;
  try {
    YAML::Node root = YAML::Load(text.str());
    YAML::Node map = root["tenants"];
    if (!root.IsMap() || !map || !map.IsMap()) return InvalidArgument(path + ": expected 'tenants:' mapping tenant names to lists of key hashes");
    for (const auto& entry : map) {
      std::string tenant = entry.first.as<std::string>();
      if (!entry.second.IsSequence()) return InvalidArgument(path + ": tenants." + tenant + " must be a list of SHA-256 hashes");
      for (const auto& h : entry.second) {
        std::string hash = h.as<std::string>();
        if (!RE2::FullMatch(hash, "[0-9a-f]{64}")) {
          return InvalidArgument(path + ": tenants." + tenant + " holds '" + hash.substr(0, 12) + "...', not a lowercase SHA-256 hex hash");
        }
        tenants[tenant].push_back(hash);
      }
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ": " + e.what());
  }
  return tenants;
}

std::string Base64Url(const unsigned char* data, size_t n) {
  static const char* kChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; ++i) {
    acc = (acc << 8) | data[i];
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kChars[(acc >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kChars[(acc << (6 - bits)) & 63]);
  return out;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

Result<KeyStore> KeyStore::Load(const std::string& path) {
  Result<Tenants> tenants = ReadFile(path);
  if (!tenants.ok()) return tenants.status();
  KeyStore store;
  for (const auto& [tenant, hashes] : *tenants) {
    for (const std::string& h : hashes) store.hashes_.emplace_back(h, tenant);
  }
  return store;
}

std::string KeyStore::Authenticate(std::string_view key) const {
  const std::string hash = Sha256Hex(key);
  std::string found;
  for (const auto& [h, tenant] : hashes_) {  // every entry compared: timing says nothing
    if (CRYPTO_memcmp(h.data(), hash.data(), hash.size()) == 0) found = tenant;
  }
  return found;
}

Result<std::string> AddKey(const std::string& path, const std::string& tenant) {
  if (!RE2::FullMatch(tenant, "[A-Za-z0-9_-]{1,64}")) {
    return InvalidArgument("tenant '" + tenant + "': use 1 to 64 letters, digits, '_' or '-'");
  }
  Result<Tenants> tenants = ReadFile(path);
  if (!tenants.ok() && tenants.status().code() != StatusCode::kNotFound) return tenants.status();
  Tenants all = tenants.ok() ? *tenants : Tenants{};
  unsigned char random[32];
  if (RAND_bytes(random, sizeof random) != 1) return Internal("no randomness available for a new key");
  std::string key = "rk_" + Base64Url(random, sizeof random);
  all[tenant].push_back(Sha256Hex(key));

  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "tenants" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, hashes] : all) {
    out << YAML::Key << name << YAML::Value << YAML::BeginSeq;
    for (const std::string& h : hashes) out << h;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap << YAML::EndMap;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) return Unavailable("cannot write " + tmp);
    f << "# reins API keys: tenant -> SHA-256 of each key (the keys are never stored)\n" << out.c_str() << "\n";
    if (!f) return Unavailable("cannot write " + tmp);
  }
  chmod(tmp.c_str(), 0600);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Unavailable("cannot replace " + path);
  return key;
}

}  // namespace reins
