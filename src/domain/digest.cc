#include "domain/digest.h"

#include <openssl/evp.h>

namespace reins {

std::string Sha256Hex(std::string_view data) {
  // Fetched once: EVP_sha256() makes every digest look its implementation up again, which
  // cost more than hashing a write's key (docs/PERFORMANCE.md, "what the write-ahead
  // record costs").
  static EVP_MD* const kSha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, kSha256 != nullptr ? kSha256 : EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

}  // namespace reins
