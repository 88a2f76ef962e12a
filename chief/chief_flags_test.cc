// The chief's flags parsed into the Supervisor's options without starting
// a process: each bad value refused naming its flag, the recipe's defaults
// taken where a flag is not given.
#include "chief/chief_flags.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

#include "nn/model_spec.h"

DECLARE_string(checkpoint_format);
DECLARE_int32(delta_checkpoints);
DECLARE_double(eval_secs);
DECLARE_double(target_accuracy);
DECLARE_string(target_metric);

namespace pstrain {
namespace {

proto::ModelSpec Spec(const std::string& name) {
  auto spec = nn::LoadModelSpec(name);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return spec.ok() ? *spec : proto::ModelSpec();
}

void ExpectRefused(const proto::ModelSpec& spec, const std::string& names) {
  auto options = SupervisorOptionsFromFlags(spec, 2);
  ASSERT_FALSE(options.ok()) << "accepted; expected a refusal naming " << names;
  EXPECT_EQ(options.status().code(), Code::kInvalidArgument) << options.status().ToString();
  EXPECT_NE(options.status().message().find(names), std::string::npos)
      << options.status().ToString();
}

TEST(ChiefFlags, DefaultsMakeOptionsOfTheRecipe) {
  gflags::FlagSaver saver;
  const proto::ModelSpec spec = Spec("mnist");
  auto options = SupervisorOptionsFromFlags(spec, 3);
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->num_workers, 3);
  EXPECT_EQ(options->init.num_workers(), 3);
  EXPECT_EQ(options->checkpoint_format, CheckpointFormat::kTensorFlow);  // the default
  EXPECT_FLOAT_EQ(options->init.ema_decay(), spec.recipe().ema_decay());
  EXPECT_EQ(options->eval_use_moving_averages, spec.recipe().eval_use_moving_averages());
  EXPECT_FALSE(options->init.optimizer().name().empty());
}

TEST(ChiefFlags, EachBadValueIsRefusedNamingItsFlag) {
  const proto::ModelSpec spec = Spec("mnist");
  {
    gflags::FlagSaver saver;
    FLAGS_checkpoint_format = "hdf5";
    ExpectRefused(spec, "--checkpoint_format must be pstrain or tensorflow, not hdf5");
  }
  {
    gflags::FlagSaver saver;
    FLAGS_delta_checkpoints = -1;
    ExpectRefused(spec, "--delta_checkpoints");
  }
  {
    gflags::FlagSaver saver;
    FLAGS_target_accuracy = 0.9;
    FLAGS_eval_secs = 0;
    ExpectRefused(spec, "--eval_secs > 0 when it is set");
  }
  {
    gflags::FlagSaver saver;
    FLAGS_target_metric = "auc";
    ExpectRefused(spec, "auc");
  }
  {
    gflags::FlagSaver saver;
    gflags::SetCommandLineOption("ema_decay", "1.5");
    ExpectRefused(spec, "--ema_decay must be in [0, 1)");
  }
}

TEST(ChiefFlags, WarmStartFlagsNeedWarmStartFrom) {
  gflags::FlagSaver saver;
  const proto::ModelSpec spec = Spec("mnist");
  auto options = SupervisorOptionsFromFlags(spec, 1);
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  auto model = nn::CreateModel(spec);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto none = WarmStartFromFlags(**model, options->init);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
  gflags::SetCommandLineOption("warm_start_vars", "dense.*");
  auto refused = WarmStartFromFlags(**model, options->init);
  PS_ASSERT_CODE(refused, Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("need --warm_start_from"), std::string::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace pstrain
