// Mutual TLS against a live ps_server process: a client with the cluster's
// certificates trains against it over gRPC and the tensor channel; a client
// with no certificate, with one from another CA, with an expired one, or
// with no TLS at all is refused on both, the refusal is in the ps's log, and
// the ps goes on serving. A whole local cluster trains with --tls (its
// chief's endpoint on HTTPS), and scripts/make_certs.sh makes certificates
// the tasks accept.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/descriptor_limit.h"
#include "core/testing/status_assertions.h"
#include "core/tls.h"
#include "core/tls_certs.h"
#include "proto/ps.grpc.pb.h"
#include "ps/client/ps_fleet.h"
#include "ps/rpc/grpc_options.h"
#include "ps/rpc/ps_connections.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_channel_client.h"
#include "ps/tcp/tls_stream.h"
#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

using testing::BuildDir;
using testing::RunningTask;

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

class TlsPs : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = MakeCa("test CA");
    auto other_ca = MakeCa("another CA");
    ASSERT_TRUE(ca.ok() && other_ca.ok());
    ca_ = *ca;
    auto ps = MakeCert(ca_, {"ps:0", {"127.0.0.1"}});
    auto worker = MakeCert(ca_, {"worker:0", {"127.0.0.1"}});
    auto stranger = MakeCert(*other_ca, {"stranger", {"127.0.0.1"}});
    auto expired = MakeCert(ca_, {"expired", {"127.0.0.1"}, -7200, 3600});
    ASSERT_TRUE(ps.ok() && worker.ok() && stranger.ok() && expired.ok());
    worker_ = *worker;
    stranger_ = *stranger;
    expired_ = *expired;
    const std::string dir = dir_.path();
    Write(dir + "/ca.crt", ca_.cert_pem);
    Write(dir + "/ps.crt", ps->cert_pem);
    Write(dir + "/ps.key", ps->key_pem);

    spec_ = testing::MakeLocalSpec(dir, 1, 1);
    std::vector<std::string> argv = {BuildDir() + "/ps/ps_server",
                                     "--cluster_spec=" + spec_.path,
                                     "--job=ps",
                                     "--task=0",
                                     "--tls_cert=" + dir + "/ps.crt",
                                     "--tls_key=" + dir + "/ps.key",
                                     "--tls_ca=" + dir + "/ca.crt"};
    for (const std::string& flag : PsFlags()) argv.push_back(flag);
    ps_ = std::make_unique<RunningTask>("ps:0", argv);
    // This process is the worker, with the cluster's certificates.
    TlsFiles files{worker_.cert_pem, worker_.key_pem, ca_.cert_pem, ""};
    SetTaskTls(&files);
    vars_ = {{"w", {256, 64}}, {"b", {64}}};
    placement_ = *cluster::ComputePlacement(vars_, 1, cluster::PlacementStrategy::kGreedy, 1 << 20);
    fleet_ = ConnectFleet(spec_.spec, {vars_, placement_, {}, {}});
    ASSERT_TRUE(fleet_->WaitForPs(false, nullptr, std::chrono::seconds(30)).ok()) << ps_->output();
    proto::StatusResponse status;
    PS_ASSERT_OK(Stub(TrustedCredentials())->GetStatus(Context().get(), {}, &status));
    tensor_port_ = status.tensor_port();
    ASSERT_GT(tensor_port_, 0);
  }

  // Flags the ps starts with besides the cluster's and the certificates.
  virtual std::vector<std::string> PsFlags() const { return {}; }

  void TearDown() override {
    if (fleet_) (void)fleet_->ShutdownAll("test done");
    if (ps_) ps_->WaitForExit(std::chrono::seconds(20));
    SetTaskTls(nullptr);
  }

  static std::unique_ptr<grpc::ClientContext> Context() {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return ctx;
  }
  std::unique_ptr<proto::Ps::Stub> Stub(std::shared_ptr<grpc::ChannelCredentials> creds) {
    return proto::Ps::NewStub(grpc::CreateChannel(spec_.spec.Address("ps", 0), creds));
  }
  std::shared_ptr<grpc::ChannelCredentials> Credentials(const CertAndKey* cert) {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = ca_.cert_pem;
    if (cert != nullptr) {
      options.pem_private_key = cert->key_pem;
      options.pem_cert_chain = cert->cert_pem;
    }
    return grpc::SslCredentials(options);
  }
  std::shared_ptr<grpc::ChannelCredentials> TrustedCredentials() { return Credentials(&worker_); }

  // A TLS connection to the tensor channel presenting `cert` (none: null);
  // the handshake's result as the client sees it.
  Status TensorChannelHandshake(const CertAndKey* cert) {
    SslCtx ctx(SSL_CTX_new(TLS_client_method()));
    BIO* bio = BIO_new_mem_buf(ca_.cert_pem.data(), static_cast<int>(ca_.cert_pem.size()));
    X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx.get()), ca);
    X509_free(ca);
    BIO_free(bio);
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    if (cert != nullptr) {
      TlsFiles files{cert->cert_pem, cert->key_pem, ca_.cert_pem, ""};
      auto client = MakeClientSslCtx(files);
      if (!client.ok()) return client.status();
      ctx = std::move(client).value();
    }
    auto socket = tcp::Socket::Connect("127.0.0.1", tensor_port_, std::chrono::seconds(5));
    if (!socket.ok()) return socket.status();
    (*socket)->SetTimeout(std::chrono::seconds(5));
    auto tls = tcp::TlsStream::Connect(ctx.get(), socket->get(), "127.0.0.1");
    if (!tls.ok()) return tls.status();
    // TLS 1.3 finishes the client's handshake before the server checks the
    // client's certificate: the refusal shows on the first exchange.
    tcp::FrameBatch batch;
    proto::PullRequest pull;
    batch.Add(tcp::FrameKind::kPullRequest, &pull);
    PS_RETURN_IF_ERROR(batch.WriteTo(tls->get()));
    return tcp::ReadFrame(tls->get()).status();
  }

  // Sets the variables up for pushes: w = 1, b = 0, plain descent at 0.5.
  void InitVariables() {
    proto::InitHeader header;
    header.mutable_optimizer()->set_name("GradientDescent");
    header.mutable_optimizer()->set_learning_rate(0.5f);
    header.set_num_workers(1);
    std::vector<Tensor> init = {Tensor({256, 64}), Tensor({64})};
    init[0].Fill(1.0f);
    PS_ASSERT_OK(fleet_->InitVariables(init, header));
  }

  // A new TLS connection of a trusted worker to the tensor channel (no
  // gRPC to fall back on): a push of gradients 2 and a pull, each within
  // `limit`; the step the pull saw.
  StatusOr<int64_t> PushAndPullOverTheChannel(std::chrono::milliseconds limit) {
    TlsFiles files{worker_.cert_pem, worker_.key_pem, ca_.cert_pem, ""};
    PS_ASSIGN_OR_RETURN(auto ctx, MakeClientSslCtx(files));
    tcp::TensorChannelClient channel("127.0.0.1", tensor_port_, "", std::move(ctx));
    proto::PushHeader header;
    header.set_placement_fingerprint(placement_.fingerprint);
    header.set_increment_global_step(true);
    header.set_num_tensors(2);
    Tensor w({256, 64}), b({64});
    w.Fill(2.0f);
    b.Fill(2.0f);
    PS_RETURN_IF_ERROR(
        channel.Push(header, {{"w", &w}, {"b", &b}}, proto::DT_FLOAT, limit).status());
    proto::PullRequest pull;
    pull.set_placement_fingerprint(placement_.fingerprint);
    std::map<std::string, Tensor> out;
    int64_t step = -1;
    PS_RETURN_IF_ERROR(channel.Pull(pull, &out, &step, limit));
    return step;
  }

  // n connections to the tensor port: every other one sends nothing, the
  // rest the first bytes of a TLS ClientHello (a handshake begun), then
  // nothing.
  std::vector<std::unique_ptr<tcp::Socket>> OpenSilent(int n, bool all_begun = false) {
    // A handshake record's header announcing 512 bytes, and the message's
    // type (ClientHello): the ps waits for the rest.
    const char hello_begun[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01};
    std::vector<std::unique_ptr<tcp::Socket>> sockets;
    for (int i = 0; i < n; ++i) {
      auto s = tcp::Socket::Connect("127.0.0.1", tensor_port_, std::chrono::seconds(5));
      EXPECT_TRUE(s.ok()) << i << ": " << s.status().ToString();
      if (!s.ok()) break;
      if (all_begun || i % 2 == 1) {
        struct iovec part = {const_cast<char*>(hello_begun), sizeof(hello_begun)};
        EXPECT_TRUE((*s)->Write(&part, 1).ok()) << i;
      }
      sockets.push_back(std::move(s).value());
    }
    return sockets;
  }

  // The ps is alive and serves a trusted client.
  void ExpectServing() {
    proto::StatusResponse status;
    PS_EXPECT_OK(Stub(TrustedCredentials())->GetStatus(Context().get(), {}, &status));
    EXPECT_TRUE(ps_->running()) << ps_->output();
  }

  testing::TempDir dir_{"tls"};
  testing::LocalSpec spec_;
  CertAndKey ca_, worker_, stranger_, expired_;
  std::unique_ptr<RunningTask> ps_;
  std::vector<cluster::VariableInfo> vars_;
  cluster::Placement placement_;
  std::unique_ptr<PsFleet> fleet_;
  int tensor_port_ = 0;
};

