// The same suite against every way to reach a ps (PsConnection): in
// process, gRPC, and the tensor channel beside gRPC, over its socket alone
// and with a shared memory region (a ps on the same host). Each must carry tensors
// bit for bit, of any size, lose nothing under concurrent pushes, and apply
// nothing of a push that breaks off.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/bfloat16.h"
#include "core/testing/status_assertions.h"
#include "core/testing/wait_until.h"
#include "proto/ps.grpc.pb.h"
#include "ps/embedding/embedding_table.h"
#include "ps/embedding/row_initializer.h"
#include "ps/embedding/sparse_rows.h"
#include "ps/tcp/shared_region.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_frames.h"
#include "ps/tensor_chunks.h"
#include "ps/testing/in_process_ps.h"
#include "ps/testing/loopback_ps.h"

namespace pstrain {
namespace {

constexpr uint64_t kFingerprint = 7;

enum class Transport { kInProcess, kGrpc, kTensorChannel, kSharedMemory };

std::string TransportName(const ::testing::TestParamInfo<Transport>& info) {
  switch (info.param) {
    case Transport::kInProcess:
      return "InProcess";
    case Transport::kGrpc:
      return "Grpc";
    case Transport::kTensorChannel:
      return "TensorChannel";
    case Transport::kSharedMemory:
      return "TensorChannelSharedMemory";
  }
  return "unknown";
}

class TransportConformance : public ::testing::TestWithParam<Transport> {
 protected:
  void SetUp() override {
    if (GetParam() == Transport::kInProcess) {
      in_process_ = std::make_unique<InProcessPs>(0);
      return;
    }
    const bool channel = GetParam() != Transport::kGrpc;
    Status s = loopback_.Start(channel ? 0 : -1);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(loopback_.server->tensor_port() > 0, channel);
    loopback_.client->set_shared_memory(GetParam() == Transport::kSharedMemory);
  }

  void TearDown() override {
    // The tensors did travel through shared memory where they were meant to
    // (where this machine has memory files at all).
    if (loopback_.client != nullptr && tcp::SharedRegion::Create(4096).ok()) {
      EXPECT_EQ(loopback_.client->SharesMemory(), GetParam() == Transport::kSharedMemory);
    }
  }

  PsConnection* ps() {
    if (in_process_ != nullptr) return in_process_.get();
    return loopback_.client.get();
  }

  static proto::InitHeader Header(const std::vector<std::string>& names) {
    proto::InitHeader h;
    h.set_placement_fingerprint(kFingerprint);
    h.mutable_optimizer()->set_name("GradientDescent");
    h.mutable_optimizer()->set_learning_rate(1.0f);
    for (const std::string& n : names) h.add_variables(n);
    h.set_holds_global_step(true);
    return h;
  }

  proto::PushHeader Push() const {
    proto::PushHeader h;
    h.set_placement_fingerprint(kFingerprint);
    h.set_increment_global_step(true);
    return h;
  }

  std::map<std::string, Tensor> PullAll(int64_t* step = nullptr) {
    std::map<std::string, Tensor> out;
    int64_t got = 0;
    Status s = ps()->Pull(kFingerprint, {}, &out, &got);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (step != nullptr) *step = got;
    return out;
  }

