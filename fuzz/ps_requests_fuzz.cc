// Every request a ps serves, through the code that serves it: Init and Push
// streams through the same stream handling as the gRPC service
// (ps/tensor_streams.h), the unary calls through the service's own methods,
// Pull through the core as the service calls it. Each input is a sequence of
// requests (fuzz_input.h's parts) to a ps that holds a small model.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "fuzz/ps_fuzz_model.h"
#include "ps/ps_core.h"
#include "ps/rpc/ps_service.h"
#include "ps/tensor_streams.h"
#include "ps/variable_store.h"

namespace pstrain {
namespace fuzz {
namespace {

// Next() parses the stream's messages from the given serialized ones.
template <typename Request>
NextMessage<Request> FromMessages(const std::vector<std::string>& messages) {
  auto pos = std::make_shared<size_t>(0);
  return [messages, pos](Request* r) -> StatusOr<bool> {
    if (*pos >= messages.size()) return false;
    r->Clear();
    if (!r->ParseFromString(messages[(*pos)++])) return InvalidArgument("does not parse");
    return true;
  };
}

// A unary request through the service's own method, when it parses.
template <typename Request, typename Response>
void CallUnary(const std::string& bytes, PsService* service,
               grpc::Status (PsService::*method)(grpc::ServerContext*, const Request*, Response*)) {
  Request request;
  Response response;
  grpc::ServerContext ctx;
  if (request.ParseFromString(bytes)) (void)(service->*method)(&ctx, &request, &response);
}

void Serve(Parts* in, PsCore* core, PsService* service) {
  const uint8_t op = in->Byte() % kNumOps;
  if (op == kInit || op == kPush) {
    std::vector<std::string> messages(in->Byte() % 8);
    for (std::string& m : messages) m = in->Next();
    if (op == kInit) {
      (void)HandleInitStream(core, FromMessages<proto::InitRequest>(messages));
    } else {
      (void)HandlePushStream(core, FromMessages<proto::PushRequest>(messages));
    }
    return;
  }
  const std::string bytes = in->Next();
  switch (op) {
    case kPull: {
      proto::PullRequest r;
      if (!r.ParseFromString(bytes)) return;
      // No waiting: a fuzz input that asks for a later step gets the timeout.
      (void)core->Pull(r.placement_fingerprint(), {r.names().begin(), r.names().end()},
                       r.include_state(), r.min_step(), std::chrono::system_clock::now(),
                       [] { return false; });
      return;
    }
    case kHeartbeat:
      return CallUnary(bytes, service, &PsService::Heartbeat);
    case kWorkerDone:
      return CallUnary(bytes, service, &PsService::WorkerDone);
    case kSetLiveWorkers:
      return CallUnary(bytes, service, &PsService::SetLiveWorkers);
    case kEndTraining:
      return CallUnary(bytes, service, &PsService::EndTraining);
    default:
      return CallUnary(bytes, service, &PsService::GetStatus);
  }
}

}  // namespace
}  // namespace fuzz
}  // namespace pstrain

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pstrain;
  VariableStore store(16 << 20);
  PsCore core(0, 1, &store, [](const std::string&) {});
  PsService service(&core);
  if (!HandleInitStream(
           &core, fuzz::FromMessages<proto::InitRequest>(fuzz::StreamMessages(/*push=*/false)))
           .ok()) {
    __builtin_trap();  // the fixed model must always load
  }
  fuzz::Parts in(data, size);
  for (int requests = 0; requests < 64 && !in.done(); ++requests) fuzz::Serve(&in, &core, &service);
  return 0;
}
