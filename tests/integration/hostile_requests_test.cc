// Hostile requests against a live ps_server process: overflowing and absurd
// shapes, streams that end in garbage or are cut short, requests naming
// unknown variables and workers, and thousands of random and mutated
// requests for every method. Each is refused with an error naming the
// problem; the ps keeps serving, and every variable, slot, shadow and counter
// is bit for bit what it was.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/testing/status_assertions.h"
#include "ps/client/ps_fleet.h"
#include "ps/embedding/embedding_table.h"
#include "ps/rpc/generic_call.h"
#include "ps/rpc/grpc_options.h"
#include "ps/rpc/ps_connections.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_frames.h"
#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

using testing::BuildDir;
using testing::RunningTask;

const char* const kMethods[] = {"Init",       "Pull",           "Push",     "GetStatus",
                                "WorkerDone", "SetLiveWorkers", "Heartbeat"};

std::string Serialize(const google::protobuf::Message& m) { return m.SerializeAsString(); }

grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// Talks the Ps protocol in raw bytes, so that a test can send what no
// well-behaved client would, through gRPC's public GenericStub
// (ps/rpc/generic_call.h).
class RawPs {
 public:
  explicit RawPs(const std::string& address)
      : stub_(grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                        DefaultChannelArguments())) {}

  // A client stream of `messages` to a client-streaming method.
  grpc::Status Stream(const std::string& method, const std::vector<std::string>& messages) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    GenericCall call(&stub_, &ctx, Name(method));
    for (const std::string& m : messages) {
      if (!call.Write(Buffer(m))) break;
    }
    call.WritesDone();
    return ReadAll(&call);
  }

  // One request to a unary or server-streaming method; reads every reply.
  grpc::Status Call(const std::string& method, const std::string& request) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    GenericCall call(&stub_, &ctx, Name(method));
    if (call.Write(Buffer(request))) call.WritesDone();
    return ReadAll(&call);
  }

 private:
  static std::string Name(const std::string& method) { return "/pstrain.proto.Ps/" + method; }
  static grpc::Status ReadAll(GenericCall* call) {
    grpc::ByteBuffer reply;
    while (call->Read(&reply)) {
    }
    return call->Finish();
  }
  grpc::GenericStub stub_;
};

