#include "core/fingerprint.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>

namespace pstrain {
namespace {

// Every expected value below comes from TensorFlow 2.21 itself, as printed by
// tests/tensorflow/fingerprint_golden.py (its docstring says how it gets
// each); run it again to regenerate them.

// Bytes (37 * i + 11) % 256: every byte value, high bit set or not.
std::string Pattern(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>((37 * i + 11) % 256));
  return s;
}

// crossed_column(..., hash_bucket_size=1000) of features' CrossFeatureHash
// values, in the op's order.
int64_t Cross(std::initializer_list<uint64_t> hashes) {
  return CrossBucket(hashes.begin(), hashes.size(), 1000);
}

TEST(Fingerprint64, MatchesTensorFlowOnText) {
  struct Case {
    const char* text;
    uint64_t fingerprint;
  };
  const Case kTextFingerprints[] = {
      {"", 0x9ae16a3b2f90404full},
      {"a", 0xb3454265b6df75e3ull},
      {"ab", 0xaa8d6e5242ada51eull},
      {"abc", 0x24a5b3a074e7f369ull},
      {"abcd", 0x1a5502de4a1f8101ull},
      {"abcde", 0xc22f4663e54e04d4ull},
      {"abcdefg", 0x3c40c92b1ccb7355ull},
      {"abcdefgh", 0xfee9d22990c82909ull},
      {"Bachelors", 0xe0de33fa8a027020ull},
      {"HS-grad", 0x0f8ccc1abb53e9d5ull},
      {"Masters", 0xbb1f992dd5b36f52ull},
      {"Doctorate", 0x8a68452764756709ull},
      {"Some-college", 0xf588cb244b51144bull},
      {"Exec-managerial", 0x6408f3d945a21cf8ull},
      {"Prof-specialty", 0x36445b724efe30bbull},
      {"Craft-repair", 0x12a6ed4395fb37b2ull},
      {"Adm-clerical", 0xc7aa57b168f62380ull},
      {"Never-married", 0xd64920bbcd5b844cull},
      {"Married-civ-spouse", 0x840ac9641f874981ull},
      {"United-States", 0x8cca6fcb92c894bbull},
      {" Bachelors", 0x2578345cfd2e8b09ull},
      {"Husband", 0x414163c7c9941096ull},
      {"Not-in-family", 0xc6a3163527915de9ull},
      {"Self-emp-not-inc", 0x1002b178b0f22285ull},
      {"Married-spouse-absent", 0x25818e953c8ab2a6ull},
      {"Ma\303\261ana, \346\235\261\344\272\254", 0x3f75cf04d954bdbaull},
      {"a parameter server holds the variables", 0x480baea9bd083061ull},
      {"the workers compute gradients on their batches of examples and push them",
       0xa25ac222726b91efull},
  };
  for (const Case& c : kTextFingerprints) EXPECT_EQ(Fingerprint64(c.text), c.fingerprint) << c.text;
}

// Lengths in every branch of FarmHash: 0, 1-3, 4-7, 8-16, 17-32, 33-64, and
// over 64 (one block and more, a whole number of blocks and not).
TEST(Fingerprint64, MatchesTensorFlowOnEveryLength) {
  struct Case {
    size_t length;
    uint64_t fingerprint;
  };
  const Case kPatternFingerprints[] = {
      {0, 0x9ae16a3b2f90404full},    {1, 0x4271b80e2915c76aull},   {2, 0xae88b935147a3473ull},
      {3, 0x373a2b2a12e0c581ull},    {4, 0xcc1e778137ae6d69ull},   {5, 0x23b0f79675bd1c16ull},
      {7, 0x960838fbc6d9c975ull},    {8, 0x7d507025ed4eecfdull},   {9, 0xdaebbbb958304ddeull},
      {12, 0x12a0d52d6f922439ull},   {15, 0x834f200cfa7ed95full},  {16, 0xd836480326a974d6ull},
      {17, 0x5cded6cb65c9dac6ull},   {20, 0x9c9eaf52a36e5a4cull},  {24, 0xa71d9fc06b55102bull},
      {31, 0x52a467e87c92d522ull},   {32, 0xa03300e1b2be6da7ull},  {33, 0x839154ca67815696ull},
      {40, 0xf74f22348cade37full},   {48, 0x698f96261bc531d3ull},  {63, 0x7cf64a4bd1b2b67eull},
      {64, 0x000f03eac52d3535ull},   {65, 0xfb360c5023f60db6ull},  {80, 0x263255b5a3113215ull},
      {100, 0x094bb5559bbb1375ull},  {127, 0xd70e348fcbf64d04ull}, {128, 0x33ef435f17af1739ull},
      {129, 0xc30a81b637d2e4ddull},  {191, 0x2b2780b79f9bd979ull}, {192, 0xe277d6ad7892dd23ull},
      {193, 0x63bcaa15a48f8fe3ull},  {255, 0x8e85c9af06357507ull}, {256, 0x10102b86eca72cdbull},
      {1000, 0xc6dbd344bb8f49f4ull},
  };
  for (const Case& c : kPatternFingerprints) {
    EXPECT_EQ(Fingerprint64(Pattern(c.length)), c.fingerprint) << c.length;
  }
}

TEST(Fingerprint64, ReadsOnlyTheViewedBytes) {
  const std::string s = Pattern(300);
  for (size_t n : {0, 3, 9, 17, 40, 65, 200}) {
    EXPECT_EQ(Fingerprint64(std::string_view(s).substr(7, n)), Fingerprint64(s.substr(7, n))) << n;
  }
}

TEST(FingerprintCat64, MatchesTensorFlow) {
  struct Case {
    uint64_t fp1;
    uint64_t fp2;
    uint64_t cat;
  };
  const Case kFingerprintCat64[] = {
      {0x0000000000000001ull, 0x0000000000000000ull, 0xb09b25bfc7c41d07ull},
      {0x0000000000000001ull, 0x0000000000000001ull, 0xbec29be79966d870ull},
      {0x000000decafcaffeull, 0x0000000000000000ull, 0x1b107540f214cd46ull},
      {0x000000decafcaffeull, 0x0000000000000007ull, 0xe2f108cba9f76daeull},
      {0x00000b3a73ce2ff2ull, 0x7fffffffffffffffull, 0x1b0df39422ceb1edull},
      {0xffffffffffffffffull, 0xffffffffffffffffull, 0x1341c9e861aaff0cull},
      {0x000000000000ffffull, 0x8000000000000000ull, 0x6b3411ff1cea3ab2ull},
  };
  for (const Case& c : kFingerprintCat64) {
    EXPECT_EQ(FingerprintCat64(c.fp1, c.fp2), c.cat) << c.fp1 << " " << c.fp2;
  }
}

TEST(HashBucketFast, MatchesHashBucketColumnOfStrings) {
  struct Case {
    const char* text;
    int64_t bucket;
  };
  const Case kStringBuckets[] = {
      {"Bachelors", 456},
      {"HS-grad", 621},
      {"Masters", 866},
      {"Doctorate", 169},
      {"Some-college", 531},
      {"Exec-managerial", 800},
      {"Prof-specialty", 979},
      {"Craft-repair", 466},
      {"Adm-clerical", 96},
      {"Sales", 631},
      {"Ma\303\261ana, \346\235\261\344\272\254", 2},
      {"a parameter server holds the variables", 153},
      {"the workers compute gradients on their batches of examples and push them", 615},
  };
  for (const Case& c : kStringBuckets) {
    EXPECT_EQ(StringToHashBucketFast(c.text, 1000), c.bucket) << c.text;
  }
}

// An integer is hashed as its decimal text.
TEST(HashBucketFast, MatchesHashBucketColumnOfInt64) {
  struct Case {
    int64_t value;
    int64_t bucket;
  };
  const Case kInt64Buckets[] = {
      {int64_t{0}, 735},
      {int64_t{1}, 849},
      {int64_t{7}, 88},
      {int64_t{-3}, 699},
      {int64_t{39}, 363},
      {int64_t{1099511627776}, 378},
      {int64_t{9223372036854775807}, 319},
      {INT64_MIN, 112},
  };
  for (const Case& c : kInt64Buckets) {
    EXPECT_EQ(Int64ToHashBucketFast(c.value, 1000), c.bucket) << c.value;
    EXPECT_EQ(Int64ToHashBucketFast(c.value, 1000),
              StringToHashBucketFast(std::to_string(c.value), 1000));
  }
}

TEST(CrossBucket, MatchesCrossHashedOfStrings) {
  struct Case {
    const char* a;
    const char* b;
    int64_t bucket;
  };
  const Case kStringCrosses[] = {
      {"Bachelors", "Exec-managerial", 469},    {"Bachelors", "Prof-specialty", 700},
      {"Bachelors", "Craft-repair", 441},       {"HS-grad", "Exec-managerial", 164},
      {"HS-grad", "Prof-specialty", 949},       {"HS-grad", "Craft-repair", 406},
      {"Masters", "Exec-managerial", 966},      {"Masters", "Prof-specialty", 985},
      {"Masters", "Craft-repair", 417},         {"Doctorate", "Exec-managerial", 195},
      {"Doctorate", "Prof-specialty", 568},     {"Doctorate", "Craft-repair", 292},
      {"Some-college", "Exec-managerial", 240}, {"Some-college", "Prof-specialty", 328},
      {"Some-college", "Craft-repair", 797},
  };
  for (const Case& c : kStringCrosses) {
    EXPECT_EQ(Cross({CrossFeatureHash(c.a), CrossFeatureHash(c.b)}), c.bucket) << c.a << " " << c.b;
  }
}

// An int64 feature is folded in as it is, not fingerprinted.
TEST(CrossBucket, MatchesCrossHashedOfStringsAndInt64) {
  struct Case {
    const char* a;
    int64_t b;
    int64_t bucket;
  };
  const Case kStringInt64Crosses[] = {
      {"Bachelors", int64_t{0}, 357},
      {"Bachelors", int64_t{1}, 316},
      {"Bachelors", int64_t{7}, 726},
      {"Bachelors", int64_t{-3}, 918},
      {"Bachelors", int64_t{39}, 610},
      {"Bachelors", int64_t{1099511627776}, 317},
      {"Bachelors", int64_t{9223372036854775807}, 57},
      {"Bachelors", INT64_MIN, 968},
      {"HS-grad", int64_t{0}, 653},
      {"HS-grad", int64_t{1}, 153},
      {"HS-grad", int64_t{7}, 229},
      {"HS-grad", int64_t{-3}, 742},
      {"HS-grad", int64_t{39}, 999},
      {"HS-grad", int64_t{1099511627776}, 251},
      {"HS-grad", int64_t{9223372036854775807}, 601},
      {"HS-grad", INT64_MIN, 99},
      {"Masters", int64_t{0}, 44},
      {"Masters", int64_t{1}, 637},
      {"Masters", int64_t{7}, 826},
      {"Masters", int64_t{-3}, 327},
      {"Masters", int64_t{39}, 797},
      {"Masters", int64_t{1099511627776}, 210},
      {"Masters", int64_t{9223372036854775807}, 721},
      {"Masters", INT64_MIN, 937},
  };
  for (const Case& c : kStringInt64Crosses) {
    EXPECT_EQ(Cross({CrossFeatureHash(c.a), CrossFeatureHash(c.b)}), c.bucket) << c.a << " " << c.b;
  }
}

TEST(CrossBucket, MatchesCrossHashedOfInt64) {
  struct Case {
    int64_t a;
    int64_t b;
    int64_t bucket;
  };
  const Case kInt64Crosses[] = {
      {int64_t{0}, int64_t{0}, 304},
      {int64_t{0}, int64_t{1}, 963},
      {int64_t{0}, int64_t{7}, 291},
      {int64_t{0}, int64_t{-3}, 646},
      {int64_t{0}, int64_t{39}, 195},
      {int64_t{0}, int64_t{1099511627776}, 364},
      {int64_t{0}, int64_t{9223372036854775807}, 294},
      {int64_t{0}, INT64_MIN, 170},
      {int64_t{1}, int64_t{0}, 673},
      {int64_t{1}, int64_t{1}, 641},
      {int64_t{1}, int64_t{7}, 889},
      {int64_t{1}, int64_t{-3}, 404},
      {int64_t{1}, int64_t{39}, 276},
      {int64_t{1}, int64_t{1099511627776}, 405},
      {int64_t{1}, int64_t{9223372036854775807}, 16},
      {int64_t{1}, INT64_MIN, 530},
      {int64_t{7}, int64_t{0}, 115},
      {int64_t{7}, int64_t{1}, 645},
      {int64_t{7}, int64_t{7}, 634},
      {int64_t{7}, int64_t{-3}, 682},
      {int64_t{7}, int64_t{39}, 424},
      {int64_t{7}, int64_t{1099511627776}, 995},
      {int64_t{7}, int64_t{9223372036854775807}, 375},
      {int64_t{7}, INT64_MIN, 818},
      {int64_t{-3}, int64_t{0}, 361},
      {int64_t{-3}, int64_t{1}, 459},
      {int64_t{-3}, int64_t{7}, 959},
      {int64_t{-3}, int64_t{-3}, 369},
      {int64_t{-3}, int64_t{39}, 256},
      {int64_t{-3}, int64_t{1099511627776}, 590},
      {int64_t{-3}, int64_t{9223372036854775807}, 594},
      {int64_t{-3}, INT64_MIN, 996},
  };
  for (const Case& c : kInt64Crosses) {
    EXPECT_EQ(Cross({CrossFeatureHash(c.a), CrossFeatureHash(c.b)}), c.bucket) << c.a << " " << c.b;
  }
}

TEST(CrossBucket, MatchesCrossHashedOfThree) {
  struct Case {
    const char* a;
    const char* b;
    int64_t c;
    int64_t bucket;
  };
  const Case kTripleCrosses[] = {
      {"Bachelors", "Exec-managerial", int64_t{0}, 396},
      {"HS-grad", "Prof-specialty", int64_t{1}, 568},
      {"Masters", "Craft-repair", int64_t{7}, 616},
      {"Doctorate", "Adm-clerical", int64_t{-3}, 136},
      {"Some-college", "Sales", int64_t{39}, 310},
  };
  for (const Case& t : kTripleCrosses) {
    EXPECT_EQ(Cross({CrossFeatureHash(t.a), CrossFeatureHash(t.b), CrossFeatureHash(t.c)}),
              t.bucket)
        << t.a << " " << t.b << " " << t.c;
  }
}

// tf.feature_column's crossed_column over census-like rows whose raw features
// are dense Tensors: a categorical or bucketized key's ids are a
// SparseTensor, which the op folds in before every dense input, whatever the
// keys' order; a raw feature fed as a SparseTensor keeps its place.
TEST(CrossBucket, MatchesCrossedColumn) {
  struct Case {
    const char* education;
    const char* occupation;
    int64_t age_bucket;    // bucketized_column(age, 10 boundaries)
    int64_t relationship;  // vocabulary list; -1 outside it, and crossed so
    int64_t education_x_occupation;
    int64_t age_x_education;
    int64_t education_x_age;
    int64_t relationship_x_occupation;
    int64_t education_x_occupation_x_age;
    int64_t sparse_education_x_age;
  };
  const Case kCensusCrosses[] = {
      {"Bachelors", "Exec-managerial", 4, 1, 469, 857, 857, 781, 443, 108},
      {"HS-grad", "Craft-repair", 0, 0, 406, 438, 438, 388, 740, 653},
      {"Masters", "Prof-specialty", 2, 2, 985, 887, 887, 873, 277, 553},
      {"Some-college", "Adm-clerical", 7, -1, 42, 556, 556, 73, 718, 56},
      {"Doctorate", "Prof-specialty", 10, 3, 568, 498, 498, 995, 0, 503},
  };
  for (const Case& c : kCensusCrosses) {
    const uint64_t education = CrossFeatureHash(c.education);
    const uint64_t occupation = CrossFeatureHash(c.occupation);
    const uint64_t age = CrossFeatureHash(c.age_bucket);
    const uint64_t relationship = CrossFeatureHash(c.relationship);
    EXPECT_EQ(Cross({education, occupation}), c.education_x_occupation) << c.education;
    EXPECT_EQ(Cross({age, education}), c.age_x_education) << c.education;
    EXPECT_EQ(Cross({age, education}), c.education_x_age) << c.education;
    EXPECT_EQ(Cross({relationship, occupation}), c.relationship_x_occupation) << c.education;
    EXPECT_EQ(Cross({age, education, occupation}), c.education_x_occupation_x_age) << c.education;
    EXPECT_EQ(Cross({education, age}), c.sparse_education_x_age) << c.education;
  }
}

TEST(CrossBucket, StartsFromTheHashKey) {
  const uint64_t features[] = {CrossFeatureHash("Bachelors"), CrossFeatureHash(int64_t{4})};
  const uint64_t folded =
      FingerprintCat64(FingerprintCat64(kCrossHashKey, features[0]), features[1]);
  EXPECT_EQ(CrossBucket(features, 2, 1000), static_cast<int64_t>(folded % 1000));
  EXPECT_NE(CrossBucket(features, 2, INT64_MAX, 1), CrossBucket(features, 2, INT64_MAX));
}

}  // namespace
}  // namespace pstrain
