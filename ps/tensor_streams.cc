#include "ps/tensor_streams.h"

#include <string>
#include <utility>

namespace pstrain {

namespace {

// Reads the header, which must come first.
template <typename Header>
Status ReadHeader(const NextPart<Header>& next, Header* header) {
  PS_ASSIGN_OR_RETURN(StreamPart part, next(header, nullptr));
  if (part != StreamPart::kHeader) return InvalidArgument("the first message must be the header");
  return OkStatus();
}

// Reads every chunk after the header into *assembler, to the stream's end.
template <typename Header>
Status ReadChunks(const NextPart<Header>& next, TensorAssembler* assembler) {
  for (;;) {
    Header ignored;
    PS_ASSIGN_OR_RETURN(StreamPart part, next(&ignored, assembler));
    switch (part) {
      case StreamPart::kEnd:
        return OkStatus();
      case StreamPart::kChunk:
        break;
      case StreamPart::kHeader:
        return InvalidArgument("a second header");
      case StreamPart::kNeither:
        return InvalidArgument("a message with neither header nor chunk");
    }
  }
}

}  // namespace

Status HandleInitStream(PsCore* core, const NextPart<proto::InitHeader>& next) {
  proto::InitHeader header;
  PS_RETURN_IF_ERROR(ReadHeader(next, &header).Annotate("Init"));
  PS_RETURN_IF_ERROR(core->CheckInitHeader(header).Annotate("Init"));
  TensorAssembler assembler(core->InitLimits(header));
  PS_RETURN_IF_ERROR(ReadChunks(next, &assembler).Annotate("Init"));
  auto values = assembler.Finish();
  if (!values.ok()) return values.status().Annotate("Init");
  return core->Init(header, std::move(values).value()).Annotate("Init");
}

namespace {

StatusOr<proto::PushResponse> ReadAndPush(PsCore* core, const NextPart<proto::PushHeader>& next,
                                          ClientMemory client) {
  proto::PushHeader header;
  PS_RETURN_IF_ERROR(ReadHeader(next, &header).Annotate("Push"));
  PS_RETURN_IF_ERROR(core->CheckPushHeader(header).Annotate("Push"));
  // Only gradients of this ps's variables, each of its variable's shape, are
  // ever allocated.
  TensorAssembler assembler(core->PushLimits(header));
  Status read = ReadChunks(next, &assembler);
  if (!read.ok()) {
    return read.Annotate("Push from worker:" + std::to_string(header.worker()) +
                         "; nothing applied");
  }
  auto grads = assembler.Finish();
  if (!grads.ok()) return grads.status().Annotate("Push");
  auto pushed = core->Push(header, std::move(grads).value(), client);
  if (!pushed.ok()) return pushed.status().Annotate("Push");
  if (core->DropPushReply(header)) {
    return Unavailable("Push: the answer was dropped after the ps applied it (a test's fault)");
  }
  return pushed;
}

}  // namespace

StatusOr<proto::PushResponse> HandlePushStream(PsCore* core,
                                               const NextPart<proto::PushHeader>& next,
                                               ClientMemory client) {
  auto pushed = ReadAndPush(core, next, client);
  if (!pushed.ok()) core->CountRefusedPush();
  return pushed;
}

}  // namespace pstrain