  std::unique_ptr<InProcessPs> in_process_;
  LoopbackPs loopback_;
};

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

// float32 is the one dtype tensors have (proto/tensor.proto); every kind of
// its values, NaN payloads and signed zeros included, comes back bit for bit.
TEST_P(TransportConformance, RoundTripsEveryFloatBitForBit) {
  Tensor odd({8});
  const uint32_t bits[8] = {0x7fc00001u, 0xffc12345u, 0x80000000u, 0x00000001u,
                            0x7f800000u, 0xff800000u, 0x3f800000u, 0x00000000u};
  std::memcpy(odd.data(), bits, sizeof(bits));
  Tensor ramp({1000, 3});
  for (int64_t i = 0; i < ramp.size(); ++i) ramp[i] = std::sin(static_cast<float>(i));
  PS_ASSERT_OK(ps()->Init(Header({"odd", "ramp"}), {{"odd", &odd}, {"ramp", &ramp}}));
  auto out = PullAll();
  EXPECT_TRUE(SameBits(out["odd"], odd));
  EXPECT_TRUE(SameBits(out["ramp"], ramp));
}

TEST_P(TransportConformance, CarriesEmptyAndScalarTensors) {
  Tensor empty({0, 4});
  Tensor scalar(Shape{}, {2.5f});
  ASSERT_TRUE(
      ps()->Init(Header({"empty", "scalar"}), {{"empty", &empty}, {"scalar", &scalar}}).ok());
  Tensor g_empty({0, 4});
  Tensor g_scalar(Shape{}, {0.5f});
  auto pushed = ps()->Push(Push(), {{"empty", &g_empty}, {"scalar", &g_scalar}});
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  auto out = PullAll();
  EXPECT_EQ(out["empty"].shape(), (Shape{0, 4}));
  ASSERT_EQ(out["scalar"].shape(), Shape{});
  EXPECT_EQ(out["scalar"][0], 2.0f);
}

TEST_P(TransportConformance, CarriesAThreeHundredMegabyteTensor) {
  const int64_t n = 300LL * 1000 * 1000 / 4;
  Tensor big({n});
  for (int64_t i = 0; i < n; i += 4096) big[i] = static_cast<float>(i);
  PS_ASSERT_OK(ps()->Init(Header({"big"}), {{"big", &big}}));
  Tensor grad({n});
  grad.Fill(0.25f);
  PS_ASSERT_OK(ps()->Push(Push(), {{"big", &grad}}));
  auto out = PullAll();
  ASSERT_EQ(out["big"].size(), n);
  for (int64_t i = 0; i < n; i += 4093) {
    ASSERT_EQ(out["big"][i], big[i] - 0.25f) << "element " << i;
  }
  EXPECT_EQ(out["big"][n - 1], -0.25f);
}

// Asynchronous pushes from many threads at once: every one is applied once.
TEST_P(TransportConformance, LosesNothingOfPushesFromManyThreads) {
  constexpr int kThreads = 8, kPushes = 40;
  Tensor w({1000});
  PS_ASSERT_OK(ps()->Init(Header({"w"}), {{"w", &w}}));
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Tensor ones({1000});
      ones.Fill(1.0f);
      for (int i = 0; i < kPushes; ++i) {
        if (!ps()->Push(Push(), {{"w", &ones}}).ok()) ++failed;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  int64_t step = 0;
  auto out = PullAll(&step);
  EXPECT_EQ(step, kThreads * kPushes);
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(out["w"][i], -kThreads * kPushes);
}

// A push written gradient by gradient (PushStream, as a worker streams its
// backward pass) is applied once, whole, when it finishes.
TEST_P(TransportConformance, AppliesAStreamedPushOnceItFinishes) {
  Tensor w({1 << 18});
  Tensor b({4});
  PS_ASSERT_OK(ps()->Init(Header({"b", "w"}), {{"b", &b}, {"w", &w}}));
  Tensor gw({1 << 18});
  gw.Fill(1.0f);
  Tensor gb({4});
  gb.Fill(2.0f);
  proto::PushHeader header = Push();
  header.set_num_tensors(2);
  auto stream = ps()->StartPush(header);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  PS_ASSERT_OK((*stream)->Write("w", gw));
  PS_ASSERT_OK((*stream)->Write("b", gb));
  auto pushed = (*stream)->Finish();
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(pushed->global_step(), 1);
  int64_t step = 0;
  auto out = PullAll(&step);
  EXPECT_EQ(step, 1);
  EXPECT_EQ(out["w"][(1 << 18) - 1], -1.0f);
  EXPECT_EQ(out["b"][3], -2.0f);
}

// A streamed push given up before Finish (a step that failed half-way: a
// NaN, a lost ps) applies nothing, even with every gradient written, and
// the ps goes on serving.
TEST_P(TransportConformance, AppliesNothingOfAStreamedPushNeverFinished) {
  Tensor w({1 << 18});
  Tensor b({4});
  PS_ASSERT_OK(ps()->Init(Header({"b", "w"}), {{"b", &b}, {"w", &w}}));
  Tensor g({1 << 18});
  g.Fill(1.0f);
  Tensor gb({4});
  gb.Fill(1.0f);
  proto::PushHeader header = Push();
  header.set_num_tensors(2);
  {
    auto stream = ps()->StartPush(header);
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    PS_ASSERT_OK((*stream)->Write("w", g));
    PS_ASSERT_OK((*stream)->Write("b", gb));
  }  // dropped unfinished
  PS_ASSERT_OK(ps()->Push(Push(), {{"b", &gb}, {"w", &g}}));
  int64_t step = 0;
  auto out = PullAll(&step);
  EXPECT_EQ(step, 1);
  for (int64_t i = 0; i < (1 << 18); i += 1021) ASSERT_EQ(out["w"][i], -1.0f) << i;
  EXPECT_EQ(out["b"][0], -1.0f);
}

// Sync replicas keep a worker's gradient until the step has its others: it
// must not change when the worker's transport memory is used again (a
// shared region is written again by the next push through it).
TEST_P(TransportConformance, KeepsASyncGradientUnchangedUntilItsStepIsApplied) {
  proto::InitHeader init = Header({"w"});
  init.mutable_sync()->set_enabled(true);
  init.mutable_sync()->set_replicas_to_aggregate(2);
  Tensor w({1 << 10});
  w.Fill(5.0f);
  PS_ASSERT_OK(ps()->Init(init, {{"w", &w}}));
  Tensor g0({1 << 10}), g1({1 << 10});
  g0.Fill(1.0f);
  g1.Fill(3.0f);
  proto::PushHeader from0 = Push(), from1 = Push();
  from0.set_worker(0);
  from1.set_worker(1);
  auto first = ps()->Push(from0, {{"w", &g0}});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->outcome(), proto::ACCEPTED);
  auto second = ps()->Push(from1, {{"w", &g1}});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->outcome(), proto::STEP_COMPLETE);
  auto out = PullAll();
  for (int64_t i = 0; i < (1 << 10); i += 97) ASSERT_EQ(out["w"][i], 5.0f - 2.0f) << i;
}

// Embedding rows travel beside the variables: looked up by key in the
// pull's request, pushed as a gradient per key with the keys in the push's
// header, repeated keys summed, nothing dense.
constexpr int kDim = 4;

proto::EmbeddingTableConfig Table(const std::string& name) {
  proto::EmbeddingTableConfig t;
  t.set_name(name);
  t.set_dim(kDim);
  t.set_seed(3);
  t.set_num_shards(1);
  return t;
}

proto::TableKeys Keys(const std::string& table, const std::vector<int64_t>& keys) {
  proto::TableKeys t;
  t.set_table(table);
  t.set_keys(EncodeKeys(keys));
  return t;
}

std::vector<float> InitialRow(const std::string& table, int64_t key) {
  std::vector<float> row(kDim);
  RowInitializer(table, 3, kDim, DefaultEmbeddingStddev(kDim)).Fill(key, row.data());
  return row;
}

TEST_P(TransportConformance, PullsAndPushesEmbeddingRowsByKey) {
  proto::InitHeader init = Header({"w"});
  *init.add_tables() = Table("emb");
  Tensor w({2});
  PS_ASSERT_OK(ps()->Init(init, {{"w", &w}}));
  const std::vector<int64_t> keys = {5, -3, int64_t{1} << 40};
  std::map<std::string, Tensor> out;
  Status pulled = ps()->PullWithRows(kFingerprint, {}, {Keys("emb", keys)}, &out, nullptr, 0,
                                     std::chrono::milliseconds(0));
  ASSERT_TRUE(pulled.ok()) << pulled.ToString();
  ASSERT_EQ(out.count("w"), 1u);
  ASSERT_EQ(out["emb"].shape(), (Shape{3, kDim}));
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::vector<float> expected = InitialRow("emb", keys[i]);
    EXPECT_EQ(std::memcmp(out["emb"].data() + i * kDim, expected.data(), kDim * sizeof(float)), 0)
        << "key " << keys[i];
  }
  // Key 5 twice: its two rows are summed.
  proto::PushHeader push = Push();
  *push.add_sparse() = Keys("emb", {5, 7, 5});
  Tensor gw({2}, {1, 1});
  Tensor rows({3, kDim}, {1, 2, 3, 4, 10, 10, 10, 10, 0.5f, 0.5f, 0.5f, 0.5f});
  auto pushed = ps()->Push(push, {{"w", &gw}, {"emb", &rows}});
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(pushed->global_step(), 1);
  ASSERT_TRUE(ps()->PullWithRows(kFingerprint, {}, {Keys("emb", {7, 5})}, &out, nullptr, 0,
                                 std::chrono::milliseconds(0))
                  .ok());
  const std::vector<float> five = InitialRow("emb", 5), seven = InitialRow("emb", 7);
  for (int j = 0; j < kDim; ++j) {
    EXPECT_EQ(out["emb"][j], seven[j] - 10.0f);
    EXPECT_EQ(out["emb"][kDim + j], five[j] - (j + 1 + 0.5f));
  }
  EXPECT_EQ(out["w"][0], -1.0f);
  auto status = ps()->GetStatus(std::chrono::seconds(5));
  PS_ASSERT_OK(status);
  ASSERT_EQ(status->tables_size(), 1);
  EXPECT_EQ(status->tables(0).name(), "emb");
  EXPECT_EQ(status->tables(0).rows(), 2);
  EXPECT_EQ(status->tables(0).admitted(), 2);
}

