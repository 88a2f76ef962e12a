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
#include "ps/tensor_chunks.h"

namespace pstrain {

// What one message of a stream held.
enum class StreamPart { kEnd, kHeader, kChunk, kNeither };

// Reads the stream's next message: a header into *header, a chunk into
// *assembler (null until the header has been read: a chunk is then only
// reported). kEnd at the stream's clean end; the error of a message that
// does not parse, of a chunk the assembler refuses, or of a stream that
// broke off.
template <typename Header>
using NextPart = std::function<StatusOr<StreamPart>(Header* header, TensorAssembler* assembler)>;

// Errors are annotated "Init: ..." and "Push: ..." as the client sees them.
Status HandleInitStream(PsCore* core, const NextPart<proto::InitHeader>& next);
// `client`: the client's memory the transport maps, for the push's
// arena_rooms (PsCore::Push).
StatusOr<proto::PushResponse> HandlePushStream(PsCore* core,
                                               const NextPart<proto::PushHeader>& next,
                                               ClientMemory client = {});

}  // namespace pstrain

#endif  // PSTRAIN_PS_TENSOR_STREAMS_H_