class HostileRequests : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = testing::MakeLocalSpec(dir_.path(), 1, 2);
    ps_ = std::make_unique<RunningTask>(
        "ps:0",
        std::vector<std::string>{BuildDir() + "/ps/ps_server", "--cluster_spec=" + spec_.path,
                                 "--job=ps", "--task=0", "--max_memory_bytes=100000000"});
    placement_ = *cluster::ComputePlacement(vars_, 1, cluster::PlacementStrategy::kGreedy, 1 << 20);
    proto::EmbeddingTableConfig table;
    table.set_name("emb");
    table.set_dim(kDim);
    table.set_vocabulary_size(1000);
    fleet_ = ConnectFleet(spec_.spec, {vars_, placement_, {}, {table}});
    PS_ASSERT_OK(fleet_->WaitForPs(false, nullptr, std::chrono::seconds(30)));
    std::vector<Tensor> init = {Tensor({64, 32}), Tensor({32})};
    for (int64_t i = 0; i < init[0].size(); ++i) init[0][i] = 0.001f * static_cast<float>(i);
    proto::InitHeader header;
    header.mutable_optimizer()->set_name("Momentum");
    header.mutable_optimizer()->set_learning_rate(0.1f);
    header.mutable_optimizer()->set_momentum(0.9f);
    header.set_ema_decay(0.99f);
    header.set_num_workers(2);
    PS_ASSERT_OK(fleet_->InitVariables(init, header));
    // Some history in the slots, the shadows and global_step.
    std::vector<Tensor> grads = {Tensor({64, 32}), Tensor({32})};
    grads[0].Fill(0.5f);
    grads[1].Fill(-1.0f);
    for (int i = 0; i < 3; ++i) {
      PS_ASSERT_OK(fleet_->PushGradients(grads, 0, i + 1, {i}, /*sync=*/false));
    }
    // And some rows, with history in their slots.
    for (int i = 0; i < 2; ++i) {
      Tensor rows({3, kDim});
      rows.Fill(0.25f);
      auto pushed = fleet_->client(0)->Push(SparsePush({1, 2, 3}), {{"emb", &rows}});
      ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
    }
    PS_ASSERT_OK(fleet_->PullState(&before_, nullptr));
    rows_before_ = Rows();
    status_before_ = *fleet_->CoordinatorStatus();
    raw_ = std::make_unique<RawPs>(spec_.spec.Address("ps", 0));
  }

  void TearDown() override {
    if (fleet_) (void)fleet_->ShutdownAll("test done");
    if (ps_) ps_->WaitForExit(std::chrono::seconds(20));
  }

  // The ps still serves, and holds exactly what it held before the attack.
  void ExpectUntouched() {
    PsFleet::State after;
    ASSERT_TRUE(fleet_->PullState(&after, nullptr).ok()) << "the ps stopped serving";
    ASSERT_EQ(after.size(), before_.size());
    for (const auto& [name, t] : before_) {
      const Tensor& a = after.at(name);
      ASSERT_EQ(a.shape(), t.shape()) << name;
      ASSERT_EQ(std::memcmp(a.data(), t.data(), t.bytes()), 0) << name << " changed";
    }
    auto st = fleet_->CoordinatorStatus();
    PS_ASSERT_OK(st);
    EXPECT_EQ(st->global_step(), status_before_.global_step());
    EXPECT_EQ(st->num_variables(), status_before_.num_variables());
    EXPECT_EQ(st->num_bytes(), status_before_.num_bytes());
    EXPECT_EQ(st->incarnation(), status_before_.incarnation()) << "the ps restarted";
    const Tensor rows = Rows();
    EXPECT_EQ(std::memcmp(rows.data(), rows_before_.data(), rows.bytes()), 0) << "rows changed";
    ASSERT_EQ(st->tables_size(), 1);
    EXPECT_EQ(st->tables(0).rows(), status_before_.tables(0).rows());
  }

  static constexpr int kDim = 4;
  static proto::TableKeys Keys(const std::string& table, const std::vector<int64_t>& keys) {
    proto::TableKeys k;
    k.set_table(table);
    k.set_keys(std::string(reinterpret_cast<const char*>(keys.data()), keys.size() * 8));
    return k;
  }
  // A push of rows alone, for `keys` of table emb.
  proto::PushHeader SparsePush(const std::vector<int64_t>& keys) const {
    proto::PushHeader h;
    h.set_placement_fingerprint(placement_.fingerprint);
    h.set_worker(1);
    *h.add_sparse() = Keys("emb", keys);
    return h;
  }
  // The rows of keys 1..3 and of a key without a row, 5.
  Tensor Rows() {
    std::map<std::string, Tensor> out;
    Status s =
        fleet_->client(0)->PullWithRows(placement_.fingerprint, {"b"}, {Keys("emb", {1, 2, 3, 5})},
                                        &out, nullptr, 0, std::chrono::milliseconds(0));
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out["emb"];
  }

  // A push header that matches the ps, for all of its variables.
  proto::PushRequest PushHeader() const {
    proto::PushRequest r;
    r.mutable_header()->set_placement_fingerprint(placement_.fingerprint);
    r.mutable_header()->set_worker(1);
    r.mutable_header()->set_increment_global_step(true);
    r.mutable_header()->set_num_tensors(2);
    return r;
  }
  // The chunks of a valid push: every variable, 4 KB a chunk.
  std::vector<std::string> PushChunks() const {
    std::vector<std::string> out;
    for (const auto& v : vars_) {
      Tensor g(v.shape);
      g.Fill(1.0f);
      proto::PushRequest r;
      ForEachChunk(v.name, g, 4096, r.mutable_chunk(), [&] {
        out.push_back(Serialize(r));
        return true;
      });
    }
    return out;
  }
  static proto::TensorChunk ChunkOf(const std::string& name, std::vector<int64_t> shape,
                                    uint64_t total_bytes, const std::string& data) {
    proto::TensorChunk c;
    c.set_name(name);
    c.mutable_meta()->set_dtype(proto::DT_FLOAT);
    for (int64_t d : shape) c.mutable_meta()->add_shape(d);
    c.set_total_bytes(total_bytes);
    c.set_data(data);
    return c;
  }
  std::string InitHeaderMessage(const std::string& optimizer) const {
    proto::InitRequest r;
    r.mutable_header()->mutable_optimizer()->set_name(optimizer);
    r.mutable_header()->mutable_optimizer()->set_learning_rate(0.1f);
    r.mutable_header()->add_variables("w");
    return Serialize(r);
  }

  static void ExpectRefused(const grpc::Status& s, grpc::StatusCode code, const std::string& says) {
    EXPECT_EQ(s.error_code(), code) << s.error_message();
    EXPECT_NE(s.error_message().find(says), std::string::npos) << s.error_message();
  }

  testing::TempDir dir_{"hostile"};
  testing::LocalSpec spec_;
  std::unique_ptr<RunningTask> ps_;
  std::vector<cluster::VariableInfo> vars_ = {{"w", {64, 32}, 1}, {"b", {32}, 1}};
  cluster::Placement placement_;
  std::unique_ptr<PsFleet> fleet_;
  PsFleet::State before_;
  Tensor rows_before_;
  proto::StatusResponse status_before_;
  std::unique_ptr<RawPs> raw_;
};

