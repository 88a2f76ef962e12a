// TensorFlow's string hashes, bit for bit, so that feature columns give the
// ids TensorFlow gives: FarmHash's Fingerprint64 (the hash of
// tf.strings.to_hash_bucket_fast and categorical_column_with_hash_bucket) and
// the hashed cross of crossed_column (the SparseCross op with
// hashed_output). Stable across machines and builds. Not for security.
#ifndef PSTRAIN_CORE_FINGERPRINT_H_
#define PSTRAIN_CORE_FINGERPRINT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pstrain {

// FarmHash's Fingerprint64 (farmhashna's Hash64), which TensorFlow's
// Fingerprint64 is: the same bytes give the same value on every platform.
uint64_t Fingerprint64(std::string_view s);

// TensorFlow's FingerprintCat64: a fingerprint of two fingerprints, in
// order (not commutative). SparseCross folds a cross's features with it.
uint64_t FingerprintCat64(uint64_t fp1, uint64_t fp2);

// tf.strings.to_hash_bucket_fast (StringToHashBucketFast):
// Fingerprint64(s) % num_buckets, num_buckets > 0. What
// categorical_column_with_hash_bucket gives a string.
int64_t StringToHashBucketFast(std::string_view s, int64_t num_buckets);

// categorical_column_with_hash_bucket of an integer column: TF hashes the
// value's decimal text (tf.strings.as_string: "-42"), not its bytes.
int64_t Int64ToHashBucketFast(int64_t value, int64_t num_buckets);

// The hash_key crossed_column passes to SparseCross when it is given none
// (sparse_ops._DEFAULT_HASH_KEY): the value a cross's fold starts from.
inline constexpr uint64_t kCrossHashKey = 0xDECAFCAFFEull;

// What SparseCross (hashed_output) folds in for one feature of a cross: a
// string's Fingerprint64, but an integer (a categorical or bucketized
// column's id, or a raw integer feature) as its own 64 bits, unhashed.
inline uint64_t CrossFeatureHash(std::string_view s) { return Fingerprint64(s); }
inline uint64_t CrossFeatureHash(int64_t id) { return static_cast<uint64_t>(id); }

// The bucket SparseCross gives one combination of a cross's features:
// FingerprintCat64 folded over the features' CrossFeatureHash values from
// hash_key, then % num_buckets (> 0). The fold follows the op's order, which
// is not always crossed_column's: the op takes every SparseTensor input
// before every dense one, and a categorical or bucketized key is sparse
// while a raw feature fed as a dense Tensor is dense. So
// crossed_column(["education", age_buckets]) over dense features folds the
// age bucket first.
int64_t CrossBucket(const uint64_t* feature_hashes, size_t n, int64_t num_buckets,
                    uint64_t hash_key = kCrossHashKey);

}  // namespace pstrain

#endif  // PSTRAIN_CORE_FINGERPRINT_H_
