#include "ps/tensor_chunks.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "tensors travel as little-endian bytes");

#include <algorithm>
#include <cstring>
#include <iterator>

namespace pstrain {

bool ForEachChunkSpan(const std::string& name, const Tensor& tensor, uint32_t chunk_bytes,
                      const ChunkEmitter& emit) {
  if (chunk_bytes == 0) chunk_bytes = kDefaultChunkBytes;
  chunk_bytes = std::max<uint32_t>(chunk_bytes / sizeof(float) * sizeof(float), sizeof(float));
  proto::TensorChunk head;
  head.set_name(name);
  head.mutable_meta()->set_dtype(proto::DT_FLOAT);
  for (int64_t d : tensor.shape()) head.mutable_meta()->add_shape(d);
  const uint64_t total = tensor.bytes();
  head.set_total_bytes(total);
  const char* bytes = reinterpret_cast<const char*>(tensor.data());
  uint64_t offset = 0;
  do {
    uint64_t n = std::min<uint64_t>(chunk_bytes, total - offset);
    head.set_offset(offset);
    if (!emit(head, bytes + offset, n)) return false;
    offset += n;
  } while (offset < total);
  return true;
}

bool ForEachChunk(const std::string& name, const Tensor& tensor, uint32_t chunk_bytes,
                  proto::TensorChunk* chunk, const std::function<bool()>& emit) {
  return ForEachChunkSpan(name, tensor, chunk_bytes,
                          [&](const proto::TensorChunk& head, const char* data, size_t n) {
                            *chunk = head;
                            chunk->set_data(data, n);
                            return emit();
                          });
}

Status TensorAssembler::Add(const proto::TensorChunk& chunk) {
  PS_ASSIGN_OR_RETURN(char* dest, Place(chunk, chunk.data().size()));
  // An empty tensor has no buffer to copy into.
  if (!chunk.data().empty()) std::memcpy(dest, chunk.data().data(), chunk.data().size());
  return OkStatus();
}

StatusOr<char*> TensorAssembler::Place(const proto::TensorChunk& chunk, uint64_t data_bytes,
                                       proto::DataType wire) {
  if (wire == proto::DT_INVALID) wire = chunk.meta().dtype();
  PS_ASSIGN_OR_RETURN(Pending * p, Accept(chunk, data_bytes, nullptr, wire));
  return reinterpret_cast<char*>(p->tensor.data()) + (p->received - data_bytes);
}

Status TensorAssembler::PlaceView(const proto::TensorChunk& chunk, uint64_t data_bytes,
                                  float* data) {
  return Accept(chunk, data_bytes, data, chunk.meta().dtype()).status();
}

StatusOr<std::map<std::string, TensorAssembler::Pending>::iterator> TensorAssembler::Begin(
    const proto::TensorChunk& chunk, const Shape& shape, uint64_t expected_bytes,
    uint64_t data_bytes, float* view, proto::DataType wire) {
  const std::string& name = chunk.name();
  if (chunk.offset() != 0) {
    return InvalidArgument("tensor " + name + ": first chunk at offset " +
                           std::to_string(chunk.offset()));
  }
  if (limits_.check) PS_RETURN_IF_ERROR(limits_.check(name, shape));
  const uint64_t cost = expected_bytes + name.size() + kOverheadBytes;
  if (cost > limits_.max_bytes - held_bytes_) {
    return ResourceExhausted("tensor " + name + " " + ShapeString(shape) + ": " +
                             std::to_string(expected_bytes) + " bytes would take this request " +
                             "past its limit of " + std::to_string(limits_.max_bytes) + " bytes");
  }
  if (view != nullptr && data_bytes != expected_bytes) {
    return InvalidArgument("tensor " + name + ": a chunk in place must hold the whole tensor");
  }
  held_bytes_ += cost;
  return pending_
      .emplace(name, Pending{view != nullptr ? Tensor::View(shape, view) : TakeBuffer(name, shape),
                             0, wire})
      .first;
}

StatusOr<TensorAssembler::Pending*> TensorAssembler::Accept(const proto::TensorChunk& chunk,
                                                            uint64_t data_bytes, float* view,
                                                            proto::DataType wire) {
  const std::string& name = chunk.name();
  if (name.empty()) return InvalidArgument("tensor chunk without a name");
  if (chunk.meta().dtype() != proto::DT_FLOAT) {
    return InvalidArgument("tensor " + name + ": unsupported dtype " +
                           std::to_string(chunk.meta().dtype()));
  }
  Shape shape(chunk.meta().shape().begin(), chunk.meta().shape().end());
  auto elements = CheckedNumElements(shape);
  if (!elements.ok()) return elements.status().Annotate("tensor " + name);
  const uint64_t expected_bytes = static_cast<uint64_t>(*elements) * sizeof(float);
  if (chunk.total_bytes() != expected_bytes) {
    return InvalidArgument("tensor " + name + ": total_bytes " +
                           std::to_string(chunk.total_bytes()) + " does not match shape " +
                           ShapeString(shape));
  }
  auto it = pending_.find(name);
  if (it == pending_.end()) {
    PS_ASSIGN_OR_RETURN(it, Begin(chunk, shape, expected_bytes, data_bytes, view, wire));
  }
  Pending& p = it->second;
  if (p.tensor.shape() != shape) {
    return InvalidArgument("tensor " + name + ": shape changed between chunks");
  }
  if (p.wire != wire) {
    return InvalidArgument("tensor " + name + ": a chunk sent as " + proto::DataType_Name(wire) +
                           " after chunks sent as " + proto::DataType_Name(p.wire));
  }
  if (p.received == expected_bytes && expected_bytes > 0) {
    return InvalidArgument("tensor " + name + ": sent again after it was whole");
  }
  if (view != nullptr && p.tensor.data() != view) {
    return InvalidArgument("tensor " + name + ": a chunk in place must hold the whole tensor");
  }
  if (chunk.offset() != p.received) {
    return InvalidArgument("tensor " + name + ": chunk at offset " +
                           std::to_string(chunk.offset()) + ", expected " +
                           std::to_string(p.received));
  }
  if (data_bytes > expected_bytes - p.received) {
    return InvalidArgument("tensor " + name + ": chunk runs past the end (" +
                           std::to_string(expected_bytes) + " bytes)");
  }
  p.received += data_bytes;
  return &p;
}

Tensor TensorAssembler::TakeBuffer(const std::string& name, const Shape& shape) {
  if (reuse_ != nullptr) {
    auto it = reuse_->find(name);
    if (it != reuse_->end() && it->second.shape() == shape) {
      Tensor buffer = std::move(it->second);
      reuse_->erase(it);
      return buffer;
    }
  }
  // Chunks overwrite every byte: no need to zero the buffer first.
  return Tensor(shape, Tensor::kUninitialized);
}

Status TensorAssembler::FinishInto(std::map<std::string, Tensor>* out) {
  PS_ASSIGN_OR_RETURN(auto tensors, Finish());
  if (reuse_ != nullptr) {
    // Views offered for tensors that did not come are dropped, so what the
    // caller finds afterwards is what arrived.
    for (auto it = reuse_->begin(); it != reuse_->end();) {
      it = it->second.borrows_data() ? reuse_->erase(it) : std::next(it);
    }
  }
  for (auto& [name, t] : tensors) (*out)[name] = std::move(t);
  return OkStatus();
}

StatusOr<std::map<std::string, Tensor>> TensorAssembler::Finish() {
  std::map<std::string, Tensor> out;
  for (auto& [name, p] : pending_) {
    if (p.received != p.tensor.bytes()) {
      return InvalidArgument("tensor " + name + ": incomplete, got " + std::to_string(p.received) +
                             " of " + std::to_string(p.tensor.bytes()) + " bytes");
    }
    out.emplace(name, std::move(p.tensor));
  }
  pending_.clear();
  return out;
}

}  // namespace pstrain