TEST_F(TlsPs, TheClustersCertificatesTrainOverGrpcAndTheTensorChannel) {
  ASSERT_NO_FATAL_FAILURE(InitVariables());
  std::vector<Tensor> grads = {Tensor({256, 64}), Tensor({64})};
  grads[0].Fill(2.0f);
  PS_ASSERT_OK(fleet_->PushGradients(grads, 0, 1, {0}, /*sync=*/false));
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet_->PullVariables(&values, &steps));
  EXPECT_EQ(steps[0], 1);
  EXPECT_EQ(values[0][0], 0.0f);  // 1 - 0.5 * 2
  EXPECT_EQ(ps_->output().find("refused"), std::string::npos) << ps_->output();
}

TEST_F(TlsPs, GrpcRefusesClientsWithoutTheCasCertificate) {
  struct Case {
    const char* what;
    std::shared_ptr<grpc::ChannelCredentials> creds;
  } cases[] = {{"no certificate", Credentials(nullptr)},
               {"another CA's", Credentials(&stranger_)},
               {"an expired one", Credentials(&expired_)},
               {"no TLS", grpc::InsecureChannelCredentials()}};
  for (const Case& c : cases) {
    proto::StatusResponse status;
    const grpc::Status s = Stub(c.creds)->GetStatus(Context().get(), {}, &status);
    EXPECT_FALSE(s.ok()) << c.what;
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << c.what << ": " << s.error_message();
  }
  ExpectServing();
  // gRPC logs each failed handshake.
  EXPECT_NE(ps_->output().find("Handshake failed"), std::string::npos) << ps_->output();
}

