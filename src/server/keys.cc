#include "server/keys.h"

#include <algorithm>
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
  std::vector<KeyStore::Grant> keys;
  std::optional<int64_t> max_sessions;
};
using Tenants = std::map<std::string, Tenant>;

constexpr size_t kMaxKeysFileBytes = 1 << 20;

// A list of names (speakers, roles) under one key.
Status ReadNames(const std::string& where, const YAML::Node& list, std::vector<std::string>* out) {
  if (!list.IsSequence()) return InvalidArgument(where + " must be a list of names");
  for (const auto& n : list) {
    const std::string name = n.IsScalar() ? n.Scalar() : "";
    if (name.empty() || name.size() > 128) return InvalidArgument(where + " holds a name that is not 1 to 128 characters");
    out->push_back(name);
  }
  return {};
}

// A key: its hash alone, or {hash, speakers?, roles?}.
Status ReadKey(const std::string& where, const YAML::Node& node, KeyStore::Grant* out) {
  if (node.IsMap()) {
    for (const auto& field : node) {
      const std::string key = field.first.IsScalar() ? field.first.Scalar() : "";
      if (key == "hash" && field.second.IsScalar()) {
        out->hash = field.second.Scalar();
      } else if (key == "speakers") {
        REINS_RETURN_IF_ERROR(ReadNames(where + ".speakers", field.second, &out->speakers));
      } else if (key == "roles") {
        REINS_RETURN_IF_ERROR(ReadNames(where + ".roles", field.second, &out->roles));
      } else {
        return InvalidArgument(where + " has unknown key '" + key + "' (expected hash, speakers, roles)");
      }
    }
  } else if (node.IsScalar()) {
    out->hash = node.Scalar();
  }
  if (!RE2::FullMatch(out->hash, "[0-9a-f]{64}")) {
    return InvalidArgument(where + " holds '" + out->hash.substr(0, 12) + "...', not a lowercase SHA-256 hex hash");
  }
  return {};
}

Status ReadHashes(const std::string& path, const std::string& tenant, const YAML::Node& list, Tenant* out) {
  if (!list.IsSequence()) return InvalidArgument(path + ": tenants." + tenant + " must list SHA-256 hashes");
  for (const auto& h : list) {
    KeyStore::Grant grant;
    grant.tenant = tenant;
    REINS_RETURN_IF_ERROR(ReadKey(path + ": tenants." + tenant, h, &grant));
    out->keys.push_back(std::move(grant));
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

Result<KeyStore> KeyStore::Load(const std::string& path) {
  Result<Tenants> tenants = ReadFile(path);
  if (!tenants.ok()) return tenants.status();
  KeyStore store;
  for (const auto& [tenant, t] : *tenants) {
    store.grants_.insert(store.grants_.end(), t.keys.begin(), t.keys.end());
    if (t.max_sessions) store.max_sessions_[tenant] = *t.max_sessions;
  }
  return store;
}

bool KeyStore::Grant::SpeaksFor(const std::string& speaker) const {
  return speakers.empty() || std::find(speakers.begin(), speakers.end(), speaker) != speakers.end();
}

std::optional<int64_t> KeyStore::MaxSessions(const std::string& tenant) const {
  auto it = max_sessions_.find(tenant);
  if (it == max_sessions_.end()) return std::nullopt;
  return it->second;
}

const KeyStore::Grant* KeyStore::Authenticate(std::string_view key) const {
  const std::string hash = Sha256Hex(key);
  const Grant* found = nullptr;
  for (const Grant& g : grants_) {  // every entry compared: timing says nothing
    if (CRYPTO_memcmp(g.hash.data(), hash.data(), hash.size()) == 0) found = &g;
  }
  return found;
}

Result<std::string> AddKey(const std::string& path, const std::string& tenant, const std::vector<std::string>& speakers,
                           const std::vector<std::string>& roles) {
  if (!RE2::FullMatch(tenant, "[A-Za-z0-9_-]{1,64}")) {
    return InvalidArgument("tenant '" + tenant + "': use 1 to 64 letters, digits, '_' or '-'");
  }
  Result<Tenants> tenants = ReadFile(path);
  if (!tenants.ok() && tenants.status().code() != StatusCode::kNotFound) return tenants.status();
  Tenants all = tenants.ok() ? *tenants : Tenants{};
  unsigned char random[32];
  if (RAND_bytes(random, sizeof random) != 1) return Internal("no randomness available for a new key");
  std::string key = "rk_" + Base64Url(random, sizeof random);
  for (const std::string& name : speakers) {
    if (name.empty() || name.size() > 128) return InvalidArgument("speaker '" + name + "': use 1 to 128 characters");
  }
  for (const std::string& name : roles) {
    if (!RE2::FullMatch(name, "[A-Za-z0-9_.-]{1,64}")) {
      return InvalidArgument("role '" + name + "': use 1 to 64 letters, digits, '_', '.' or '-'");
    }
  }
  all[tenant].keys.push_back(KeyStore::Grant{Sha256Hex(key), tenant, speakers, roles});

  YAML::Emitter out;
  auto keys = [&out](const Tenant& t) {
    out << YAML::BeginSeq;
    for (const KeyStore::Grant& g : t.keys) {
      if (g.speakers.empty() && g.roles.empty()) {
        out << g.hash;
        continue;
      }
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "hash" << YAML::Value << g.hash;
      if (!g.speakers.empty()) out << YAML::Key << "speakers" << YAML::Value << YAML::Flow << g.speakers;
      if (!g.roles.empty()) out << YAML::Key << "roles" << YAML::Value << YAML::Flow << g.roles;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  };
  out << YAML::BeginMap << YAML::Key << "tenants" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, t] : all) {
    out << YAML::Key << name << YAML::Value;
    if (t.max_sessions) {
      out << YAML::BeginMap << YAML::Key << "keys" << YAML::Value;
      keys(t);
      out << YAML::Key << "max_sessions" << YAML::Value << *t.max_sessions << YAML::EndMap;
    } else {
      keys(t);
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
