// Every request a ps serves, through the code that serves it: Init and Push
// streams as the gRPC service reads them (each message's bytes through
// ps/rpc/chunk_codec.h, the stream through ps/tensor_streams.h), the unary
// calls and Pull through the service's own methods (Pull's reply decoded
// again as the client does), a table's export and the blocks of a restore
// through the core. The ps holds an embedding table, so pushes and pulls
// may carry keys and rows. Each input is a sequence of requests
// (fuzz_input.h's parts) to a ps that holds a small model.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "fuzz/ps_fuzz_model.h"
#include "ps/ps_core.h"
#include "ps/rpc/chunk_codec.h"
#include "ps/rpc/ps_service.h"
#include "ps/rpc/unparsed_stream.h"
#include "ps/tensor_streams.h"
#include "ps/variable_store.h"

namespace pstrain {
namespace fuzz {
namespace {

// gRPC's bytes of a message, split in two slices where the input says, as
// the transport may hand them over.
grpc::ByteBuffer ToBuffer(const std::string& bytes, size_t split) {
  split = bytes.empty() ? 0 : split % bytes.size();
  grpc::Slice slices[2] = {grpc::Slice(bytes.data(), split),
                           grpc::Slice(bytes.data() + split, bytes.size() - split)};
  return grpc::ByteBuffer(slices, 2);
}

// The stream's parts, decoded from the given messages as the service does.
template <typename Request, typename Header>
NextPart<Header> FromMessages(const std::vector<std::string>& messages, size_t split) {
  auto pos = std::make_shared<size_t>(0);
  return
      [messages, pos, split](Header* header, TensorAssembler* assembler) -> StatusOr<StreamPart> {
        if (*pos >= messages.size()) return StreamPart::kEnd;
        grpc::ByteBuffer buffer = ToBuffer(messages[(*pos)++], split);
        return DecodeStreamPart<Request>(&buffer, header, assembler);
      };
}

// Pull's reply, decoded as PsClient decodes it.
class ReplyDecoder {
 public:
  bool Write(const grpc::ByteBuffer& msg) {
    grpc::ByteBuffer copy = msg;
    proto::PullResponse rest;
    if (!DecodeChunkMessage(&copy, proto::PullResponse::kChunkFieldNumber, &rest, &assembler_)
             .ok()) {
      __builtin_trap();  // the ps's own reply must always decode
    }
    return true;
  }

 private:
  TensorAssembler assembler_;
};

// A control request, when it parses, to the core as the service hands it
// over (the service only copies fields: PsService's control calls).
template <typename Request>
void CallUnary(const std::string& bytes, const std::function<void(const Request&)>& call) {
  Request request;
  if (request.ParseFromString(bytes)) call(request);
}

void Serve(Parts* in, PsCore* core, PsService* service) {
  const uint8_t op = in->Byte() % kNumOps;
  if (op == kInit || op == kPush) {
    std::vector<std::string> messages(in->Byte() % 8);
    const size_t split = in->Byte();
    for (std::string& m : messages) m = in->Next();
    if (op == kInit) {
      (void)HandleInitStream(core,
                             FromMessages<proto::InitRequest, proto::InitHeader>(messages, split));
    } else {
      (void)HandlePushStream(core,
                             FromMessages<proto::PushRequest, proto::PushHeader>(messages, split));
    }
    return;
  }
  const std::string bytes = in->Next();
  switch (op) {
    case kPull: {
      proto::PullRequest r;
      if (!r.ParseFromString(bytes)) return;
      // Next to no waiting: one that asks for a later step gets the timeout.
      r.set_wait_deadline_ms(1);
      ReplyDecoder decoder;
      (void)service->ServePull(
          r, std::chrono::system_clock::time_point::max(), [] { return false; },
          [&decoder](const grpc::ByteBuffer& message) { return decoder.Write(message); });
      return;
    }
    case kHeartbeat:
      return CallUnary<proto::HeartbeatRequest>(bytes, [core](const proto::HeartbeatRequest& r) {
        (void)core->Heartbeat(r.worker(), r.local_step(), r.loss());
      });
    case kWorkerDone:
      return CallUnary<proto::WorkerDoneRequest>(bytes, [core](const proto::WorkerDoneRequest& r) {
        (void)core->WorkerDone(r.worker(), r.failure());
      });
    case kSetLiveWorkers:
      return CallUnary<proto::SetLiveWorkersRequest>(
          bytes, [core](const proto::SetLiveWorkersRequest& r) {
            (void)core->SetLiveWorkers({r.workers().begin(), r.workers().end()});
          });
    case kEndTraining:
      return CallUnary<proto::EndTrainingRequest>(
          bytes,
          [core](const proto::EndTrainingRequest& r) { (void)core->EndTraining(r.reason()); });
    case kExportRows: {
      proto::ExportRowsRequest r;
      if (!r.ParseFromString(bytes)) return;
      (void)core->ExportRows(r, [](const proto::ExportRowsResponse&) { return true; });
      return;
    }
    case kImportRows: {
      proto::RowBlock block;
      if (!block.ParseFromString(bytes)) return;
      proto::ImportRowsResponse response;
      (void)core->ImportRows(kFingerprint, block, &response);
      return;
    }
    default:
      return CallUnary<proto::StatusRequest>(
          bytes, [core](const proto::StatusRequest&) { (void)core->GetStatus(); });
  }
}

}  // namespace
}  // namespace fuzz
}  // namespace pstrain

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pstrain;
  fuzz::FuzzPs ps;
  ThreadPool requests(4, std::chrono::seconds(1));
  PsService service(&ps.core, &requests);
  fuzz::Parts in(data, size);
  for (int requests = 0; requests < 64 && !in.done(); ++requests) {
    fuzz::Serve(&in, &ps.core, &service);
  }
  return 0;
}