TEST_F(TlsPs, TheTensorChannelRefusesClientsWithoutTheCasCertificateAndLogsIt) {
  const CertAndKey* cases[] = {nullptr, &stranger_, &expired_};
  const char* names[] = {"no certificate", "another CA's", "an expired one"};
  for (int i = 0; i < 3; ++i) {
    const Status s = TensorChannelHandshake(cases[i]);
    SCOPED_TRACE(::testing::Message() << names[i]);
    PS_EXPECT_CODE(s, Code::kUnavailable);  // the handshake refused: the channel closed
  }
  // Plain TCP: the ps reads no TLS handshake and hangs up.
  auto socket = tcp::Socket::Connect("127.0.0.1", tensor_port_, std::chrono::seconds(5));
  PS_ASSERT_OK(socket);
  (*socket)->SetTimeout(std::chrono::seconds(5));
  tcp::FrameBatch batch;
  proto::PullRequest pull;
  batch.Add(tcp::FrameKind::kPullRequest, &pull);
  (void)batch.WriteTo(socket->get());
  PS_EXPECT_CODE(tcp::ReadFrame(socket->get()), Code::kUnavailable);  // hung up
  ExpectServing();
  const std::string log = ps_->output();
  size_t refusals = 0;
  for (size_t at = log.find("tensor channel: refused a connection"); at != std::string::npos;
       at = log.find("tensor channel: refused a connection", at + 1)) {
    ++refusals;
  }
  EXPECT_EQ(refusals, 4u) << log;
  EXPECT_NE(log.find("certificate"), std::string::npos) << log;
}

