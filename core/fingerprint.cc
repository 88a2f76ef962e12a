#include "core/fingerprint.h"

#include <charconv>
#include <utility>

namespace pstrain {
namespace {

// FarmHash's constants (primes between 2^63 and 2^64).
constexpr uint64_t kK0 = 0xc3a5c85c97cb3127ull;
constexpr uint64_t kK1 = 0xb492b66fbe98f273ull;
constexpr uint64_t kK2 = 0x9ae16a3b2f90404full;

// FarmHash reads words little-endian whatever the machine; assembled byte by
// byte, which compilers turn into one load.
uint64_t Load64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

uint64_t Load32(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

// Right rotation; every caller's shift is in [1, 63].
uint64_t Rotr(uint64_t v, int shift) { return (v >> shift) | (v << (64 - shift)); }

uint64_t ShiftMix(uint64_t v) { return v ^ (v >> 47); }

// Murmur-style mix of two words into one.
uint64_t Mix(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = ShiftMix((u ^ v) * mul);
  uint64_t b = ShiftMix((v ^ a) * mul);
  return b * mul;
}

uint64_t HashUpTo16(const char* s, size_t len) {
  if (len >= 8) {
    const uint64_t mul = kK2 + len * 2;
    const uint64_t a = Load64(s) + kK2;
    const uint64_t b = Load64(s + len - 8);
    return Mix(Rotr(b, 37) * mul + a, (Rotr(a, 25) + b) * mul, mul);
  }
  if (len >= 4) {
    const uint64_t mul = kK2 + len * 2;
    return Mix(len + (Load32(s) << 3), Load32(s + len - 4), mul);
  }
  if (len > 0) {
    // 32-bit sums, as FarmHash computes them, widened for the multiplies.
    const uint32_t first = static_cast<uint8_t>(s[0]);
    const uint32_t middle = static_cast<uint8_t>(s[len >> 1]);
    const uint32_t last = static_cast<uint8_t>(s[len - 1]);
    const uint32_t y = first + (middle << 8);
    const uint32_t z = static_cast<uint32_t>(len) + (last << 2);
    return ShiftMix(y * kK2 ^ z * kK0) * kK2;
  }
  return kK2;
}

uint64_t Hash17To32(const char* s, size_t len) {
  const uint64_t mul = kK2 + len * 2;
  const uint64_t a = Load64(s) * kK1;
  const uint64_t b = Load64(s + 8);
  const uint64_t c = Load64(s + len - 8) * mul;
  const uint64_t d = Load64(s + len - 16) * kK2;
  return Mix(Rotr(a + b, 43) + Rotr(c, 30) + d, a + Rotr(b + kK2, 18) + c, mul);
}

uint64_t Hash33To64(const char* s, size_t len) {
  const uint64_t mul = kK2 + len * 2;
  const uint64_t a = Load64(s) * kK2;
  const uint64_t b = Load64(s + 8);
  const uint64_t c = Load64(s + len - 8) * mul;
  const uint64_t d = Load64(s + len - 16) * kK2;
  const uint64_t y = Rotr(a + b, 43) + Rotr(c, 30) + d;
  const uint64_t z = Mix(y, a + Rotr(b + kK2, 18) + c, mul);
  const uint64_t e = Load64(s + 16) * mul;
  const uint64_t f = Load64(s + 24);
  const uint64_t g = (y + Load64(s + len - 32)) * mul;
  const uint64_t h = (z + Load64(s + len - 24)) * mul;
  return Mix(Rotr(e + f, 43) + Rotr(g, 30) + h, e + Rotr(f + a, 18) + g, mul);
}

// Two words from 32 bytes at s and two seeds (FarmHash's
// WeakHashLen32WithSeeds).
std::pair<uint64_t, uint64_t> Weak32(const char* s, uint64_t a, uint64_t b) {
  const uint64_t w = Load64(s);
  const uint64_t x = Load64(s + 8);
  const uint64_t y = Load64(s + 16);
  const uint64_t z = Load64(s + 24);
  a += w;
  b = Rotr(b + a + z, 21);
  const uint64_t c = a;
  a += x + y;
  b += Rotr(a, 44);
  return {a + z, b + c};
}

// More than 64 bytes: 64-byte blocks through a 56-byte state, the last
// block being the input's final 64 bytes (overlapping the one before).
uint64_t HashOver64(const char* s, size_t len) {
  constexpr uint64_t kSeed = 81;
  uint64_t x = kSeed * kK2 + Load64(s);
  uint64_t y = kSeed * kK1 + 113;
  uint64_t z = ShiftMix(y * kK2 + 113) * kK2;
  std::pair<uint64_t, uint64_t> v{0, 0};
  std::pair<uint64_t, uint64_t> w{0, 0};
  const char* const end = s + ((len - 1) / 64) * 64;
  do {
    x = Rotr(x + y + v.first + Load64(s + 8), 37) * kK1;
    y = Rotr(y + v.second + Load64(s + 48), 42) * kK1;
    x ^= w.second;
    y += v.first + Load64(s + 40);
    z = Rotr(z + w.first, 33) * kK1;
    v = Weak32(s, v.second * kK1, x + w.first);
    w = Weak32(s + 32, z + w.second, y + Load64(s + 16));
    std::swap(z, x);
    s += 64;
  } while (s != end);
  const uint64_t mul = kK1 + ((z & 0xff) << 1);
  s = end + ((len - 1) & 63) - 63;
  w.first += (len - 1) & 63;
  v.first += w.first;
  w.first += v.first;
  x = Rotr(x + y + v.first + Load64(s + 8), 37) * mul;
  y = Rotr(y + v.second + Load64(s + 48), 42) * mul;
  x ^= w.second * 9;
  y += v.first * 9 + Load64(s + 40);
  z = Rotr(z + w.first, 33) * mul;
  v = Weak32(s, v.second * mul, x + w.first);
  w = Weak32(s + 32, z + w.second, y + Load64(s + 16));
  std::swap(z, x);
  return Mix(Mix(v.first, w.first, mul) + ShiftMix(y) * kK0 + z, Mix(v.second, w.second, mul) + x,
             mul);
}

}  // namespace

uint64_t Fingerprint64(std::string_view s) {
  const char* p = s.data();
  const size_t len = s.size();
  if (len <= 16) return HashUpTo16(p, len);
  if (len <= 32) return Hash17To32(p, len);
  if (len <= 64) return Hash33To64(p, len);
  return HashOver64(p, len);
}

uint64_t FingerprintCat64(uint64_t fp1, uint64_t fp2) {
  constexpr uint64_t kMul = 0xc6a4a7935bd1e995ull;  // MurmurHash2's multiplier
  uint64_t result = (fp1 ^ kMul) ^ (ShiftMix(fp2 * kMul) * kMul);
  result = ShiftMix(result * kMul) * kMul;
  return ShiftMix(result);
}

int64_t StringToHashBucketFast(std::string_view s, int64_t num_buckets) {
  return static_cast<int64_t>(Fingerprint64(s) % static_cast<uint64_t>(num_buckets));
}

int64_t Int64ToHashBucketFast(int64_t value, int64_t num_buckets) {
  char text[20];  // "-9223372036854775808"
  const char* end = std::to_chars(text, text + sizeof(text), value).ptr;
  return StringToHashBucketFast(std::string_view(text, end - text), num_buckets);
}

int64_t CrossBucket(const uint64_t* feature_hashes, size_t n, int64_t num_buckets,
                    uint64_t hash_key) {
  uint64_t h = hash_key;
  for (size_t i = 0; i < n; ++i) h = FingerprintCat64(h, feature_hashes[i]);
  return static_cast<int64_t>(h % static_cast<uint64_t>(num_buckets));
}

}  // namespace pstrain