// As many keys as one request carries, in one pull and one push: a large
// batch's rows for one ps travel in the step's single request.
TEST_P(TransportConformance, PullsAndPushesAsManyKeysAsARequestCarries) {
  proto::InitHeader init = Header({});
  *init.add_tables() = Table("emb");
  PS_ASSERT_OK(ps()->Init(init, {}));
  std::vector<int64_t> keys(EmbeddingTable::kMaxKeysPerRequest);
  for (size_t k = 0; k < keys.size(); ++k) keys[k] = static_cast<int64_t>(k) * 7919;
  std::map<std::string, Tensor> out;
  Status pulled = ps()->PullWithRows(kFingerprint, {}, {Keys("emb", keys)}, &out, nullptr, 0,
                                     std::chrono::milliseconds(0));
  ASSERT_TRUE(pulled.ok()) << pulled.ToString();
  ASSERT_EQ(out["emb"].shape(), (Shape{static_cast<int64_t>(keys.size()), kDim}));
  const std::vector<size_t> checked = {0, 1, keys.size() / 3, keys.size() - 1};
  for (size_t i : checked) {
    const std::vector<float> expected = InitialRow("emb", keys[i]);
    EXPECT_EQ(std::memcmp(out["emb"].data() + i * kDim, expected.data(), kDim * sizeof(float)), 0)
        << "key " << keys[i];
  }
  proto::PushHeader push = Push();
  *push.add_sparse() = Keys("emb", keys);
  Tensor rows({static_cast<int64_t>(keys.size()), kDim});
  rows.Fill(1.0f);
  auto pushed = ps()->Push(push, {{"emb", &rows}});
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  std::vector<int64_t> some;
  for (size_t i : checked) some.push_back(keys[i]);
  PS_ASSERT_OK(ps()->PullWithRows(kFingerprint, {}, {Keys("emb", some)}, &out, nullptr, 0,
                                  std::chrono::milliseconds(0)));
  for (size_t i = 0; i < some.size(); ++i) {
    const std::vector<float> initial = InitialRow("emb", some[i]);
    for (int j = 0; j < kDim; ++j) EXPECT_EQ(out["emb"][i * kDim + j], initial[j] - 1.0f) << i;
  }
}