// Connections to the tensor port that send nothing, or a TLS handshake's
// first bytes and then nothing, hold no thread of the ps (the event loop
// moves each handshake on as its bytes come): while 512 are open, a new
// worker with the cluster's certificates connects, pushes and pulls within
// half the 10 s the ps gives each handshake, and the ps stays under 64
// threads.
TEST_F(TlsPs, SilentConnectionsDelayNoNewClient) {
  if (RaiseDescriptorLimit() < 2048) GTEST_SKIP() << "too few descriptors here";
  ASSERT_NO_FATAL_FAILURE(InitVariables());
  auto silent = OpenSilent(512);
  ASSERT_EQ(silent.size(), 512u);
  auto step = PushAndPullOverTheChannel(std::chrono::milliseconds(5000));
  ASSERT_TRUE(step.ok()) << step.status().ToString() << "\n" << ps_->output();
  EXPECT_EQ(*step, 1);
  const int threads = testing::ThreadsOf(ps_.get());
  EXPECT_GT(threads, 0);
  EXPECT_LT(threads, 64);
  ExpectServing();
}

class TlsPsFewHandshakes : public TlsPs {
 protected:
  std::vector<std::string> PsFlags() const override { return {"--tensor_max_handshakes=8"}; }
};

// Past the cap on handshakes under way, the one that has waited longest
// for its client is dropped, well before its 10 s deadline, and a new
// client is served.
TEST_F(TlsPsFewHandshakes, PastTheCapTheIdlestHandshakeIsDropped) {
  ASSERT_NO_FATAL_FAILURE(InitVariables());
  auto begun = OpenSilent(32, /*all_begun=*/true);
  ASSERT_EQ(begun.size(), 32u);
  // The first 8 began long before the last 8, which dropped them.
  for (int i = 0; i < 8; ++i) {
    begun[i]->SetTimeout(std::chrono::seconds(5));
    char byte;
    SCOPED_TRACE(::testing::Message() << "connection " << i << " of the first 8");
    PS_EXPECT_CODE(begun[i]->ReadFull(&byte, 1), Code::kUnavailable);  // closed by the ps
  }
  auto step = PushAndPullOverTheChannel(std::chrono::milliseconds(5000));
  ASSERT_TRUE(step.ok()) << step.status().ToString() << "\n" << ps_->output();
  EXPECT_EQ(*step, 1);
}

TEST(MakeCerts, MakesCertificatesTheTasksAcceptUnderOneCa) {
  testing::TempDir dir("make_certs");
  const std::string script = std::string(PSTRAIN_SOURCE_DIR) + "/scripts/make_certs.sh";
  std::string output;
  ASSERT_EQ(testing::RunToCompletion(
                {"/bin/bash", script, dir.path(), "ps=127.0.0.1,localhost", "worker=10.0.0.7"},
                std::chrono::seconds(60), &output),
            "exit code 0")
      << output;
  // Again, with another name: the same CA signs it.
  ASSERT_EQ(testing::RunToCompletion({"/bin/bash", script, dir.path(), "chief=127.0.0.1"},
                                     std::chrono::seconds(60), &output),
            "exit code 0")
      << output;
  for (const char* name : {"ps", "worker", "chief"}) {
    const std::string stem = dir.path() + "/" + name;
    auto files = LoadTlsFiles(stem + ".crt", stem + ".key", dir.path() + "/ca.crt");
    EXPECT_TRUE(files.ok()) << name << ": " << files.status().ToString();
  }
  EXPECT_NE(testing::RunToCompletion({"/bin/bash", script, dir.path(), "no-hosts"},
                                     std::chrono::seconds(60), &output),
            "exit code 0");
}

TEST(TlsCluster, TrainsWithTheLaunchersCertificates) {
  testing::TempDir dir("tls_cluster");
  std::string output;
  const std::string exit = testing::RunToCompletion(
      {BuildDir() + "/deploy/pstrain_local", "--ps=2", "--workers=1", "--tls", "--model=mnist",
       "--max_steps=60", "--learning_rate=0.05", "--train_examples=10000", "--http_port=0",
       "--train_dir=" + dir.path() + "/train"},
      std::chrono::seconds(240), &output);
  ASSERT_EQ(exit, "exit code 0") << output;
  EXPECT_NE(output.find("mutual TLS on every channel"), std::string::npos);
  EXPECT_NE(output.find("[ps:1] "), std::string::npos);
  EXPECT_NE(output.find("mutual TLS as /CN=worker:0"), std::string::npos) << output;
  EXPECT_NE(output.find("final: step 60, test accuracy"), std::string::npos) << output;
  EXPECT_NE(output.find("status page: https://127.0.0.1:"), std::string::npos) << output;
  EXPECT_EQ(output.find("refused"), std::string::npos) << output;
}

}  // namespace
}  // namespace pstrain
