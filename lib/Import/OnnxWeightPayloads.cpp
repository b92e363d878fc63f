//===- OnnxWeightPayloads.cpp - parse a model, its weights' data left out -===//
//
// The compiler needs a weight's name, type and shape, not its values:
// tp-run reads those from the file. A deep model's file is hundreds of MB
// of weights, and protobuf's parse copies each one (a 96-layer model: 0.9 s
// of page faults and copies, the file's size again in memory). So the
// file is split into its fields with protobuf's own CodedInputStream, and
// the data of large floating-point initializers is left in the mapped
// file; the few readers of such data (weights read as constants, tied
// weights) put it back first. Everything else is parsed by protobuf as
// before; a file this walk does not understand is parsed whole.
//
//===----------------------------------------------------------------------===//
#include "OnnxModelLoader.h"

#include "google/protobuf/io/coded_stream.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Initializers' data from this size on stays in the file.
constexpr size_t kLeftInFileBytes = size_t(1) << 16;

// Field numbers of onnx.proto.
constexpr uint32_t kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;

/// One field of a serialized message: the whole field (tag included) and,
/// for a length-delimited field, what it holds.
struct Field {
  uint32_t number;
  bool delimited;
  llvm::StringRef whole, payload;
};

/// The fields of the message serialized in `bytes`, in order; false if it
/// is not a well-formed message of the wire types ONNX uses (varint,
/// fixed32/64, length-delimited).
bool splitFields(llvm::StringRef bytes, llvm::SmallVectorImpl<Field> &fields) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t *>(bytes.data()), int(bytes.size()));
  while (size_t(in.CurrentPosition()) < bytes.size()) {
    int start = in.CurrentPosition();
    uint32_t tag = in.ReadTag();
    Field field{tag >> 3, (tag & 7) == 2, {}, {}};
    uint64_t varint;
    uint32_t length;
    switch (tag & 7) {
    case 0:
      if (!in.ReadVarint64(&varint))
        return false;
      break;
    case 1:
    case 5:
      if (!in.Skip((tag & 7) == 1 ? 8 : 4))
        return false;
      break;
    case 2:
      if (!in.ReadVarint32(&length) ||
          length > bytes.size() - size_t(in.CurrentPosition()))
        return false;
      field.payload = bytes.substr(in.CurrentPosition(), length);
      in.Skip(int(length));
      break;
    default: // groups, and tag 0: not in an ONNX file
      return false;
    }
    if (field.number == 0)
      return false;
    field.whole = bytes.slice(start, in.CurrentPosition());
    fields.push_back(field);
  }
  return true;
}

/// Takes the length-delimited field `number` out of the message serialized
/// in `bytes`: its payloads, in order, go to `taken`; the other fields are
/// appended, serialized, to `rest`. False if the message is not well formed.
bool takeField(llvm::StringRef bytes, uint32_t number,
               llvm::SmallVectorImpl<llvm::StringRef> &taken,
               std::string &rest) {
  llvm::SmallVector<Field> fields;
  if (!splitFields(bytes, fields))
    return false;
  for (const Field &f : fields) {
    if (f.number == number && f.delimited)
      taken.push_back(f.payload);
    else
      rest += f.whole.str();
  }
  return true;
}

bool isFloatType(int32_t type) {
  switch (type) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::DOUBLE:
    return true;
  default:
    return false;
  }
}

/// Parses an initializer; a large float one's raw_data stays in `bytes`.
bool parseInitializer(llvm::StringRef bytes, onnx::TensorProto &tensor,
                      OnnxWeightPayloads &payloads) {
  llvm::SmallVector<llvm::StringRef> raws;
  std::string rest;
  if (!takeField(bytes, kTensorRawData, raws, rest))
    return false;
  if (!tensor.ParseFromString(rest))
    return false;
  if (raws.empty())
    return true;
  llvm::StringRef raw = raws.back(); // the last one counts, as in protobuf
  if (raw.size() < kLeftInFileBytes || !isFloatType(tensor.data_type()) ||
      tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    tensor.set_raw_data(raw.data(), raw.size());
    return true;
  }
  // A one-byte stand-in: onnx::checker wants a value field; it and shape
  // inference read the type and the dims.
  tensor.set_raw_data(std::string(1, '\0'));
  payloads.inFile[&tensor] = raw;
  return true;
}

} // namespace

bool tp::parseLeavingWeightPayloads(llvm::StringRef bytes,
                                    onnx::ModelProto &model,
                                    OnnxWeightPayloads &payloads) {
  llvm::SmallVector<llvm::StringRef> graphs, initializers;
  std::string modelRest, graphRest;
  if (!takeField(bytes, kModelGraph, graphs, modelRest) ||
      !model.ParseFromString(modelRest))
    return false;
  // A message repeated on the wire is merged, in order.
  for (llvm::StringRef graph : graphs)
    if (!takeField(graph, kGraphInitializer, initializers, graphRest))
      return false;
  for (llvm::StringRef init : initializers)
    if (!parseInitializer(init, *model.mutable_graph()->add_initializer(),
                          payloads))
      return false;
  return graphs.empty() || model.mutable_graph()->MergeFromString(graphRest);
}

void OnnxWeightPayloads::restore(onnx::TensorProto &tensor) {
  auto it = inFile.find(&tensor);
  if (it == inFile.end())
    return;
  tensor.set_raw_data(it->second.data(), it->second.size());
  inFile.erase(it);
}

llvm::StringRef
OnnxWeightPayloads::rawData(const onnx::TensorProto &tensor) const {
  auto it = inFile.find(&tensor);
  return it != inFile.end() ? it->second : llvm::StringRef(tensor.raw_data());
}
