#include "ps/ps_server.h"

#include <glog/logging.h>

#include <chrono>
#include <random>

#include "cluster/cluster_spec.h"
#include "core/tls.h"
#include "ps/rpc/grpc_tls.h"

namespace pstrain {

void ConfigureMessageSizes(grpc::ServerBuilder* builder) {
  builder->SetMaxReceiveMessageSize(64 << 20);
  builder->SetMaxSendMessageSize(64 << 20);
}

grpc::ChannelArguments DefaultChannelArguments() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  // Reconnect quickly after a peer restarts instead of gRPC's 1 s..120 s back-off.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  return args;
}

PsServer::PsServer(uint64_t incarnation, uint64_t max_bytes)
    : incarnation_(incarnation), store_(max_bytes) {}

StatusOr<std::unique_ptr<PsServer>> PsServer::Start(const std::string& listen_address,
                                                    int task_index,
                                                    StopNotice* shutdown_requested,
                                                    uint64_t max_bytes, int tensor_port,
                                                    const tcp::ChannelLimits& limits) {
  std::random_device rd;
  const uint64_t incarnation = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  std::unique_ptr<PsServer> ps(new PsServer(incarnation, max_bytes));
  ps->core_ = std::make_unique<PsCore>(
      task_index, incarnation, &ps->store_,
      [shutdown_requested](const std::string& reason) { shutdown_requested->Notify(reason); });
  ps->service_ = std::make_unique<PsService>(ps->core_.get());
  if (tensor_port >= 0) {
    auto tls = TaskServerSslCtx();  // the same certificates as gRPC's
    if (!tls.ok()) return tls.status().Annotate("ps:" + std::to_string(task_index));
    auto channel = tcp::TensorChannelServer::Start(
        ps->core_.get(), cluster::AddressHost(listen_address), tensor_port, limits, *tls);
    if (!channel.ok()) return channel.status().Annotate("ps:" + std::to_string(task_index));
    ps->channel_ = std::move(channel).value();
    ps->service_->set_tensor_channel(ps->channel_->port(), ps->channel_->local_socket());
  }
  grpc::ServerBuilder builder;
  ConfigureMessageSizes(&builder);
  grpc::ResourceQuota quota("ps:" + std::to_string(task_index));
  quota.SetMaxThreads(kMaxThreads);
  builder.SetResourceQuota(quota);
  builder.AddListeningPort(listen_address, PsServerCredentials(), &ps->port_);
  builder.RegisterService(ps->service_.get());
  ps->server_ = builder.BuildAndStart();
  if (!ps->server_ || ps->port_ == 0) {
    return Unavailable("ps:" + std::to_string(task_index) + " cannot listen on " +
                       listen_address);
  }
  return ps;
}

PsServer::~PsServer() { Stop(); }

void PsServer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (channel_ != nullptr) channel_->Stop();
  if (server_ == nullptr) return;  // it never started
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_->Wait();
}

}  // namespace pstrain