// A malformed sparse request is refused naming the problem, and nothing
// of it is applied.
TEST_P(TransportConformance, RefusesMalformedSparseRequestsAndAppliesNothing) {
  proto::InitHeader init = Header({"w"});
  *init.add_tables() = Table("emb");
  Tensor w({2});
  PS_ASSERT_OK(ps()->Init(init, {{"w", &w}}));
  Tensor gw({2}, {1, 1});
  Tensor rows2({2, kDim});
  rows2.Fill(1.0f);
  struct Case {
    const char* what;
    std::vector<proto::TableKeys> sparse;
    Shape rows;
    Code code;
    const char* says;
  };
  proto::TableKeys partial = Keys("emb", {1, 2});
  partial.mutable_keys()->resize(12);
  const std::vector<Case> cases = {
      {"a partial key", {partial}, {2, kDim}, Code::kInvalidArgument, "not a multiple of 8"},
      {"an unknown table", {Keys("nope", {1, 2})}, {2, kDim}, Code::kNotFound, "nope"},
      {"fewer rows than keys",
       {Keys("emb", {1, 2, 3})},
       {2, kDim},
       Code::kInvalidArgument,
       "3 keys of dim 4"},
      {"rows of another dim",
       {Keys("emb", {1, 2})},
       {2, kDim + 1},
       Code::kInvalidArgument,
       "[2,5]"},
      {"a table twice",
       {Keys("emb", {1}), Keys("emb", {2})},
       {2, kDim},
       Code::kInvalidArgument,
       "twice"},
  };
  for (const Case& c : cases) {
    proto::PushHeader push = Push();
    for (const proto::TableKeys& t : c.sparse) *push.add_sparse() = t;
    Tensor rows(c.rows);
    const std::string table = c.sparse.front().table();
    auto pushed = ps()->Push(push, {{"w", &gw}, {table, &rows}});
    ASSERT_FALSE(pushed.ok()) << c.what;
    EXPECT_EQ(pushed.status().code(), c.code) << c.what << ": " << pushed.status().ToString();
    EXPECT_NE(pushed.status().message().find(c.says), std::string::npos)
        << c.what << ": " << pushed.status().ToString();
  }
  std::map<std::string, Tensor> out;
  Status bad_pull = ps()->PullWithRows(kFingerprint, {}, {partial}, &out, nullptr, 0,
                                       std::chrono::milliseconds(0));
  EXPECT_EQ(bad_pull.code(), Code::kInvalidArgument) << bad_pull.ToString();
  int64_t step = -1;
  out = PullAll(&step);
  EXPECT_EQ(step, 0);
  EXPECT_EQ(out["w"][0], 0.0f);
  auto status = ps()->GetStatus(std::chrono::seconds(5));
  PS_ASSERT_OK(status);
  EXPECT_EQ(status->tables(0).rows(), 0);
}

