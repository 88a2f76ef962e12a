// gRPC credentials from the task's TLS material (core/tls.h): mutual TLS
// where the task has it, plain TCP where it does not.
#ifndef PSTRAIN_PS_RPC_GRPC_TLS_H_
#define PSTRAIN_PS_RPC_GRPC_TLS_H_

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>

#include <memory>

namespace pstrain {

// A ps's: with TLS, it requires and verifies each client's certificate.
std::shared_ptr<grpc::ServerCredentials> PsServerCredentials();
// A client's: with TLS, it verifies the ps's certificate and presents its own.
std::shared_ptr<grpc::ChannelCredentials> PsChannelCredentials();

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_GRPC_TLS_H_
