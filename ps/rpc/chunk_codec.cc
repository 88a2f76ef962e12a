#include "ps/rpc/chunk_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <string>
#include <utility>

namespace pstrain {

namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::StringOutputStream;

constexpr int kDataField = proto::TensorChunk::kDataFieldNumber;

void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void AppendLengthTag(int field, std::string* out) {
  AppendVarint(WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED), out);
}

size_t VarintSize(uint64_t v) { return CodedOutputStream::VarintSize64(v); }

// The error for bytes that do not decode as `message`'s type.
Status NotValid(const google::protobuf::MessageLite& message, const std::string& why) {
  return InvalidArgument("a message is not a valid " + message.GetTypeName() + " (" + why + ")");
}

// Reads the fields of a TensorChunk up to the stream's current limit. The
// fields other than data are gathered and parsed as the head; data that
// ends the chunk is copied from the stream straight to where the assembler
// places it, data anywhere else goes with the head (and is copied twice).
Status DecodeChunk(CodedInputStream* in, const google::protobuf::MessageLite& outer,
                   TensorAssembler* assembler) {
  std::string head_bytes;
  bool placed = false;
  {
    StringOutputStream head_stream(&head_bytes);
    CodedOutputStream head_out(&head_stream);
    for (uint32_t tag; (tag = in->ReadTag()) != 0;) {
      if (tag != WireFormatLite::MakeTag(kDataField, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
        if (!WireFormatLite::SkipField(in, tag, &head_out)) {
          return NotValid(outer, "malformed tensor chunk");
        }
        continue;
      }
      uint32_t size = 0;
      if (!in->ReadVarint32(&size)) return NotValid(outer, "malformed tensor chunk data");
      if (static_cast<int64_t>(size) != in->BytesUntilLimit()) {
        std::string data;
        if (!in->ReadString(&data, static_cast<int>(size))) {
          return NotValid(outer, "tensor chunk data cut short");
        }
        head_out.WriteTag(tag);
        head_out.WriteVarint32(size);
        head_out.WriteString(data);
        continue;
      }
      head_out.Trim();
      proto::TensorChunk head;
      if (!head.ParseFromString(head_bytes)) return NotValid(outer, "malformed tensor chunk");
      PS_ASSIGN_OR_RETURN(char* dest, assembler->Place(head, size));
      if (size > 0 && !in->ReadRaw(dest, static_cast<int>(size))) {
        return NotValid(outer, "tensor chunk data cut short");
      }
      placed = true;
    }
  }
  if (in->BytesUntilLimit() != 0) return NotValid(outer, "malformed tensor chunk");
  if (placed) return OkStatus();
  proto::TensorChunk chunk;
  if (!chunk.ParseFromString(head_bytes)) return NotValid(outer, "malformed tensor chunk");
  return assembler->Add(chunk);
}

}  // namespace

grpc::ByteBuffer EncodeChunkMessage(const google::protobuf::MessageLite& rest, int chunk_field,
                                    const proto::TensorChunk& head, grpc::Slice data) {
  const size_t size = data.size();
  std::string prefix = rest.SerializeAsString();
  const std::string head_bytes = head.SerializeAsString();
  const uint32_t data_tag =
      WireFormatLite::MakeTag(kDataField, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  const size_t data_field = size == 0 ? 0 : VarintSize(data_tag) + VarintSize(size) + size;
  AppendLengthTag(chunk_field, &prefix);
  AppendVarint(head_bytes.size() + data_field, &prefix);
  prefix += head_bytes;
  if (size == 0) {
    grpc::Slice only(prefix);
    return grpc::ByteBuffer(&only, 1);
  }
  AppendLengthTag(kDataField, &prefix);
  AppendVarint(size, &prefix);
  grpc::Slice slices[2] = {grpc::Slice(prefix), std::move(data)};
  return grpc::ByteBuffer(slices, 2);
}

StatusOr<bool> DecodeChunkMessage(grpc::ByteBuffer* buffer, int chunk_field,
                                  google::protobuf::MessageLite* rest, TensorAssembler* assembler) {
  const auto invalid = [rest] { return NotValid(*rest, "malformed"); };
  grpc::ProtoBufferReader reader(buffer);
  CodedInputStream in(&reader);
  std::string rest_bytes;
  bool has_chunk = false;
  {
    StringOutputStream rest_stream(&rest_bytes);
    CodedOutputStream rest_out(&rest_stream);
    for (uint32_t tag; (tag = in.ReadTag()) != 0;) {
      if (tag != WireFormatLite::MakeTag(chunk_field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED)) {
        if (!WireFormatLite::SkipField(&in, tag, &rest_out)) return invalid();
        continue;
      }
      if (has_chunk) return NotValid(*rest, "two tensor chunks");
      has_chunk = true;
      uint32_t size = 0;
      if (!in.ReadVarint32(&size) || size > static_cast<uint32_t>(INT32_MAX)) return invalid();
      if (assembler == nullptr) {
        if (!in.Skip(static_cast<int>(size))) return invalid();
        continue;
      }
      const auto limit = in.PushLimit(static_cast<int>(size));
      PS_RETURN_IF_ERROR(DecodeChunk(&in, *rest, assembler));
      in.PopLimit(limit);
    }
    // ReadTag also answers 0 for a malformed tag: only the end is clean.
    if (!in.ConsumedEntireMessage()) return invalid();
  }
  if (!rest->ParseFromString(rest_bytes)) return invalid();
  return has_chunk;
}

}  // namespace pstrain