// Sync replicas average a row over the workers whose gradients carry its
// key (TF's SparseConditionalAccumulator).
TEST_P(TransportConformance, AveragesSyncRowsOverTheWorkersThatTouchThem) {
  proto::InitHeader init = Header({"w"});
  *init.add_tables() = Table("emb");
  init.mutable_sync()->set_enabled(true);
  init.mutable_sync()->set_replicas_to_aggregate(2);
  Tensor w({1});
  PS_ASSERT_OK(ps()->Init(init, {{"w", &w}}));
  Tensor gw({1}, {1});
  proto::PushHeader from0 = Push(), from1 = Push();
  from0.set_worker(0);
  from1.set_worker(1);
  *from0.add_sparse() = Keys("emb", {1, 2});
  *from1.add_sparse() = Keys("emb", {2, 3});
  Tensor rows0({2, kDim}, {1, 1, 1, 1, 2, 2, 2, 2});
  Tensor rows1({2, kDim}, {4, 4, 4, 4, 8, 8, 8, 8});
  auto first = ps()->Push(from0, {{"w", &gw}, {"emb", &rows0}});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->outcome(), proto::ACCEPTED);
  auto second = ps()->Push(from1, {{"w", &gw}, {"emb", &rows1}});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->outcome(), proto::STEP_COMPLETE);
  std::map<std::string, Tensor> out;
  ASSERT_TRUE(ps()->PullWithRows(kFingerprint, {}, {Keys("emb", {1, 2, 3})}, &out, nullptr, 0,
                                 std::chrono::milliseconds(0))
                  .ok());
  const float expected[3] = {1, (2 + 4) / 2.0f, 8};
  for (int k = 0; k < 3; ++k) {
    const std::vector<float> initial = InitialRow("emb", k + 1);
    for (int j = 0; j < kDim; ++j) {
      EXPECT_EQ(out["emb"][k * kDim + j], initial[j] - expected[k]) << "key " << k + 1;
    }
  }
}

