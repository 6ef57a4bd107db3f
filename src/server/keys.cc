#include "server/keys.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

namespace reins {
namespace {

struct Tenant {
  std::vector<std::string> hashes;
  std::optional<int64_t> max_sessions;
};
using Tenants = std::map<std::string, Tenant>;

constexpr size_t kMaxKeysFileBytes = 1 << 20;

Status ReadHashes(const std::string& path, const std::string& tenant, const YAML::Node& list, Tenant* out) {
  if (!list.IsSequence()) return InvalidArgument(path + ": tenants." + tenant + " must list SHA-256 hashes");
  for (const auto& h : list) {
    std::string hash = h.IsScalar() ? h.Scalar() : "";
    if (!RE2::FullMatch(hash, "[0-9a-f]{64}")) {
      return InvalidArgument(path + ": tenants." + tenant + " holds '" + hash.substr(0, 12) +
                             "...', not a lowercase SHA-256 hex hash");
    }
    out->hashes.push_back(hash);
  }
  return {};
}

Result<Tenants> ReadFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return NotFound("keys file " + path + " does not exist");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return FailedPrecondition("keys file " + path + " may be written by other users (mode " +
                              std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
                              std::to_string(st.st_mode & 7) + "); run chmod 600 " + path);
  }
  if (static_cast<size_t>(st.st_size) > kMaxKeysFileBytes) return InvalidArgument(path + ": larger than 1 MiB");
  std::ifstream in(path);
  if (!in) return NotFound("keys file " + path + " cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  Tenants tenants;
  try {
    YAML::Node root = YAML::Load(text.str());
    YAML::Node map = root["tenants"];
    if (!root.IsMap() || !map || !map.IsMap()) return InvalidArgument(path + ": expected 'tenants:' mapping tenant names to lists of key hashes");
    for (const auto& entry : map) {
      const std::string tenant = entry.first.IsScalar() ? entry.first.Scalar() : "";
      Tenant& t = tenants[tenant];
      const YAML::Node& value = entry.second;
      if (!value.IsMap()) {
        REINS_RETURN_IF_ERROR(ReadHashes(path, tenant, value, &t));
        continue;
      }
      for (const auto& field : value) {
        const std::string key = field.first.IsScalar() ? field.first.Scalar() : "";
        if (key == "keys") {
          REINS_RETURN_IF_ERROR(ReadHashes(path, tenant, field.second, &t));
        } else if (key == "max_sessions") {
          int64_t n = -1;
          if (!field.second.IsScalar() || !RE2::FullMatch(field.second.Scalar(), "([0-9]{1,12})", &n)) {
            return InvalidArgument(path + ": tenants." + tenant + ".max_sessions must be a whole number");
          }
          t.max_sessions = n;
        } else {
          return InvalidArgument(path + ": tenants." + tenant + " has unknown key '" + key +
                                 "' (expected keys, max_sessions)");
        }
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
  for (const auto& [tenant, t] : *tenants) {
    for (const std::string& h : t.hashes) store.hashes_.emplace_back(h, tenant);
    if (t.max_sessions) store.max_sessions_[tenant] = *t.max_sessions;
  }
  return store;
}

std::optional<int64_t> KeyStore::MaxSessions(const std::string& tenant) const {
  auto it = max_sessions_.find(tenant);
  if (it == max_sessions_.end()) return std::nullopt;
  return it->second;
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
  all[tenant].hashes.push_back(Sha256Hex(key));

  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "tenants" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, t] : all) {
    out << YAML::Key << name << YAML::Value;
    if (t.max_sessions) {
      out << YAML::BeginMap << YAML::Key << "keys" << YAML::Value << YAML::BeginSeq;
      for (const std::string& h : t.hashes) out << h;
      out << YAML::EndSeq << YAML::Key << "max_sessions" << YAML::Value << *t.max_sessions << YAML::EndMap;
    } else {
      out << YAML::BeginSeq;
      for (const std::string& h : t.hashes) out << h;
      out << YAML::EndSeq;
    }
  }
  out << YAML::EndMap << YAML::EndMap;
  const std::string tmp = path + ".tmp";
  const std::string text =
      std::string("# reins API keys: tenant -> SHA-256 of each key (the keys are never stored)\n") + out.c_str() + "\n";
  // Created 0600 from the start: the file is never readable by others, not even briefly.
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot write " + tmp);
  const bool written = ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (::close(fd) != 0 || !written) return Unavailable("cannot write " + tmp);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Unavailable("cannot replace " + path);
  return key;
}

}  // namespace reins
