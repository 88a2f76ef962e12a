#include "ps/server/ps_server.h"

#include <glog/logging.h>
#include <grpcpp/grpcpp.h>

#include <chrono>

#include "cluster/cluster_spec.h"
#include "core/tls.h"
#include "ps/rpc/grpc_options.h"
#include "ps/rpc/grpc_tls.h"
#include "ps/rpc/ps_service.h"
#include "ps/tcp/tensor_channel_server.h"

namespace pstrain {

namespace {
// How long a request thread waits for more work before it ends.
constexpr std::chrono::seconds kKeepIdleThread{10};
}  // namespace

PsServer::PsServer(PsCore* core, int request_threads)
    : core_(core), requests_(std::make_unique<ThreadPool>(request_threads, kKeepIdleThread)) {}

StatusOr<std::unique_ptr<PsServer>> PsServer::Start(PsCore* core, const std::string& listen_address,
                                                    int tensor_port,
                                                    const tcp::ChannelLimits* limits,
                                                    int request_threads) {
  const std::string task = "ps:" + std::to_string(core->task_index());
  std::unique_ptr<PsServer> ps(new PsServer(core, request_threads));
  const tcp::ChannelLimits channel_limits = limits != nullptr ? *limits : tcp::ChannelLimits();
  // gRPC's client streams gather under the channel's limits: as much per
  // request, as much in all, and the same longest gap between two parts.
  StreamLimits streams;
  streams.gather_bytes = channel_limits.gather_bytes;
  streams.max_gathered_bytes = channel_limits.max_gathered_bytes;
  streams.idle = channel_limits.frames.idle;
  ps->service_ = std::make_unique<PsService>(core, ps->requests_.get(), streams);
  if (tensor_port >= 0) {
    auto tls = TaskServerSslCtx();  // the same certificates as gRPC's
    if (!tls.ok()) return tls.status().Annotate(task);
    auto channel = tcp::TensorChannelServer::Start(core, ps->requests_.get(),
                                                   cluster::AddressHost(listen_address),
                                                   tensor_port, channel_limits, *tls);
    if (!channel.ok()) return channel.status().Annotate(task);
    ps->channel_ = std::move(channel).value();
    ps->service_->set_tensor_channel(ps->channel_->port(), ps->channel_->local_socket());
  }
  grpc::ServerBuilder builder;
  ConfigureServer(&builder);
  builder.AddListeningPort(listen_address, PsServerCredentials(), &ps->port_);
  builder.RegisterService(ps->service_.get());
  ps->server_ = builder.BuildAndStart();
  if (!ps->server_ || ps->port_ == 0) {
    return Unavailable(task + " cannot listen on " + listen_address +
                       " (is the port taken, or the address not one of this host's?)");
  }
  return ps;
}

PsServer::~PsServer() { Stop(); }

int PsServer::tensor_port() const { return channel_ == nullptr ? 0 : channel_->port(); }

void PsServer::Stop() {
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (channel_ != nullptr) channel_->Stop();
  if (server_ == nullptr) return;  // it never started
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_->Wait();
  requests_->Shutdown();
}

}  // namespace pstrain
