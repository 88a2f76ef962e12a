// The one place where pstrain::Status and grpc::Status convert. Codes share
// their numbers, so the conversion keeps the code and the message.
#ifndef PSTRAIN_PS_RPC_GRPC_STATUS_H_
#define PSTRAIN_PS_RPC_GRPC_STATUS_H_

#include <grpcpp/grpcpp.h>

#include <string>

#include "core/status.h"

namespace pstrain {

inline grpc::Status ToGrpcStatus(const Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), s.message());
}

// `peer` names the other side ("ps:1 (localhost:2222)") in the message.
inline Status FromGrpcStatus(const grpc::Status& s, const std::string& peer) {
  if (s.ok()) return OkStatus();
  return Status(static_cast<Code>(s.error_code()), peer + ": " + s.error_message());
}

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_GRPC_STATUS_H_
