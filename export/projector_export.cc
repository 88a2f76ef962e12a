#include "export/projector_export.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <system_error>

#include "core/atomic_file.h"

namespace pstrain {

namespace {

// Appends through a buffer: one write per 1 MiB, not per row.
class BufferedFile {
 public:
  explicit BufferedFile(std::unique_ptr<AtomicFile> file) : file_(std::move(file)) {}
  Status Add(const std::string& text) {
    buffer_ += text;
    if (buffer_.size() < (1 << 20)) return OkStatus();
    return Flush();
  }
  Status Commit() {
    PS_RETURN_IF_ERROR(Flush());
    return file_->Commit();
  }

 private:
  Status Flush() {
    Status s = file_->Append(buffer_.data(), buffer_.size());
    buffer_.clear();
    return s;
  }
  std::unique_ptr<AtomicFile> file_;
  std::string buffer_;
};

std::string FolderOf(const std::string& table) {
  std::string folder = table;
  std::replace(folder.begin(), folder.end(), '/', '_');
  return folder;
}

}  // namespace

StatusOr<std::vector<int64_t>> WriteProjectorFiles(
    const std::string& dir, const SavedRows& rows,
    const std::vector<proto::EmbeddingTableConfig>& tables) {
  std::string config;
  std::vector<int64_t> written;
  for (const proto::EmbeddingTableConfig& table : tables) {
    const std::string folder = FolderOf(table.name());
    std::error_code error;
    std::filesystem::create_directories(dir + "/" + folder, error);
    if (error) return Unavailable("cannot make " + dir + "/" + folder + ": " + error.message());
    PS_ASSIGN_OR_RETURN(auto vectors_file, AtomicFile::Create(dir + "/" + folder + "/vectors.tsv"));
    PS_ASSIGN_OR_RETURN(auto keys_file, AtomicFile::Create(dir + "/" + folder + "/metadata.tsv"));
    BufferedFile vectors(std::move(vectors_file)), keys(std::move(keys_file));
    const auto sorted = rows.SortedRows(table.name());
    char number[32];
    for (const auto& [key, row] : sorted) {
      std::string line;
      for (size_t i = 0; i < row->size(); ++i) {
        // %.9g: every float reads back to the same bits.
        std::snprintf(number, sizeof(number), "%s%.9g", i ? "\t" : "", (*row)[i]);
        line += number;
      }
      PS_RETURN_IF_ERROR(vectors.Add(line + "\n"));
      PS_RETURN_IF_ERROR(keys.Add(std::to_string(key) + "\n"));
    }
    PS_RETURN_IF_ERROR(vectors.Commit());
    PS_RETURN_IF_ERROR(keys.Commit());
    written.push_back(static_cast<int64_t>(sorted.size()));
    config += "embeddings {\n  tensor_name: \"" + table.name() + "\"\n";
    config += "  tensor_shape: " + std::to_string(sorted.size()) + "\n";
    config += "  tensor_shape: " + std::to_string(table.dim()) + "\n";
    config += "  tensor_path: \"" + folder + "/vectors.tsv\"\n";
    config += "  metadata_path: \"" + folder + "/metadata.tsv\"\n}\n";
  }
  PS_RETURN_IF_ERROR(WriteFileAtomically(dir + "/projector_config.pbtxt", config));
  return written;
}

}  // namespace pstrain
