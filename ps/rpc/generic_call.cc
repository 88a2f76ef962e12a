#include "ps/rpc/generic_call.h"

#include <glog/logging.h>

namespace pstrain {

GenericCall::GenericCall(grpc::GenericStub* stub, grpc::ClientContext* ctx,
                         const std::string& method)
    : ctx_(ctx), call_(stub->PrepareCall(ctx, method, &cq_)) {
  call_->StartCall(this);
  started_ = Await();
}

GenericCall::~GenericCall() {
  if (!finished_) {
    ctx_->TryCancel();
    Finish();
  }
  cq_.Shutdown();
  void* tag;
  bool ok;
  while (cq_.Next(&tag, &ok)) {
  }
}

bool GenericCall::Await() {
  void* tag = nullptr;
  bool ok = false;
  // Next fails only after Shutdown, which only the destructor calls.
  CHECK(cq_.Next(&tag, &ok)) << "the call's completion queue shut down";
  return ok;
}

bool GenericCall::Write(const grpc::ByteBuffer& message) {
  if (!started_) return false;
  call_->Write(message, this);
  return Await();
}

bool GenericCall::WritesDone() {
  if (!started_) return false;
  call_->WritesDone(this);
  return Await();
}

bool GenericCall::Read(grpc::ByteBuffer* message) {
  if (!started_) return false;
  call_->Read(message, this);
  return Await();
}

grpc::Status GenericCall::Finish() {
  grpc::Status status;
  call_->Finish(&status, this);
  Await();
  finished_ = true;
  return status;
}

}  // namespace pstrain
