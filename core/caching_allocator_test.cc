// CachingAllocator's policy, over host memory standing in for a device's.
#include "core/caching_allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "core/tensor.h"
#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

// Host memory with a budget, counting what is held.
class BudgetMemory : public RawDeviceMemory {
 public:
  BudgetMemory(size_t budget, size_t* held) : budget_(budget), held_(held) {}
  void* Malloc(size_t bytes) override {
    if (*held_ + bytes > budget_) return nullptr;
    *held_ += bytes;
    void* p = std::malloc(bytes);
    sizes_[p] = bytes;
    return p;
  }
  void Free(void* p) override {
    *held_ -= sizes_.at(p);
    sizes_.erase(p);
    std::free(p);
  }
  void Copy(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }

 private:
  const size_t budget_;
  size_t* const held_;
  std::map<void*, size_t> sizes_;
};

TEST(CachingAllocator, RoundsSmallSizesTo512BytesAndLargeToWholeMiB) {
  EXPECT_EQ(CachingAllocator::RoundedSize(0), 512u);
  EXPECT_EQ(CachingAllocator::RoundedSize(1), 512u);
  EXPECT_EQ(CachingAllocator::RoundedSize(513), 1024u);
  EXPECT_EQ(CachingAllocator::RoundedSize(1 << 20), size_t{1} << 20);
  EXPECT_EQ(CachingAllocator::RoundedSize((1 << 20) + 1), size_t{2} << 20);
}

TEST(CachingAllocator, ASecondStepAllocatesNothingFromTheDevice) {
  size_t held = 0;
  CachingAllocator a(std::make_unique<BudgetMemory>(size_t{64} << 20, &held));
  const size_t sizes[] = {100, 4000, 3 << 20, 100, 70000};
  for (int step = 0; step < 3; ++step) {
    std::vector<float*> blocks;
    for (size_t s : sizes) {
      blocks.push_back(a.Allocate(s));
      ASSERT_NE(blocks.back(), nullptr);
    }
    std::set<float*> distinct(blocks.begin(), blocks.end());
    EXPECT_EQ(distinct.size(), blocks.size()) << "one block lent twice";
    EXPECT_GT(a.stats().lent_bytes, 0u);
    for (float* p : blocks) a.Release(p);
    EXPECT_EQ(a.stats().device_allocations, 5) << "step " << step;
  }
  EXPECT_EQ(a.stats().cache_hits, 10);
  EXPECT_EQ(a.stats().lent_bytes, 0u);
  EXPECT_EQ(a.stats().device_bytes, held);
}

TEST(CachingAllocator, GivesTheCacheBackWhenTheDeviceIsFull) {
  size_t held = 0;
  CachingAllocator a(std::make_unique<BudgetMemory>(size_t{4} << 20, &held));
  float* big = a.Allocate(size_t{3} << 20);
  ASSERT_NE(big, nullptr);
  a.Release(big);                              // cached: 3 MiB of the 4 held
  float* other = a.Allocate(size_t{2} << 20);  // fits only once the cache is emptied
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(held, size_t{2} << 20);
  EXPECT_EQ(a.Allocate(size_t{3} << 20), nullptr) << "over the budget with nothing cached";
  a.Release(other);
}

TEST(CachingAllocator, TheCacheIsGivenBackAtTheEnd) {
  size_t held = 0;
  {
    CachingAllocator a(std::make_unique<BudgetMemory>(size_t{1} << 20, &held));
    a.Release(a.Allocate(1000));
    EXPECT_GT(held, 0u);
  }
  EXPECT_EQ(held, 0u);
}

TEST(CachingAllocator, DeviceTensorsBorrowAndReturnItsBlocks) {
  size_t held = 0;
  CachingAllocator a(std::make_unique<BudgetMemory>(size_t{1} << 20, &held));
  {
    auto t = Tensor::OnDevice({4, 8}, &a);
    PS_ASSERT_OK(t);
    EXPECT_EQ(t->device(), &a);
    Tensor copy = *t;  // another block of the same device
    EXPECT_EQ(copy.device(), &a);
    EXPECT_EQ(a.stats().lent_bytes, 1024u);
  }
  EXPECT_EQ(a.stats().lent_bytes, 0u);
  auto too_big = Tensor::OnDevice({1 << 20}, &a);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), Code::kResourceExhausted);
  EXPECT_NE(too_big.status().message().find("[1048576]"), std::string::npos);
}

}  // namespace
}  // namespace pstrain