// The Init that crashed a ps: each dimension 2^32, so the byte count wrapped
// to 0 and passed the size check; absurd shapes besides.
TEST_F(HostileRequests, InitWithOverflowingOrAbsurdShapesIsRefused) {
  const int64_t big = int64_t{1} << 32;
  for (const std::string optimizer : {"GradientDescent", "Momentum"}) {
    proto::InitRequest chunk;
    *chunk.mutable_chunk() = ChunkOf("w", {big, big}, 0, "");
    ExpectRefused(raw_->Stream("Init", {InitHeaderMessage(optimizer), Serialize(chunk)}),
                  grpc::StatusCode::INVALID_ARGUMENT, "too many elements");
    *chunk.mutable_chunk() = ChunkOf("w", {-1, 4}, 0, "");
    ExpectRefused(raw_->Stream("Init", {InitHeaderMessage(optimizer), Serialize(chunk)}),
                  grpc::StatusCode::INVALID_ARGUMENT, "negative dimension");
    // 4 TB: a valid shape that no ps here can hold, refused before allocating.
    *chunk.mutable_chunk() = ChunkOf("w", {int64_t{1} << 40}, uint64_t{1} << 42, "abcd");
    ExpectRefused(raw_->Stream("Init", {InitHeaderMessage(optimizer), Serialize(chunk)}),
                  grpc::StatusCode::RESOURCE_EXHAUSTED, "past its limit");
    // 40 MB fits the stream's limit (100 MB), but not with the optimizer's
    // slot and the moving average: 3 x 40 MB.
    if (optimizer == "Momentum") {
      proto::InitHeader h;
      h.mutable_optimizer()->set_name("Momentum");
      h.mutable_optimizer()->set_learning_rate(0.1f);
      h.set_ema_decay(0.5f);
      h.add_variables("w");
      Tensor huge({10 << 20});
      std::vector<std::string> stream;
      proto::InitRequest r;
      *r.mutable_header() = h;
      stream.push_back(Serialize(r));
      ForEachChunk("w", huge, 8 << 20, r.mutable_chunk(), [&] {
        stream.push_back(Serialize(r));
        return true;
      });
      ExpectRefused(raw_->Stream("Init", stream), grpc::StatusCode::RESOURCE_EXHAUSTED,
                    "more than this ps may hold");
    }
  }
  proto::InitRequest stray;
  *stray.mutable_chunk() = ChunkOf("elsewhere", {1}, 4, "abcd");
  ExpectRefused(raw_->Stream("Init", {InitHeaderMessage("Momentum"), Serialize(stray)}),
                grpc::StatusCode::INVALID_ARGUMENT, "no declared variable");
  ExpectUntouched();
}

// gRPC's own reader takes an unparseable message for the end of the stream;
// this one applied the gradients before it. Now the push is refused whole.
TEST_F(HostileRequests, PushEndingInGarbageOrCutShortAppliesNothing) {
  std::vector<std::string> push = {Serialize(PushHeader())};
  for (const std::string& c : PushChunks()) push.push_back(c);
  for (const std::string& garbage :
       {std::string("\xff\xff\xff\xff\xff", 5), std::string("\x0a\x10short", 7),
        std::string("\x12\x05\x0a\x01", 4)}) {
    std::vector<std::string> stream = push;
    stream.push_back(garbage);
    ExpectRefused(raw_->Stream("Push", stream), grpc::StatusCode::INVALID_ARGUMENT,
                  "not a valid pstrain.proto.PushRequest");
  }
  std::vector<std::string> cut(push.begin(), push.end() - 1);
  ExpectRefused(raw_->Stream("Push", cut), grpc::StatusCode::INVALID_ARGUMENT, "nothing applied");
  ExpectRefused(raw_->Stream("Push", {push[0]}), grpc::StatusCode::INVALID_ARGUMENT,
                "sent 0 of 2 gradients; nothing applied");
  ExpectUntouched();
  // The same push, whole, is applied: the refusals above were for cause.
  PS_EXPECT_OK(raw_->Stream("Push", push));
}

