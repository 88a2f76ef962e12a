#include "worker/tower_choice.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

const nn::GpuProbe kNoGpu{{}, "cudaGetDeviceCount: cudaErrorInsufficientDriver"};
const nn::GpuProbe kTwoGpus{{"NVIDIA H100 (sm_90, 79 GiB)", "NVIDIA H100 (sm_90, 79 GiB)"}, ""};

TEST(TowerChoice, TowersOnTheCpuByDefault) {
  auto c = ChooseTowers(3, 0, kTwoGpus);
  PS_ASSERT_OK(c);
  EXPECT_EQ(c->towers, 3);
  EXPECT_EQ(c->devices, nn::TowerDevices::kCpu);
}

TEST(TowerChoice, ATowerOnEachGpuAskedFor) {
  auto c = ChooseTowers(1, 2, kTwoGpus);
  PS_ASSERT_OK(c);
  EXPECT_EQ(c->towers, 2);
  EXPECT_EQ(c->devices, nn::TowerDevices::kGpus);
  EXPECT_NE(c->why.find("H100"), std::string::npos);
}

TEST(TowerChoice, NoGpuMeansAsManyTowersOnTheCpuAndSaysWhy) {
  auto c = ChooseTowers(1, 2, kNoGpu);
  PS_ASSERT_OK(c);
  EXPECT_EQ(c->towers, 2);
  EXPECT_EQ(c->devices, nn::TowerDevices::kCpu);
  EXPECT_NE(c->why.find("cudaErrorInsufficientDriver"), std::string::npos) << c->why;
}

TEST(TowerChoice, RefusesWhatCannotBeMeant) {
  EXPECT_EQ(ChooseTowers(2, 2, kTwoGpus).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ChooseTowers(1, 3, kTwoGpus).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ChooseTowers(0, 0, kTwoGpus).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ChooseTowers(1, -1, kTwoGpus).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ChooseTowers(65, 0, kTwoGpus).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
