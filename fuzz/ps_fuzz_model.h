// The model a ps holds when the ps fuzz target's requests reach it, shared
// with the seed maker so that its seeds are valid requests to start from.
#ifndef PSTRAIN_FUZZ_PS_FUZZ_MODEL_H_
#define PSTRAIN_FUZZ_PS_FUZZ_MODEL_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "proto/ps.pb.h"
#include "ps/ps_core.h"
#include "ps/tcp/tensor_frames.h"
#include "ps/tensor_chunks.h"
#include "ps/variable_store.h"

namespace pstrain {
namespace fuzz {

constexpr uint64_t kFingerprint = 7;

constexpr int kTableDim = 3;

// The fuzz model's embedding table: any int64 key, admitted at its second
// push, dropped 4 steps after its last.
inline proto::EmbeddingTableConfig FuzzTable() {
  proto::EmbeddingTableConfig t;
  t.set_name("emb");
  t.set_dim(kTableDim);
  t.set_num_shards(1);
  t.set_min_count(2);
  t.set_ttl_steps(4);
  return t;
}

// Keys of table emb, as a request carries them.
inline proto::TableKeys FuzzKeys(const std::vector<int64_t>& keys) {
  proto::TableKeys k;
  k.set_table("emb");
  k.set_keys(std::string(reinterpret_cast<const char*>(keys.data()), keys.size() * 8));
  return k;
}

// A weight and a bias, each in one chunk.
inline std::vector<std::pair<std::string, Tensor>> FuzzTensors() {
  Tensor w({4, 3}), b({3});
  for (int64_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(i);
  b.Fill(0.5f);
  return {{"w", w}, {"b", b}};
}

// The messages of an Init stream (Momentum with moving averages, sync
// replicas off, two workers) or of a Push stream of gradients for it.
inline std::vector<std::string> StreamMessages(bool push) {
  std::vector<std::string> out;
  if (push) {
    proto::PushRequest r;
    r.mutable_header()->set_placement_fingerprint(kFingerprint);
    r.mutable_header()->set_worker(1);
    r.mutable_header()->set_increment_global_step(true);
    r.mutable_header()->set_num_tensors(2);
    out.push_back(r.SerializeAsString());
  } else {
    proto::InitRequest r;
    proto::InitHeader* h = r.mutable_header();
    h->set_placement_fingerprint(kFingerprint);
    h->mutable_optimizer()->set_name("Momentum");
    h->mutable_optimizer()->set_learning_rate(0.1f);
    h->mutable_optimizer()->set_momentum(0.9f);
    h->add_variables("w");
    h->add_variables("b");
    h->set_holds_global_step(true);
    h->set_ema_decay(0.5f);
    h->set_num_workers(2);
    *h->add_tables() = FuzzTable();
    out.push_back(r.SerializeAsString());
  }
  for (const auto& [name, tensor] : FuzzTensors()) {
    proto::TensorChunk chunk;
    ForEachChunk(name, tensor, 1 << 20, &chunk, [&] {
      if (push) {
        proto::PushRequest r;
        *r.mutable_chunk() = chunk;
        out.push_back(r.SerializeAsString());
      } else {
        proto::InitRequest r;
        *r.mutable_chunk() = chunk;
        out.push_back(r.SerializeAsString());
      }
      return true;
    });
  }
  return out;
}

// The messages of a Push stream of the dense gradients and rows of table
// emb for keys 1, 2, 2 (summed) and -7.
inline std::vector<std::string> SparsePushMessages() {
  std::vector<std::string> out = StreamMessages(/*push=*/true);
  proto::PushRequest header;
  header.ParseFromString(out[0]);
  header.mutable_header()->set_num_tensors(3);
  *header.mutable_header()->add_sparse() = FuzzKeys({1, 2, 2, -7});
  out[0] = header.SerializeAsString();
  Tensor rows({4, kTableDim});
  rows.Fill(0.25f);
  proto::TensorChunk chunk;
  ForEachChunk("emb", rows, 1 << 20, &chunk, [&] {
    proto::PushRequest r;
    *r.mutable_chunk() = chunk;
    out.push_back(r.SerializeAsString());
    return true;
  });
  return out;
}

// A ps that holds the fuzz model, as each input of a ps target finds it.
struct FuzzPs {
  FuzzPs() {
    proto::InitRequest first;
    std::map<std::string, Tensor> values;
    for (auto& [name, t] : FuzzTensors()) values.emplace(name, std::move(t));
    if (!first.ParseFromString(StreamMessages(/*push=*/false)[0]) ||
        !core.CheckInitHeader(first.header()).ok() ||
        !core.Init(first.header(), std::move(values)).ok()) {
      __builtin_trap();  // the fixed model must always load
    }
  }
  VariableStore store{16 << 20};
  PsCore core{0, 1, &store, [](const std::string&) {}};
};

// The bytes a tensor channel client writes, kept: how the seeds are made.
struct CapturedBytes : tcp::ByteStream {
  Status ReadFull(void*, size_t) override { return Unavailable("write only"); }
  Status Write(const struct iovec* iov, int count) override {
    for (int i = 0; i < count; ++i) {
      bytes.append(static_cast<char*>(iov[i].iov_base), iov[i].iov_len);
    }
    return OkStatus();
  }
  std::string bytes;
};

// The frames of a push of `tensors` (float32, in place) under `header`;
// header and tensors must outlive the batch's write.
inline void AddPush(const proto::PushHeader& header,
                    const std::vector<std::pair<std::string, Tensor>>& tensors,
                    tcp::FrameBatch* batch) {
  batch->Add(tcp::FrameKind::kPushHeader, &header);
  for (const auto& [name, tensor] : tensors) batch->AddTensor(name, tensor, proto::DT_FLOAT);
  batch->Add(tcp::FrameKind::kEnd, nullptr);
}

// The bytes a client sends on one tensor channel connection (ps/tcp/): a
// push of gradients for the fuzz model, then a pull of every variable.
inline std::string ChannelPushThenPull() {
  CapturedBytes out;
  proto::PushHeader header;
  header.set_placement_fingerprint(kFingerprint);
  header.set_worker(1);
  header.set_increment_global_step(true);
  header.set_num_tensors(2);
  const auto tensors = FuzzTensors();
  tcp::FrameBatch batch;
  AddPush(header, tensors, &batch);
  proto::PullRequest pull;
  pull.set_placement_fingerprint(kFingerprint);
  batch.Add(tcp::FrameKind::kPullRequest, &pull);
  (void)batch.WriteTo(&out);
  return out.bytes;
}

// A push of the dense gradients and rows of table emb, twice (the second
// admits its keys), then a pull that looks keys up, on one tensor channel
// connection.
inline std::string ChannelSparsePushThenPull() {
  CapturedBytes out;
  proto::PushHeader header;
  header.set_placement_fingerprint(kFingerprint);
  header.set_worker(1);
  header.set_increment_global_step(true);
  header.set_num_tensors(3);
  *header.add_sparse() = FuzzKeys({1, 2, 2, -7});
  auto tensors = FuzzTensors();
  Tensor rows({4, kTableDim});
  rows.Fill(0.25f);
  tensors.emplace_back("emb", rows);
  tcp::FrameBatch batch;
  for (int push = 0; push < 2; ++push) AddPush(header, tensors, &batch);
  proto::PullRequest pull;
  pull.set_placement_fingerprint(kFingerprint);
  *pull.add_lookups() = FuzzKeys({1, 2, -7, 99});
  batch.Add(tcp::FrameKind::kPullRequest, &pull);
  (void)batch.WriteTo(&out);
  return out.bytes;
}

// The header of an asynchronous push of one gradient.
inline proto::PushHeader OneGradientPush() {
  proto::PushHeader header;
  header.set_placement_fingerprint(kFingerprint);
  header.set_increment_global_step(true);
  header.set_num_tensors(1);
  return header;
}

// An arena offered (ShmAttachArena; the fuzz ps has none to map), a push
// whose gradient lies in it and that names a room in it for the value
// after it, and a pull naming a room in it.
inline std::string ChannelArena() {
  CapturedBytes out;
  tcp::FrameBatch batch;
  proto::ShmAttach attach;  // no descriptor comes with it
  attach.set_bytes(1 << 16);
  batch.Add(tcp::FrameKind::kShmAttachArena, &attach);
  const auto tensors = FuzzTensors();
  const auto& [name, tensor] = tensors.front();
  proto::PushHeader header = OneGradientPush();
  proto::PullRequest pull;
  pull.set_placement_fingerprint(kFingerprint);
  for (auto* rooms : {header.mutable_arena_rooms(), pull.mutable_arena_rooms()}) {
    proto::ArenaRoom& room = (*rooms)[name];
    room.set_offset(128);
    room.set_bytes(tensor.bytes());
  }
  batch.Add(tcp::FrameKind::kPushHeader, &header);
  batch.AddArenaTensor(name, tensor, 64);
  batch.Add(tcp::FrameKind::kEnd, nullptr);
  batch.Add(tcp::FrameKind::kPullRequest, &pull);
  (void)batch.WriteTo(&out);
  return out.bytes;
}

// The frames of a client on the ps's host: a shared region offered (which
// the fuzzed ps cannot map: no descriptor came), a push whose tensor lies in
// it, and a pull asking for its reply there.
inline std::string ChannelSharedMemory() {
  CapturedBytes out;
  tcp::FrameBatch batch;
  proto::ShmAttach attach;  // no descriptor comes with it
  attach.set_bytes(4096);
  batch.Add(tcp::FrameKind::kShmAttach, &attach);
  const proto::PushHeader header = OneGradientPush();
  batch.Add(tcp::FrameKind::kPushHeader, &header);
  for (const auto& [name, tensor] : FuzzTensors()) {
    proto::ShmChunk chunk;
    chunk.mutable_head()->set_name(name);
    chunk.mutable_head()->mutable_meta()->set_dtype(proto::DT_FLOAT);
    for (int64_t d : tensor.shape()) chunk.mutable_head()->mutable_meta()->add_shape(d);
    chunk.mutable_head()->set_total_bytes(tensor.bytes());
    chunk.set_bytes(tensor.bytes());
    batch.Add(tcp::FrameKind::kShmChunk, &chunk);
    break;
  }
  batch.Add(tcp::FrameKind::kEnd, nullptr);
  proto::PullRequest pull;
  pull.set_placement_fingerprint(kFingerprint);
  pull.set_reply_in_shared_memory(true);
  batch.Add(tcp::FrameKind::kPullRequest, &pull);
  (void)batch.WriteTo(&out);
  return out.bytes;
}

// A push whose one tensor changes dtype between its chunks (float32, then
// bfloat16), then one of bfloat16 chunks throughout.
inline std::string ChannelMixedDtypes() {
  CapturedBytes out;
  tcp::FrameBatch batch;
  const auto tensors = FuzzTensors();
  const auto& [name, tensor] = *tensors.begin();
  std::vector<uint16_t> narrow(tensor.size());
  for (int mixed = 1; mixed >= 0; --mixed) {
    const proto::PushHeader header = OneGradientPush();
    batch.Add(tcp::FrameKind::kPushHeader, &header);
    const uint64_t half = tensor.size() / 2;
    for (int part = 0; part < 2; ++part) {
      proto::TensorChunk head;
      head.set_name(name);
      const bool wide = mixed && part == 0;
      head.mutable_meta()->set_dtype(wide ? proto::DT_FLOAT : proto::DT_BFLOAT16);
      for (int64_t d : tensor.shape()) head.mutable_meta()->add_shape(d);
      const uint64_t width = wide ? 4 : 2;
      const uint64_t first = part == 0 ? 0 : half;
      const uint64_t n = part == 0 ? half : tensor.size() - half;
      head.set_offset(first * width);
      head.set_total_bytes(tensor.size() * width);
      batch.Add(tcp::FrameKind::kChunk, &head,
                wide ? reinterpret_cast<const char*>(tensor.data() + first)
                     : reinterpret_cast<const char*>(narrow.data() + first),
                n * width);
    }
    batch.Add(tcp::FrameKind::kEnd, nullptr);
  }
  (void)batch.WriteTo(&out);
  return out.bytes;
}

// A pull waiting for a far step with no deadline (refused), one with a
// deadline, and a frame cut off in its metadata.
inline std::string ChannelStepWaits() {
  CapturedBytes out;
  tcp::FrameBatch batch;
  proto::PullRequest pull;
  pull.set_placement_fingerprint(kFingerprint);
  pull.set_min_step(int64_t{1} << 62);
  batch.Add(tcp::FrameKind::kPullRequest, &pull);
  pull.set_wait_deadline_ms(1);
  batch.Add(tcp::FrameKind::kPullRequest, &pull);
  batch.Add(tcp::FrameKind::kPullRequest, &pull);
  (void)batch.WriteTo(&out);
  out.bytes.resize(out.bytes.size() - 3);
  return out.bytes;
}

// The request kinds of the fuzz input, by its first byte modulo kNumOps.
enum Op {
  kInit,
  kPush,
  kPull,
  kHeartbeat,
  kWorkerDone,
  kSetLiveWorkers,
  kEndTraining,
  kStatus,
  kExportRows,  // an ExportRowsRequest
  kImportRows,  // a RowBlock written into the fuzz ps's tables
  kNumOps
};

}  // namespace fuzz
}  // namespace pstrain

#endif  // PSTRAIN_FUZZ_PS_FUZZ_MODEL_H_