TEST_F(HostileRequests, PushNamingWhatIsNotThereIsRefused) {
  struct Case {
    std::string what;
    proto::PushRequest header;
    proto::TensorChunk chunk;
    grpc::StatusCode code;
    std::string says;
  };
  std::vector<Case> cases;
  auto header = PushHeader();
  cases.push_back({"unknown variable", header, ChunkOf("nope", {4}, 16, std::string(16, 'x')),
                   grpc::StatusCode::NOT_FOUND, "unknown variable nope"});
  cases.push_back({"wrong shape", header, ChunkOf("b", {33}, 132, std::string(132, 'x')),
                   grpc::StatusCode::INVALID_ARGUMENT, "has shape [33], variable has [32]"});
  cases.push_back({"overflowing shape", header, ChunkOf("b", {int64_t{1} << 62, 8}, 0, ""),
                   grpc::StatusCode::INVALID_ARGUMENT, "too many elements"});
  header.mutable_header()->set_placement_fingerprint(placement_.fingerprint + 1);
  cases.push_back({"other placement", header, ChunkOf("b", {32}, 128, std::string(128, 'x')),
                   grpc::StatusCode::FAILED_PRECONDITION, "placement mismatch"});
  header = PushHeader();
  header.mutable_header()->set_worker(7);
  cases.push_back({"unknown worker", header, ChunkOf("b", {32}, 128, std::string(128, 'x')),
                   grpc::StatusCode::INVALID_ARGUMENT, "no worker:7 in the cluster (2 workers)"});
  header = PushHeader();
  header.mutable_header()->set_num_tensors(-3);
  cases.push_back({"negative count", header, ChunkOf("b", {32}, 128, std::string(128, 'x')),
                   grpc::StatusCode::INVALID_ARGUMENT, "num_tensors -3"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    proto::PushRequest chunk;
    *chunk.mutable_chunk() = c.chunk;
    ExpectRefused(raw_->Stream("Push", {Serialize(c.header), Serialize(chunk)}), c.code, c.says);
  }
  ExpectUntouched();
}

// Sparse requests whose parts do not add up: keys that are not whole,
// too many, outside the vocabulary or of an unknown table, rows that do not
// match their keys or absurdly wide; each refused naming the problem, and
// nothing of it applied.
TEST_F(HostileRequests, SparseRequestsThatDoNotAddUpAreRefused) {
  struct Case {
    std::string what;
    proto::TableKeys keys;
    std::vector<int64_t> rows_shape;
    grpc::StatusCode code;
    std::string says;
  };
  proto::TableKeys partial = Keys("emb", {1, 2});
  partial.mutable_keys()->resize(13);
  std::vector<int64_t> many(EmbeddingTable::kMaxKeysPerRequest + 1);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int64_t>(i % 1000);
  const std::vector<Case> cases = {
      {"a partial key",
       partial,
       {2, kDim},
       grpc::StatusCode::INVALID_ARGUMENT,
       "13 bytes of keys, not a multiple of 8"},
      {"too many keys",
       Keys("emb", many),
       {EmbeddingTable::kMaxKeysPerRequest + 1, kDim},
       grpc::StatusCode::INVALID_ARGUMENT,
       "1048577 keys with the tables before it, more than 1048576"},
      {"an unknown table", Keys("nope", {1}), {1, kDim}, grpc::StatusCode::NOT_FOUND, "nope"},
      {"rows short of the keys",
       Keys("emb", {1, 2, 3}),
       {2, kDim},
       grpc::StatusCode::INVALID_ARGUMENT,
       "3 keys of dim 4 need [3,4]"},
      {"absurdly wide rows",
       Keys("emb", {1, 2}),
       {2, int64_t{1} << 40},
       grpc::StatusCode::INVALID_ARGUMENT,
       "[2,1099511627776]"},
      {"a key outside the vocabulary",
       Keys("emb", {1, 4000}),
       {2, kDim},
       grpc::StatusCode::INVALID_ARGUMENT,
       "key 4000 is outside its vocabulary [0, 1000)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    proto::PushRequest header;
    *header.mutable_header() = SparsePush({});
    *header.mutable_header()->mutable_sparse(0) = c.keys;
    header.mutable_header()->set_num_tensors(1);
    int64_t elements = 1;
    for (int64_t d : c.rows_shape) elements *= d;
    const bool small = elements < (1 << 20);
    const uint64_t bytes = small ? static_cast<uint64_t>(elements) * 4 : 0;
    proto::PushRequest chunk;
    *chunk.mutable_chunk() =
        ChunkOf(c.keys.table(), c.rows_shape, bytes, std::string(small ? bytes : 0, 'x'));
    ExpectRefused(raw_->Stream("Push", {Serialize(header), Serialize(chunk)}), c.code, c.says);
    // The same keys looked up.
    proto::PullRequest pull;
    pull.set_placement_fingerprint(placement_.fingerprint);
    *pull.add_lookups() = c.keys;
    if (c.what != "rows short of the keys" && c.what != "absurdly wide rows") {
      ExpectRefused(raw_->Call("Pull", Serialize(pull)), c.code, c.says);
    }
  }
  // Rows for a restore that are not whole rows, and an unknown table's.
  proto::ImportRowsRequest first, block;
  first.set_placement_fingerprint(placement_.fingerprint);
  block.mutable_block()->set_table("emb");
  block.mutable_block()->set_keys(Keys("emb", {1}).keys());
  block.mutable_block()->set_values(std::string(3, 'x'));
  ExpectRefused(raw_->Stream("ImportRows", {Serialize(first), Serialize(block)}),
                grpc::StatusCode::INVALID_ARGUMENT, "not a whole number of floats");
  proto::ExportRowsRequest export_rows;
  export_rows.set_placement_fingerprint(placement_.fingerprint);
  export_rows.set_table("nope");
  ExpectRefused(raw_->Call("ExportRows", Serialize(export_rows)), grpc::StatusCode::NOT_FOUND,
                "nope");
  ExpectUntouched();
}

TEST_F(HostileRequests, UnaryRequestsOutOfRangeAreRefused) {
  proto::HeartbeatRequest hb;
  hb.set_worker(-5);
  ExpectRefused(raw_->Call("Heartbeat", Serialize(hb)), grpc::StatusCode::INVALID_ARGUMENT,
                "no worker:-5");
  proto::WorkerDoneRequest done;
  done.set_worker(1 << 30);
  ExpectRefused(raw_->Call("WorkerDone", Serialize(done)), grpc::StatusCode::INVALID_ARGUMENT,
                "in the cluster");
  proto::SetLiveWorkersRequest live;
  live.add_workers(0);
  ExpectRefused(raw_->Call("SetLiveWorkers", Serialize(live)),
                grpc::StatusCode::FAILED_PRECONDITION, "asynchronously");
  proto::EndTrainingRequest end;
  ExpectRefused(raw_->Call("EndTraining", Serialize(end)), grpc::StatusCode::INVALID_ARGUMENT,
                "the reason must be 1 to 1024 bytes, got 0");
  end.set_reason(std::string(5000, 'r'));
  ExpectRefused(raw_->Call("EndTraining", Serialize(end)), grpc::StatusCode::INVALID_ARGUMENT,
                "got 5000");
  proto::PullRequest pull;
  pull.set_placement_fingerprint(placement_.fingerprint);
  pull.add_names("nope");
  ExpectRefused(raw_->Call("Pull", Serialize(pull)), grpc::StatusCode::NOT_FOUND, "nope");
  pull.set_include_state(true);
  ExpectRefused(raw_->Call("Pull", Serialize(pull)), grpc::StatusCode::INVALID_ARGUMENT,
                "include_state takes no names");
  // A chunk size of 1 byte would make the ps send 10,000 messages: it is
  // raised to the minimum, and the pull is served.
  pull.Clear();
  pull.set_placement_fingerprint(placement_.fingerprint);
  pull.set_chunk_bytes(1);
  PS_EXPECT_OK(raw_->Call("Pull", Serialize(pull)));
  ExpectUntouched();
}

// Push streams that send their header and then nothing (a worker whose
// backward is slow while it streams its push, or a client that stalls)
// hold no thread of the ps: while 64, then 512, are open, a new client
// pushes and pulls, long before the streams' own deadline, and the ps
// stays under 64 threads. Released, each is refused with nothing applied.
TEST_F(HostileRequests, StalledPushStreamsHoldNoThreadOfThePs) {
  grpc::GenericStub stub(grpc::CreateCustomChannel(
      spec_.spec.Address("ps", 0), grpc::InsecureChannelCredentials(), DefaultChannelArguments()));
  const auto stalled_for = std::chrono::seconds(120);
  int64_t pushes = 0;
  for (const int n : {64, 512}) {
    SCOPED_TRACE(std::to_string(n) + " stalled streams");
    std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
    std::vector<std::unique_ptr<GenericCall>> stalled;
    for (int i = 0; i < n; ++i) {
      contexts.push_back(std::make_unique<grpc::ClientContext>());
      contexts.back()->set_deadline(std::chrono::system_clock::now() + stalled_for);
      stalled.push_back(
          std::make_unique<GenericCall>(&stub, contexts.back().get(), "/pstrain.proto.Ps/Push"));
      ASSERT_TRUE(stalled.back()->Write(Buffer(Serialize(PushHeader())))) << i;
    }
    // A new worker, over the tensor channel, and a client over gRPC.
    const auto begun = std::chrono::steady_clock::now();
    auto fresh = ConnectFleet(spec_.spec, {vars_, placement_, {}, {}});
    std::vector<Tensor> grads = {Tensor({64, 32}), Tensor({32})};
    grads[0].Fill(0.0f);
    grads[1].Fill(0.0f);
    auto pushed = fresh->PushGradients(grads, 1, 100 + n, {status_before_.global_step()}, false);
    ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
    ++pushes;
    std::vector<Tensor> values;
    PsFleet::PsSteps steps;
    PS_ASSERT_OK(fresh->PullVariables(&values, &steps));
    proto::PullRequest pull;
    pull.set_placement_fingerprint(placement_.fingerprint);
    PS_ASSERT_OK(raw_->Call("Pull", Serialize(pull)));
    const auto waited =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - begun);
    EXPECT_LT(waited.count(), stalled_for.count() / 2)
        << "the new client waited for the stalled streams";
    const int threads = testing::ThreadsOf(ps_.get());
    EXPECT_GT(threads, 0);
    EXPECT_LT(threads, 64);
    for (auto& call : stalled) {
      call->WritesDone();
      grpc::ByteBuffer reply;
      EXPECT_FALSE(call->Read(&reply));
      ExpectRefused(call->Finish(), grpc::StatusCode::INVALID_ARGUMENT,
                    "sent 0 of 2 gradients; nothing applied");
    }
    auto st = fleet_->CoordinatorStatus();
    PS_ASSERT_OK(st);
    EXPECT_EQ(st->global_step(), status_before_.global_step() + pushes);
  }
}

// A request that is not a message of its call's type is a bad request,
// INVALID_ARGUMENT, for every unary call alike (gRPC's own parsing would
// answer INTERNAL, which reads as a broken server): Shutdown and
// EndTraining included, which change nothing then.
TEST_F(HostileRequests, MalformedUnaryRequestsAreBadRequestsNotServerFaults) {
  // A length-delimited field 1 whose length runs past the end; an
  // unterminated varint; a field number 0.
  const std::string malformed[] = {std::string("\x0a\x7f", 2), std::string("\x08\xff\xff", 3),
                                   std::string("\x00\x01", 2)};
  for (const char* method : {"Pull", "GetStatus", "WorkerDone", "SetLiveWorkers", "Heartbeat",
                             "EndTraining", "Shutdown"}) {
    for (const std::string& bytes : malformed) {
      const grpc::Status s = raw_->Call(method, bytes);
      EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
          << method << ": " << s.error_code() << " " << s.error_message();
      EXPECT_NE(s.error_message().find(method), std::string::npos) << s.error_message();
    }
  }
  ExpectUntouched();
}

// Thousands of random byte strings for every method, and streams of random
// and of mutated messages for Init and Push. Shutdown and EndTraining are
// left out: a well-formed one is obeyed (mutual TLS decides who may send
// one).
TEST_F(HostileRequests, RandomAndMutatedRequestsChangeNothing) {
  std::mt19937_64 rng(20261123);
  auto random_bytes = [&rng](size_t max_len) {
    std::string s(rng() % (max_len + 1), '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  };
  int refused = 0, total = 0;
  for (const char* method : kMethods) {
    const std::string m = method;
    for (int i = 0; i < 600; ++i) {
      grpc::Status s;
      if (m == "Init" || m == "Push") {
        std::vector<std::string> stream;
        for (int k = 1 + rng() % 4; k > 0; --k) stream.push_back(random_bytes(64));
        s = raw_->Stream(m, stream);
      } else {
        s = raw_->Call(m, random_bytes(48));
      }
      ++total;
      refused += !s.ok();
      ASSERT_NE(s.error_code(), grpc::StatusCode::UNAVAILABLE) << m << ": the ps went away";
    }
  }
  // Valid pushes, one field broken at random: each must be refused.
  const std::vector<std::string> chunks = PushChunks();
  for (int i = 0; i < 600; ++i) {
    proto::PushRequest header = PushHeader();
    std::vector<std::string> stream = {Serialize(header)};
    stream.insert(stream.end(), chunks.begin(), chunks.end());
    const size_t at = 1 + rng() % chunks.size();
    proto::PushRequest chunk;
    ASSERT_TRUE(chunk.ParseFromString(stream[at]));
    proto::TensorChunk* c = chunk.mutable_chunk();
    switch (rng() % 6) {
      case 0:
        c->mutable_meta()->set_shape(0, static_cast<int64_t>(rng()));
        break;
      case 1:
        c->set_total_bytes(rng());
        break;
      case 2:
        c->set_offset(c->offset() + 1 + rng() % 100000);
        break;
      case 3:
        c->set_name("v" + std::to_string(rng()));
        break;
      case 4:
        c->mutable_meta()->set_dtype(proto::DT_INT64);
        break;
      case 5:
        c->mutable_data()->append(1 + rng() % 64, 'z');
        break;
    }
    stream[at] = Serialize(chunk);
    grpc::Status s = raw_->Stream("Push", stream);
    ++total;
    // Refused as a bad request: malformed, or naming what the ps lacks.
    ASSERT_TRUE(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT ||
                s.error_code() == grpc::StatusCode::NOT_FOUND)
        << "a broken push was not refused as one: " << s.error_code() << ": " << s.error_message();
    EXPECT_FALSE(s.error_message().empty());
    ++refused;
  }
  std::printf("%d hostile requests, %d refused\n", total, refused);
  EXPECT_GT(refused, total * 9 / 10);
  ExpectUntouched();
}

// The tensor channel's raw bytes: a frame header with any fields, then meta.
std::string RawFrame(uint32_t magic, uint32_t kind, uint32_t meta_bytes, uint64_t data_bytes,
                     const std::string& meta) {
  std::string out(tcp::kFrameHeaderBytes, '\0');
  const uint32_t words[4] = {magic, kind, meta_bytes, 0};
  std::memcpy(out.data(), words, sizeof(words));
  std::memcpy(out.data() + 16, &data_bytes, sizeof(data_bytes));
  return out + meta;
}

std::string Frame(tcp::FrameKind kind, const google::protobuf::MessageLite& meta,
                  uint64_t data_bytes = 0) {
  const std::string bytes = meta.SerializeAsString();
  return RawFrame(tcp::kFrameMagic, static_cast<uint32_t>(kind),
                  static_cast<uint32_t>(bytes.size()), data_bytes, bytes);
}

proto::TensorChunk ChunkHead(const std::string& name, std::vector<int64_t> shape,
                             uint64_t total_bytes) {
  proto::TensorChunk c;
  c.set_name(name);
  c.mutable_meta()->set_dtype(proto::DT_FLOAT);
  for (int64_t d : shape) c.mutable_meta()->add_shape(d);
  c.set_total_bytes(total_bytes);
  return c;
}

class HostileChannelRequests : public HostileRequests {
 protected:
  // Sends `bytes` on a new connection to the tensor channel, ends writing,
  // and returns the ps's reply: an Error frame's Status, OK for any other
  // reply, or the connection's error (the ps closed it without a word).
  Status Send(const std::string& bytes) {
    auto socket =
        tcp::Socket::Connect("127.0.0.1", status_before_.tensor_port(), std::chrono::seconds(5));
    if (!socket.ok()) return socket.status();
    (*socket)->SetTimeout(std::chrono::seconds(10));
    PS_RETURN_IF_ERROR(tcp::ReadHello(socket->get()));
    struct iovec iov = {const_cast<char*>(bytes.data()), bytes.size()};
    (void)(*socket)->Write(&iov, 1);  // the ps may refuse (and close) before the end
    (*socket)->CloseWrite();
    auto reply = tcp::ReadFrame(socket->get());
    if (!reply.ok()) return reply.status();
    return reply->kind == tcp::FrameKind::kError ? tcp::ErrorOf(*reply) : OkStatus();
  }

  void ExpectRefused(const std::string& bytes, Code code, const std::string& says) {
    Status s = Send(bytes);
    EXPECT_EQ(s.code(), code) << s.ToString();
    EXPECT_NE(s.message().find(says), std::string::npos) << s.ToString();
  }

  proto::PushHeader ValidHeader() const { return PushHeader().header(); }
};

TEST_F(HostileChannelRequests, FramesThatAreNotAPushOrAPullAreRefused) {
  ASSERT_GT(status_before_.tensor_port(), 0) << "the ps has no tensor channel";
  const std::string header = Frame(tcp::FrameKind::kPushHeader, ValidHeader());
  const uint32_t push = static_cast<uint32_t>(tcp::FrameKind::kPushHeader);
  ExpectRefused(std::string(40, 'x'), Code::kInvalidArgument, "bad magic");
  ExpectRefused(RawFrame(tcp::kFrameMagic, 99, 0, 0, ""), Code::kInvalidArgument,
                "unknown tensor channel frame kind 99");
  ExpectRefused(RawFrame(tcp::kFrameMagic, push, 0x7fffffff, 0, ""), Code::kInvalidArgument,
                "bytes of metadata");
  ExpectRefused(RawFrame(tcp::kFrameMagic, push, 0, 1 << 20, ""), Code::kInvalidArgument,
                "PushHeader frame carrying data");
  ExpectRefused(RawFrame(tcp::kFrameMagic, push, 3, 0, "\xff\xff\xff"), Code::kInvalidArgument,
                "not a valid pstrain.proto.PushHeader");
  proto::PushHeader other = ValidHeader();
  other.set_placement_fingerprint(other.placement_fingerprint() + 1);
  ExpectRefused(Frame(tcp::FrameKind::kPushHeader, other), Code::kFailedPrecondition, "placement");
  ExpectRefused(Frame(tcp::FrameKind::kChunk, ChunkHead("w", {64, 32}, 8192), 8192),
                Code::kInvalidArgument, "cannot start with a Chunk frame");
  // Chunks whose shapes overflow, name nothing the ps holds, or whose data
  // runs past the tensor's end.
  const int64_t huge = int64_t{1} << 62;
  ExpectRefused(header + Frame(tcp::FrameKind::kChunk, ChunkHead("w", {huge, huge}, 0), 16),
                Code::kInvalidArgument, "tensor w");
  ExpectRefused(header + Frame(tcp::FrameKind::kChunk, ChunkHead("nope", {4}, 16), 16),
                Code::kNotFound, "unknown variable nope");
  ExpectRefused(header + Frame(tcp::FrameKind::kChunk, ChunkHead("b", {32}, 128), 1ULL << 40),
                Code::kInvalidArgument, "runs past the end");
  proto::TensorChunk odd = ChunkHead("b", {32}, 63);
  odd.mutable_meta()->set_dtype(proto::DT_BFLOAT16);
  ExpectRefused(header + Frame(tcp::FrameKind::kChunk, odd, 63), Code::kInvalidArgument,
                "bfloat16 chunk of odd or absurd size");
  proto::TensorChunk half = ChunkHead("b", {32}, 64);
  half.mutable_meta()->set_dtype(proto::DT_BFLOAT16);
  ExpectRefused(header + Frame(tcp::FrameKind::kChunk, half, 1ULL << 62), Code::kInvalidArgument,
                "runs past the end");
  proto::PullRequest int64_wire;
  int64_wire.set_placement_fingerprint(placement_.fingerprint);
  int64_wire.set_wire_dtype(proto::DT_INT64);
  ExpectRefused(Frame(tcp::FrameKind::kPullRequest, int64_wire), Code::kInvalidArgument,
                "wire_dtype 9");
  ExpectRefused(header + Frame(tcp::FrameKind::kPullRequest, proto::PullRequest()),
                Code::kInvalidArgument, "a PullRequest frame inside a push");
  // A whole push of one of two gradients, and one that ends in garbage.
  Tensor gb({32});
  gb.Fill(1.0f);
  const std::string chunk_b = Frame(tcp::FrameKind::kChunk, ChunkHead("b", {32}, 128), 128) +
                              std::string(reinterpret_cast<const char*>(gb.data()), 128);
  proto::PushHeader two = ValidHeader();
  two.set_num_tensors(2);
  ExpectRefused(
      Frame(tcp::FrameKind::kPushHeader, two) + chunk_b +
          RawFrame(tcp::kFrameMagic, static_cast<uint32_t>(tcp::FrameKind::kEnd), 0, 0, ""),
      Code::kInvalidArgument, "sent 1 of 2 gradients; nothing applied");
  ExpectRefused(Frame(tcp::FrameKind::kPushHeader, two) + chunk_b + "garbage!garbage!garbage!",
                Code::kInvalidArgument, "bad magic");
  proto::PullRequest pull;
  pull.set_placement_fingerprint(placement_.fingerprint + 1);
  ExpectRefused(Frame(tcp::FrameKind::kPullRequest, pull), Code::kFailedPrecondition, "placement");
  ExpectUntouched();
}

// Thousands of random byte strings, some behind a valid frame header: the
// ps refuses or drops each and stays as it was.
TEST_F(HostileChannelRequests, RandomBytesChangeNothing) {
  ASSERT_GT(status_before_.tensor_port(), 0);
  std::mt19937 rng(1234);
  const std::string prefixes[] = {
      "", Frame(tcp::FrameKind::kPushHeader, ValidHeader()),
      RawFrame(tcp::kFrameMagic, static_cast<uint32_t>(tcp::FrameKind::kPullRequest), 0, 0, ""),
      Frame(tcp::FrameKind::kPushHeader, ValidHeader()) +
          RawFrame(tcp::kFrameMagic, static_cast<uint32_t>(tcp::FrameKind::kChunk), 40, 128, "")};
  for (int i = 0; i < 2000; ++i) {
    std::string bytes = prefixes[i % 4];
    const int n = static_cast<int>(rng() % 200);
    for (int k = 0; k < n; ++k) bytes.push_back(static_cast<char>(rng()));
    (void)Send(bytes);
  }
  ExpectUntouched();
}

}  // namespace
}  // namespace pstrain
