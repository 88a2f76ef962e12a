// A ps's handling of an Init or Push stream, apart from the transport: a
// header, then tensor chunks, each message checked as it is read. The core
// sees the tensors only when the whole stream has been read and found valid,
// so a stream that ends in garbage, is cut short or breaks any rule changes
// nothing. The gRPC service and the fuzz targets (fuzz/) both come here.
#ifndef PSTRAIN_PS_TENSOR_STREAMS_H_
#define PSTRAIN_PS_TENSOR_STREAMS_H_

#include <functional>

#include "core/status.h"
#include "proto/ps.pb.h"
#include "ps/ps_core.h"

namespace pstrain {

// Parses the stream's next message into its argument: true, false at the
// stream's clean end, or the error of a message that does not parse or of a
// stream that broke off.
template <typename Request>
using NextMessage = std::function<StatusOr<bool>(Request*)>;

// Errors are annotated "Init: ..." and "Push: ..." as the client sees them.
Status HandleInitStream(PsCore* core, const NextMessage<proto::InitRequest>& next);
StatusOr<proto::PushResponse> HandlePushStream(PsCore* core,
                                               const NextMessage<proto::PushRequest>& next);

}  // namespace pstrain

#endif  // PSTRAIN_PS_TENSOR_STREAMS_H_