// A table streams out in blocks and back into another ps whole: values
// and slots; a delta carries the rows changed since, and erase blocks drop
// keys.
TEST_P(TransportConformance, ExportsAndImportsATablesRowsInBlocks) {
  proto::InitHeader init = Header({});
  init.mutable_optimizer()->set_name("Adagrad");
  init.mutable_optimizer()->set_learning_rate(0.1f);
  proto::EmbeddingTableConfig table = Table("emb");
  table.set_dim(64);  // 520 bytes a row with its slot: blocks of 2,016 rows
  *init.add_tables() = table;
  PS_ASSERT_OK(ps()->Init(init, {}));
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < 5000; ++k) keys.push_back(k * 7 - 1000);
  proto::PushHeader push = Push();
  *push.add_sparse() = Keys("emb", keys);
  Tensor rows({5000, 64});
  rows.Fill(0.5f);
  PS_ASSERT_OK(ps()->Push(push, {{"emb", &rows}}));  // at step 0
  // A full export that deltas will follow, then a push, then a delta.
  std::vector<proto::RowBlock> blocks;
  int replies = 0;
  Status exported = ps()->ExportRows(kFingerprint, "emb", false, true, [&](const auto& reply) {
    if (replies++ == 0) {
      EXPECT_EQ(reply.dim(), 64);
      EXPECT_EQ(std::vector<std::string>(reply.slot_names().begin(), reply.slot_names().end()),
                std::vector<std::string>{"accumulator"});
    }
    blocks.push_back(reply.block());
    return OkStatus();
  });
  ASSERT_TRUE(exported.ok()) << exported.ToString();
  EXPECT_EQ(replies, 3);
  proto::PushHeader again = Push();
  *again.add_sparse() = Keys("emb", {keys[10], keys[4000]});
  Tensor two({2, 64});
  two.Fill(1.0f);
  PS_ASSERT_OK(ps()->Push(again, {{"emb", &two}}));
  int64_t delta_rows = 0;
  ASSERT_TRUE(ps()->ExportRows(kFingerprint, "emb", true, false,
                               [&](const auto& reply) {
                                 delta_rows += reply.block().keys().size() / 8;
                                 blocks.push_back(reply.block());
                                 return OkStatus();
                               })
                  .ok());
  EXPECT_EQ(delta_rows, 2);

  // Into a fresh ps: the same rows, and pushes move them alike.
  std::map<std::string, Tensor> before;
  ASSERT_TRUE(ps()->PullWithRows(kFingerprint, {}, {Keys("emb", {keys[10], keys[77]})}, &before,
                                 nullptr, 0, std::chrono::milliseconds(0))
                  .ok());
  PS_ASSERT_OK(ps()->Init(init, {}));
  size_t next = 0;
  proto::RowBlock erase;
  erase.set_table("emb");
  erase.set_keys(EncodeKeys({keys[77]}));
  erase.set_erase(true);
  blocks.push_back(erase);
  auto imported = ps()->ImportRows(kFingerprint, [&](proto::RowBlock* b) {
    if (next == blocks.size()) return false;
    *b = blocks[next++];
    return true;
  });
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  EXPECT_EQ(imported->rows(), 5002);  // the full rows, then the delta's
  EXPECT_EQ(imported->erased(), 1);
  std::map<std::string, Tensor> after;
  ASSERT_TRUE(ps()->PullWithRows(kFingerprint, {}, {Keys("emb", {keys[10], keys[77]})}, &after,
                                 nullptr, 0, std::chrono::milliseconds(0))
                  .ok());
  EXPECT_EQ(std::memcmp(after["emb"].data(), before["emb"].data(), 64 * sizeof(float)), 0);
  // keys[77]'s row was erased: its initial value again.
  const std::vector<float> initial = [&] {
    std::vector<float> row(64);
    RowInitializer("emb", 3, 64, DefaultEmbeddingStddev(64)).Fill(keys[77], row.data());
    return row;
  }();
  EXPECT_EQ(std::memcmp(after["emb"].data() + 64, initial.data(), 64 * sizeof(float)), 0);
  auto status = ps()->GetStatus(std::chrono::seconds(5));
  PS_ASSERT_OK(status);
  EXPECT_EQ(status->tables(0).rows(), 4999);

  // Rows for another table, or of a wrong length, are refused.
  proto::RowBlock bad = blocks[0];
  bad.set_values(bad.values().substr(4));
  bool sent = false;
  auto refused = ps()->ImportRows(kFingerprint, [&](proto::RowBlock* b) {
    if (sent) return false;
    *b = bad;
    sent = true;
    return true;
  });
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument) << refused.status().ToString();
}

