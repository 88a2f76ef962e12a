// make_seeds DIR: writes the seed corpus of every fuzz target into
// DIR/<target>/, each seed a valid input made by pstrain's own writers
// (fuzz/corpus/ holds the result; rerun it when a format changes).
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "chief/checkpoint.h"
#include "chief/summary/event_writer.h"
#include "core/test_util.h"
#include "data/example_dataset.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/ps_fuzz_model.h"

namespace pstrain {
namespace fuzz {
namespace {

std::string g_dir;

void Seed(const std::string& target, const std::string& name, const std::string& bytes) {
  std::filesystem::create_directories(g_dir + "/" + target);
  std::ofstream(g_dir + "/" + target + "/" + name, std::ios::binary) << bytes;
}

std::string Gzip(const std::string& bytes) {
  test_util::TempDir tmp;
  const std::string path = tmp.path() + "/x.gz";
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
  return test_util::ReadBytes(path);
}

std::string BigEndian32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

data::ImageDataset SmallImages() {
  data::ImageDataset ds;
  ds.count = 2;
  ds.rows = ds.cols = 4;
  ds.depth = 1;
  for (int i = 0; i < 32; ++i) ds.pixels.push_back(static_cast<uint8_t>(i * 7));
  ds.labels = {3, 9};
  return ds;
}

void TextSeeds() {
  Seed("cluster_spec", "spec.json",
       R"({"chief":["127.0.0.1:2222"],"ps":["127.0.0.1:2223","[::1]:2224"],)"
       R"("worker":["w0.ns.svc:2222","w1.ns.svc:2222"]})");
  Seed("cluster_spec", "tf_config.json",
       R"({"cluster":{"chief":["c:1"],"ps":["p:1"],"worker":["w:1"]},)"
       R"("task":{"type":"worker","index":0},"environment":"cloud"})");
  Seed("http_request", "get", "GET /status?x=1 HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n");
  Seed("http_request", "head", "HEAD /metrics HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
}

void DataSeeds() {
  std::string images = BigEndian32(0x00000803) + BigEndian32(2) + BigEndian32(4) + BigEndian32(4);
  for (int i = 0; i < 32; ++i) images.push_back(static_cast<char>(i));
  const std::string labels = BigEndian32(0x00000801) + BigEndian32(2) + std::string("\x03\x09", 2);
  Seed("idx", "images", images);
  Seed("idx", "labels", labels);
  Seed("idx", "images.gz", Gzip(images));
  std::string cifar;
  for (int r = 0; r < 2; ++r) {
    cifar.push_back(static_cast<char>(r + 4));
    for (int i = 0; i < 3072; ++i) cifar.push_back(static_cast<char>((i * 31 + r) & 0xff));
  }
  Seed("cifar", "two_records", cifar);

  test_util::TempDir tmp;
  for (auto compression : {TfRecordCompression::kNone, TfRecordCompression::kGzip}) {
    const std::string path = tmp.path() + "/examples";
    if (!data::WriteExampleFile(SmallImages(), path, compression).ok()) std::abort();
    Seed("tfrecord_example", compression == TfRecordCompression::kGzip ? "gzip" : "plain",
         test_util::ReadBytes(path));
  }
}

void ChiefSeeds() {
  test_util::TempDir tmp;
  std::string event_path;
  {
    auto writer = EventWriter::Create(tmp.path());
    if (!writer.ok()) std::abort();
    const float values[] = {0.5f, -1.0f, 2.0f, 0.0f};
    const uint8_t pixels[] = {0, 64, 128, 255};
    if (!(*writer)->AddScalar("loss", 1, 0.25f).ok() ||
        !(*writer)->AddHistogram("w", 1, values, 4).ok() ||
        !(*writer)->AddImage("input", 1, 2, 2, 1, pixels).ok()) {
      std::abort();
    }
    event_path = (*writer)->path();
  }  // the writer flushes and closes here
  Seed("event_file", "scalar_histogram_image", test_util::ReadBytes(event_path));
  const auto tensors = FuzzTensors();
  std::vector<std::pair<std::string, const Tensor*>> named;
  for (const auto& [name, t] : tensors) named.emplace_back(name, &t);
  auto prefix = WriteCheckpoint(tmp.path(), 5, named);
  if (!prefix.ok()) std::abort();
  std::string parts;
  AppendPart(test_util::ReadBytes(*prefix + ".index"), &parts);
  AppendPart(test_util::ReadBytes(*prefix + ".data"), &parts);
  Seed("checkpoint", "two_tensors", parts);
}

// One request of the ps target's input: the op, then for a stream the
// message count, where gRPC's bytes of each message split in two, and the
// messages, else the one message.
std::string Request(Op op, const std::vector<std::string>& messages) {
  std::string out(1, static_cast<char>(op));
  if (op == kInit || op == kPush) {
    out.push_back(static_cast<char>(messages.size()));
    out.push_back(static_cast<char>(37));
  }
  for (const std::string& m : messages) AppendPart(m, &out);
  return out;
}

void PsSeeds() {
  proto::PullRequest pull;
  pull.set_placement_fingerprint(kFingerprint);
  proto::PullRequest state = pull;
  state.set_include_state(true);
  proto::HeartbeatRequest heartbeat;
  heartbeat.set_worker(1);
  heartbeat.set_local_step(3);
  heartbeat.set_loss(0.5f);
  proto::WorkerDoneRequest done;
  done.set_worker(0);
  proto::SetLiveWorkersRequest live;
  live.add_workers(0);
  live.add_workers(1);
  proto::EndTrainingRequest end;
  end.set_reason("target reached");
  const std::string push = Request(kPush, StreamMessages(true));
  Seed("ps_requests", "init", Request(kInit, StreamMessages(false)));
  Seed("ps_requests", "push_then_pull", push + Request(kPull, {pull.SerializeAsString()}));
  Seed("ps_requests", "pull_state", Request(kPull, {state.SerializeAsString()}));
  Seed("ps_requests", "heartbeat_done_live",
       Request(kHeartbeat, {heartbeat.SerializeAsString()}) +
           Request(kWorkerDone, {done.SerializeAsString()}) +
           Request(kSetLiveWorkers, {live.SerializeAsString()}) + push);
  Seed("tensor_channel", "push_then_pull", ChannelPushThenPull());
  Seed("tensor_channel", "shared_memory", ChannelSharedMemory());
  Seed("tensor_channel", "arena", ChannelArena());
  Seed("tensor_channel", "mixed_dtypes", ChannelMixedDtypes());
  Seed("tensor_channel", "step_waits", ChannelStepWaits());
  Seed("tensor_channel", "sparse_push_then_pull", ChannelSparsePushThenPull());
  proto::PullRequest lookup = pull;
  *lookup.add_lookups() = FuzzKeys({1, 2, -7, 99});
  const std::string sparse = Request(kPush, SparsePushMessages());
  Seed("ps_requests", "sparse_push_twice_then_lookup",
       sparse + sparse + Request(kPull, {lookup.SerializeAsString()}));
  proto::ExportRowsRequest export_rows;
  export_rows.set_placement_fingerprint(kFingerprint);
  export_rows.set_table("emb");
  export_rows.set_start_deltas(true);
  proto::ExportRowsRequest delta = export_rows;
  delta.set_start_deltas(false);
  delta.set_delta(true);
  proto::RowBlock rows;
  rows.set_table("emb");
  rows.set_keys(FuzzKeys({5, 6}).keys());
  const std::vector<float> values(2 * kTableDim * 2, 0.5f);  // values and Momentum slot
  rows.set_values(std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4));
  proto::RowBlock erase;
  erase.set_table("emb");
  erase.set_keys(FuzzKeys({5}).keys());
  erase.set_erase(true);
  Seed("ps_requests", "export_import_delta",
       sparse + sparse + Request(kExportRows, {export_rows.SerializeAsString()}) +
           Request(kImportRows, {rows.SerializeAsString()}) +
           Request(kImportRows, {erase.SerializeAsString()}) +
           Request(kExportRows, {delta.SerializeAsString()}));
  Seed("ps_requests", "end_and_status",
       Request(kEndTraining, {end.SerializeAsString()}) + Request(kStatus, {""}));
}

}  // namespace
}  // namespace fuzz
}  // namespace pstrain

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 1;
  }
  pstrain::fuzz::g_dir = argv[1];
  pstrain::fuzz::TextSeeds();
  pstrain::fuzz::DataSeeds();
  pstrain::fuzz::ChiefSeeds();
  pstrain::fuzz::PsSeeds();
  return 0;
}
