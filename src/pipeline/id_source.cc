#include "pipeline/id_source.h"

#include <cstring>

#include <openssl/rand.h>

namespace reins {

IdSource::IdSource(uint64_t seed, const Clock& clock)
    : seed_(seed), clock_(clock), rng_(seed != 0 ? seed : std::random_device{}()) {}

std::string IdSource::New(const char* prefix) {
  static constexpr char kHex[] = "0123456789abcdef";
  unsigned char random[12];
  {
    std::lock_guard lock(mu_);
    if (seed_ != 0 || !TakeRandom(random)) {
      for (unsigned char& byte : random) byte = static_cast<unsigned char>(rng_());
    }
  }
  std::string id = prefix;
  auto now = static_cast<uint64_t>(clock_.NowMs());
  for (int shift = 40; shift >= 0; shift -= 4) id += kHex[(now >> shift) & 15];
  for (unsigned char byte : random) {
    id += kHex[byte >> 4];
    id += kHex[byte & 15];
  }
  return id;
}

bool IdSource::TakeRandom(unsigned char (&out)[12]) {
  if (used_ + sizeof out > sizeof pool_) {
    if (RAND_bytes(pool_, sizeof pool_) != 1) return false;
    used_ = 0;
  }
  std::memcpy(out, pool_ + used_, sizeof out);
  used_ += sizeof out;
  return true;
}

}  // namespace reins