// A restore whose rows follow its Init: until FinishRestore no pull or
// push is served (a worker's step on the still empty table would be
// overwritten by the rows) and the ps says it is not ready; the rows
// import meanwhile, and then the ps serves them.
TEST_P(TransportConformance, ServesNothingUntilARestoresRowsAreIn) {
  proto::InitHeader init = Header({"w"});
  *init.add_tables() = Table("emb");
  init.set_rows_follow(true);
  Tensor w({2});
  Status s = ps()->Init(init, {{"w", &w}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::map<std::string, Tensor> out;
  Status pulled = ps()->PullWithRows(kFingerprint, {}, {Keys("emb", {5})}, &out, nullptr, 0,
                                     std::chrono::milliseconds(0));
  EXPECT_EQ(pulled.code(), Code::kUnavailable) << pulled.ToString();
  EXPECT_NE(pulled.message().find("being restored"), std::string::npos) << pulled.ToString();
  proto::PushHeader push = Push();
  *push.add_sparse() = Keys("emb", {5});
  Tensor gw({2}, {1, 1});
  Tensor grow({1, kDim}, {1, 1, 1, 1});
  auto pushed = ps()->Push(push, {{"w", &gw}, {"emb", &grow}});
  EXPECT_EQ(pushed.status().code(), Code::kUnavailable) << pushed.status().ToString();
  auto status = ps()->GetStatus(std::chrono::seconds(5));
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_FALSE(status->ready());

  proto::RowBlock block;
  block.set_table("emb");
  block.set_keys(EncodeKeys({5}));
  const std::vector<float> row = {0.25f, 0.5f, 0.75f, 1.0f};
  block.set_values(std::string(reinterpret_cast<const char*>(row.data()), sizeof(float) * kDim));
  bool sent = false;
  auto imported = ps()->ImportRows(kFingerprint, [&](proto::RowBlock* b) {
    if (sent) return false;
    *b = block;
    sent = true;
    return true;
  });
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  EXPECT_EQ(imported->rows(), 1);
  s = ps()->FinishRestore(kFingerprint + 1);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  s = ps()->FinishRestore(kFingerprint);
  ASSERT_TRUE(s.ok()) << s.ToString();
  status = ps()->GetStatus(std::chrono::seconds(5));
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_TRUE(status->ready());
  pulled = ps()->PullWithRows(kFingerprint, {}, {Keys("emb", {5})}, &out, nullptr, 0,
                              std::chrono::milliseconds(0));
  ASSERT_TRUE(pulled.ok()) << pulled.ToString();
  ASSERT_EQ(out["emb"].shape(), (Shape{1, kDim}));
  for (int j = 0; j < kDim; ++j) EXPECT_EQ(out["emb"][j], row[j]) << j;
  pushed = ps()->Push(push, {{"w", &gw}, {"emb", &grow}});
  EXPECT_TRUE(pushed.ok()) << pushed.status().ToString();
}

// Rows of one float: a 1 MiB block would hold 87,381 of them, more keys
// than a restore block may carry; every exported block goes back whole.
TEST_P(TransportConformance, ExportedBlocksOfShortRowsImportWhole) {
  proto::InitHeader init = Header({});
  proto::EmbeddingTableConfig table = Table("emb");
  table.set_dim(1);
  *init.add_tables() = table;
  PS_ASSERT_OK(ps()->Init(init, {}));
  std::vector<int64_t> keys(70000);
  for (size_t k = 0; k < keys.size(); ++k) keys[k] = static_cast<int64_t>(k);
  for (size_t first = 0; first < keys.size(); first += 35000) {
    proto::PushHeader push = Push();
    *push.add_sparse() = Keys("emb", {keys.begin() + first, keys.begin() + first + 35000});
    Tensor rows({35000, 1});
    rows.Fill(1.0f);
    PS_ASSERT_OK(ps()->Push(push, {{"emb", &rows}}));
  }
  std::vector<proto::RowBlock> blocks;
  ASSERT_TRUE(ps()->ExportRows(kFingerprint, "emb", false, false,
                               [&](const auto& reply) {
                                 EXPECT_LE(
                                     reply.block().keys().size() / 8,
                                     static_cast<size_t>(EmbeddingTable::kMaxKeysPerRowBlock));
                                 blocks.push_back(reply.block());
                                 return OkStatus();
                               })
                  .ok());
  size_t next = 0;
  auto imported = ps()->ImportRows(kFingerprint, [&](proto::RowBlock* b) {
    if (next == blocks.size()) return false;
    *b = blocks[next++];
    return true;
  });
  ASSERT_TRUE(imported.ok()) << imported.status().ToString();
  EXPECT_EQ(imported->rows(), 70000);
}

// The transports with a stream to cut.
class StreamConformance : public TransportConformance {};

// A push cut off in the middle of a tensor's bytes changes nothing, and the
// ps goes on serving.
TEST_P(StreamConformance, AppliesNothingOfAPushCutInTheMiddle) {
  Tensor w({1 << 20});
  Tensor b({4});
  PS_ASSERT_OK(ps()->Init(Header({"b", "w"}), {{"b", &b}, {"w", &w}}));
  Tensor gw({1 << 20});
  gw.Fill(1.0f);
  Tensor gb({4});
  gb.Fill(1.0f);
  proto::PushHeader header = Push();
  header.set_num_tensors(2);
  switch (GetParam()) {
    case Transport::kInProcess:
      FAIL() << "in process, a push has no stream to cut";
    case Transport::kGrpc: {
      auto stub = proto::Ps::NewStub(
          grpc::CreateChannel("127.0.0.1:" + std::to_string(loopback_.server->port()),
                              grpc::InsecureChannelCredentials()));
      grpc::ClientContext ctx;
      proto::PushResponse response;
      auto writer = stub->Push(&ctx, &response);
      proto::PushRequest request;
      *request.mutable_header() = header;
      ASSERT_TRUE(writer->Write(request));
      ForEachChunk("b", gb, 0, request.mutable_chunk(), [&] { return writer->Write(request); });
      int chunks = 0;  // two of w's four chunks, then the client goes away
      ForEachChunk("w", gw, 1 << 20, request.mutable_chunk(),
                   [&] { return ++chunks <= 2 && writer->Write(request); });
      ctx.TryCancel();
      const grpc::Status finished = writer->Finish();
      EXPECT_EQ(finished.error_code(), grpc::StatusCode::CANCELLED) << finished.error_message();
      break;
    }
    case Transport::kSharedMemory:
      FAIL() << "a push through shared memory has no byte stream to cut";
    case Transport::kTensorChannel: {
      auto socket = tcp::Socket::Connect("127.0.0.1", loopback_.server->tensor_port(),
                                         std::chrono::seconds(5));
      ASSERT_TRUE(socket.ok()) << socket.status().ToString();
      tcp::FrameBatch batch;
      batch.Add(tcp::FrameKind::kPushHeader, &header);
      ForEachChunkSpan("b", gb, 1 << 30, [&](const proto::TensorChunk& h, const char* d, size_t n) {
        batch.Add(tcp::FrameKind::kChunk, &h, d, n);
        return true;
      });
      ForEachChunkSpan("w", gw, 1 << 30, [&](const proto::TensorChunk& h, const char* d, size_t n) {
        batch.Add(tcp::FrameKind::kChunk, &h, d, n / 2);  // announces n, sends half
        return true;
      });
      PS_ASSERT_OK(batch.WriteTo(socket->get()));
      (*socket)->Shutdown();
      break;
    }
  }
  // Once the ps has refused the cut push (it may still be reading it when
  // the client's side is done), nothing of it may show.
  ASSERT_TRUE(WaitUntil([&] { return loopback_.core.refused_pushes() == 1; }))
      << "the ps never refused the cut push";
  int64_t step = -1;
  auto out = PullAll(&step);
  EXPECT_EQ(step, 0);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(out["b"][i], 0.0f);
  for (int64_t i = 0; i < w.size(); i += 997) ASSERT_EQ(out["w"][i], 0.0f);
  // And a whole push still goes through.
  PS_ASSERT_OK(ps()->Push(Push(), {{"b", &gb}, {"w", &gw}}));
  EXPECT_EQ(PullAll()["b"][0], -1.0f);
}

// --wire_dtype=bfloat16 over the tensor channel: pushed gradients and pulled
// variables travel rounded to bfloat16; the ps keeps float32, and a state
// pull (a checkpoint) stays exact.
TEST(TensorChannelBfloat16, RoundsOnTheWireOnly) {
  LoopbackPs loopback;
  PS_ASSERT_OK(loopback.Start(0));
  PsClient* ps = loopback.client.get();
  Tensor w({3, 1000});
  for (int64_t i = 0; i < w.size(); ++i) w[i] = 1.0f + std::sin(static_cast<float>(i)) / 3.0f;
  proto::InitHeader h;
  h.set_placement_fingerprint(kFingerprint);
  h.mutable_optimizer()->set_name("GradientDescent");
  h.mutable_optimizer()->set_learning_rate(1.0f);
  h.add_variables("w");
  h.set_holds_global_step(true);
  PS_ASSERT_OK(ps->Init(h, {{"w", &w}}));
  ps->set_wire_dtype(proto::DT_BFLOAT16);
  Tensor g({3, 1000});
  for (int64_t i = 0; i < g.size(); ++i) g[i] = std::cos(static_cast<float>(i)) / 7.0f;
  proto::PushHeader push;
  push.set_placement_fingerprint(kFingerprint);
  push.set_increment_global_step(true);
  PS_ASSERT_OK(ps->Push(push, {{"w", &g}}));
  std::map<std::string, Tensor> pulled, state;
  int64_t step = 0;
  PS_ASSERT_OK(ps->Pull(kFingerprint, {}, &pulled, &step));
  PS_ASSERT_OK(ps->PullState(kFingerprint, &state, &step));
  for (int64_t i = 0; i < w.size(); ++i) {
    const float held = w[i] - Bfloat16ToFloat(FloatToBfloat16(g[i]));
    ASSERT_EQ(state["w"][i], held) << i;
    ASSERT_EQ(pulled["w"][i], Bfloat16ToFloat(FloatToBfloat16(held))) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTransport, TransportConformance,
                         ::testing::Values(Transport::kInProcess, Transport::kGrpc,
                                           Transport::kTensorChannel, Transport::kSharedMemory),
                         TransportName);
INSTANTIATE_TEST_SUITE_P(EveryStreamTransport, StreamConformance,
                         ::testing::Values(Transport::kGrpc, Transport::kTensorChannel),
                         TransportName);

}  // namespace
}  // namespace pstrain
