// The worker's flags parsed into the Trainer's options without starting a
// process: a bad value refused naming its flag, the gradient options
// checked against the model's variables.
#include "worker/worker_flags.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

#include <fstream>

#include <google/protobuf/text_format.h>

#include "core/test_util.h"
#include "nn/model.h"
#include "nn/model_flags.h"
#include "nn/model_spec.h"

DECLARE_string(weight_decay);
DECLARE_string(gradient_multipliers);
DECLARE_double(clip_gradients_by_norm);

namespace pstrain {
namespace {

std::unique_ptr<nn::Model> Mnist() {
  auto model = nn::CreateModel("mnist");
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : nullptr;
}

TEST(WorkerFlags, TheFlagsBecomeTheTrainersOptions) {
  gflags::FlagSaver saver;
  auto model = Mnist();
  ASSERT_NE(model, nullptr);
  const std::string var = model->variables()[0].name;
  FLAGS_weight_decay = var + "=0.004";
  FLAGS_clip_gradients_by_norm = 5;
  proto::SyncConfig sync;
  sync.set_enabled(true);
  auto options = TrainerOptionsFromFlags(3, *model, sync, /*overlap=*/true, /*loss_is_sum=*/false);
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->worker_index, 3);
  EXPECT_TRUE(options->sync);
  EXPECT_TRUE(options->overlap);
  EXPECT_FLOAT_EQ(options->gradients.weight_decay.at(var), 0.004f);
  EXPECT_FLOAT_EQ(options->gradients.clip_norm, 5.0f);
}

// A recipe's batch_size is --batch_size's default once the spec is loaded;
// a --batch_size given on the command line stays.
TEST(WorkerFlags, ARecipesBatchSizeIsTheDefaultAndAGivenFlagWins) {
  test_util::TempDir dir;
  auto spec = nn::LoadModelSpec("mnist");
  PS_ASSERT_OK(spec);
  spec->mutable_recipe()->set_batch_size(512);
  std::string text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(*spec, &text));
  const std::string path = dir.path() + "/batched.pbtxt";
  std::ofstream(path) << text;
  {
    gflags::FlagSaver saver;
    PS_ASSERT_OK(nn::LoadSpecFromFlags(path));
    EXPECT_EQ(FLAGS_batch_size, 512);
  }
  EXPECT_EQ(FLAGS_batch_size, 128);  // the saver put the flag's own default back
  {
    gflags::FlagSaver saver;
    gflags::SetCommandLineOption("batch_size", "64");  // as given on the command line
    PS_ASSERT_OK(nn::LoadSpecFromFlags(path));
    EXPECT_EQ(FLAGS_batch_size, 64);
  }
  spec->mutable_recipe()->set_batch_size(-1);
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(*spec, &text));
  std::ofstream(path) << text;
  gflags::FlagSaver saver;
  PS_EXPECT_CODE(nn::LoadSpecFromFlags(path), Code::kInvalidArgument);
}

TEST(WorkerFlags, AMalformedOrUnknownVariableIsRefusedNamingTheFlag) {
  auto model = Mnist();
  ASSERT_NE(model, nullptr);
  const proto::SyncConfig async;
  {
    gflags::FlagSaver saver;
    FLAGS_weight_decay = "no_equals_sign";
    auto options = TrainerOptionsFromFlags(0, *model, async, false, false);
    ASSERT_FALSE(options.ok());
    EXPECT_EQ(options.status().code(), Code::kInvalidArgument) << options.status().ToString();
    EXPECT_NE(options.status().message().find("weight_decay"), std::string::npos)
        << options.status().ToString();
  }
  {
    gflags::FlagSaver saver;
    FLAGS_gradient_multipliers = "not/a/variable=2";
    auto options = TrainerOptionsFromFlags(0, *model, async, false, false);
    PS_ASSERT_CODE(options, Code::kInvalidArgument);
    EXPECT_NE(options.status().message().find("not/a/variable"), std::string::npos)
        << options.status().ToString();
  }
}

}  // namespace
}  // namespace pstrain
