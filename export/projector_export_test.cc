#include "export/projector_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "chief/checkpoint.h"
#include "core/atomic_file.h"
#include "core/testing/status_assertions.h"
#include "ps/testing/row_blocks.h"

namespace pstrain {
namespace {

std::string Read(const std::filesystem::path& path) {
  auto text = ReadFileToString(path.string());
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "";
}

// Two tables of a checkpoint (rows with Adagrad slots beside them, saved out
// of key order): each table's vectors by ascending key, every float exact,
// its keys line for line, and a projector config naming both.
TEST(ProjectorExport, WritesEachTablesRowsKeysAndTheConfig) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("projector_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto writer = CheckpointWriter::Create(dir.string(), 5);
  PS_ASSERT_OK(writer);
  PS_ASSERT_OK((*writer)->BeginTable("users/embedding_weights", 2, {"accumulator"}));
  ASSERT_TRUE((*writer)
                  ->AddRows(MakeRowBlock("users/embedding_weights", {42, -3},
                                         {0.1f, 2, 9, 9, -1.5f, 1e-8f, 9, 9}))
                  .ok());
  PS_ASSERT_OK((*writer)->AddRows(MakeRowBlock("users/embedding_weights", {7}, {3, 4, 9, 9})));
  PS_ASSERT_OK((*writer)->BeginTable("items/embedding_weights", 3, {"accumulator"}));
  ASSERT_TRUE(
      (*writer)->AddRows(MakeRowBlock("items/embedding_weights", {1}, {1, 2, 3, 9, 9, 9})).ok());
  auto prefix = (*writer)->Finish();
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
  auto ckpt = ReadCheckpoint(*prefix);
  PS_ASSERT_OK(ckpt);
  std::vector<proto::EmbeddingTableConfig> tables(2);
  tables[0].set_name("users/embedding_weights");
  tables[0].set_dim(2);
  tables[1].set_name("items/embedding_weights");
  tables[1].set_dim(3);
  auto rows = SavedRows::Read(*ckpt, dir.string(), tables);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();

  const std::filesystem::path out = dir / "projector";
  auto written = WriteProjectorFiles(out.string(), *rows, tables);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(*written, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(Read(out / "users_embedding_weights" / "metadata.tsv"), "-3\n7\n42\n");
  EXPECT_EQ(Read(out / "users_embedding_weights" / "vectors.tsv"),
            "-1.5\t9.99999994e-09\n3\t4\n0.100000001\t2\n");
  // Each value reads back to the float saved.
  EXPECT_EQ(std::stof("9.99999994e-09"), 1e-8f);
  EXPECT_EQ(std::stof("0.100000001"), 0.1f);
  EXPECT_EQ(Read(out / "items_embedding_weights" / "vectors.tsv"), "1\t2\t3\n");
  EXPECT_EQ(Read(out / "projector_config.pbtxt"),
            "embeddings {\n"
            "  tensor_name: \"users/embedding_weights\"\n"
            "  tensor_shape: 3\n"
            "  tensor_shape: 2\n"
            "  tensor_path: \"users_embedding_weights/vectors.tsv\"\n"
            "  metadata_path: \"users_embedding_weights/metadata.tsv\"\n"
            "}\n"
            "embeddings {\n"
            "  tensor_name: \"items/embedding_weights\"\n"
            "  tensor_shape: 1\n"
            "  tensor_shape: 3\n"
            "  tensor_path: \"items_embedding_weights/vectors.tsv\"\n"
            "  metadata_path: \"items_embedding_weights/metadata.tsv\"\n"
            "}\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pstrain
