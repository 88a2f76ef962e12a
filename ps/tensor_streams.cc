#include "ps/tensor_streams.h"

#include <string>
#include <utility>

#include "ps/tensor_chunks.h"

namespace pstrain {

Status HandleInitStream(PsCore* core, const NextMessage<proto::InitRequest>& next) {
  proto::InitRequest request;
  auto read = next(&request);
  if (!read.ok()) return read.status().Annotate("Init");
  if (!*read || !request.has_header()) {
    return InvalidArgument("Init: the first message must be the header");
  }
  const proto::InitHeader header = request.header();
  PS_RETURN_IF_ERROR(core->CheckInitHeader(header).Annotate("Init"));
  TensorAssembler assembler(core->InitLimits(header));
  for (;;) {
    read = next(&request);
    if (!read.ok()) return read.status().Annotate("Init");
    if (!*read) break;
    if (!request.has_chunk()) return InvalidArgument("Init: a second header");
    PS_RETURN_IF_ERROR(assembler.Add(request.chunk()).Annotate("Init"));
  }
  auto values = assembler.Finish();
  if (!values.ok()) return values.status().Annotate("Init");
  return core->Init(header, std::move(values).value()).Annotate("Init");
}

StatusOr<proto::PushResponse> HandlePushStream(PsCore* core,
                                               const NextMessage<proto::PushRequest>& next) {
  proto::PushRequest request;
  auto read = next(&request);
  if (!read.ok()) return read.status().Annotate("Push");
  if (!*read || !request.has_header()) {
    return InvalidArgument("Push: the first message must be the header");
  }
  const proto::PushHeader header = request.header();
  PS_RETURN_IF_ERROR(core->CheckPushHeader(header).Annotate("Push"));
  // Only gradients of this ps's variables, each of its variable's shape, are
  // ever allocated.
  TensorAssembler assembler(core->PushLimits());
  for (;;) {
    read = next(&request);
    if (!read.ok()) {
      return read.status().Annotate("Push from worker:" + std::to_string(header.worker()) +
                                    "; nothing applied");
    }
    if (!*read) break;
    if (!request.has_chunk()) return InvalidArgument("Push: a second header");
    PS_RETURN_IF_ERROR(assembler.Add(request.chunk()).Annotate("Push"));
  }
  auto grads = assembler.Finish();
  if (!grads.ok()) return grads.status().Annotate("Push");
  auto pushed = core->Push(header, std::move(grads).value());
  if (!pushed.ok()) return pushed.status().Annotate("Push");
  return pushed;
}

}  // namespace pstrain
