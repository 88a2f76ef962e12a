// GenericCall: one streaming call of raw messages (grpc::ByteBuffer) made
// through gRPC's public GenericStub and waited on over a completion queue of
// its own, so that it reads as a blocking call. PsClient sends and receives
// tensor chunks this way, encoded and decoded by chunk_codec.h without
// protobuf copies; the generated blocking stubs take only parsed messages.
//
// Any method can be called so, whatever its kind: a client-streaming
// method's reply is the one message Read returns before Finish.
//
// Thread-compatible: one thread at a time.
#ifndef PSTRAIN_PS_RPC_GENERIC_CALL_H_
#define PSTRAIN_PS_RPC_GENERIC_CALL_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace pstrain {

class GenericCall {
 public:
  // Starts `method` ("/pstrain.proto.Ps/Push") on stub's channel; ctx (its
  // deadline set) must outlive the call.
  GenericCall(grpc::GenericStub* stub, grpc::ClientContext* ctx, const std::string& method);
  // Cancels a call that was not finished, and waits until gRPC is done
  // with it.
  ~GenericCall();

  // False once the call is broken (Finish says why).
  bool Write(const grpc::ByteBuffer& message);
  bool WritesDone();
  // False at the end of the replies, or once the call is broken.
  bool Read(grpc::ByteBuffer* message);
  // The call's status, after Read returned false (or to give up early).
  grpc::Status Finish();

 private:
  // Waits for the operation just started; whether it succeeded.
  bool Await();

  grpc::ClientContext* const ctx_;
  grpc::CompletionQueue cq_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_GENERIC_CALL_H_
