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
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"

#include <optional>

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Initializers' data from this size on stays in the file.
constexpr size_t kLeftInFileBytes = size_t(1) << 16;

// Field numbers of onnx.proto.
constexpr uint32_t kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;

/// Where a field lies: its header (tag, then length or value), then for a
/// length-delimited field its payload.
struct FieldHeader {
  uint32_t number;
  bool delimited;
  uint64_t headerSize, payloadSize;
  uint64_t size() const { return headerSize + payloadSize; }
};

/// The longest header: a tag and a varint (or a fixed64).
constexpr uint64_t kMaxHeaderBytes = 15;

/// Decodes the header at the start of `head` (at least its first
/// kMaxHeaderBytes, or the whole rest of the message) of a field that ends
/// within `remaining` bytes. None if it is not a field of the wire types
/// ONNX uses (varint, fixed32/64, length-delimited).
std::optional<FieldHeader> decodeHeader(llvm::StringRef head,
                                        uint64_t remaining) {
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t *>(head.data()),
      int(std::min<uint64_t>(head.size(), kMaxHeaderBytes)));
  uint32_t tag = in.ReadTag();
  uint64_t varint;
  uint32_t length = 0;
  bool ok = false;
  switch (tag & 7) {
  case 0:
    ok = in.ReadVarint64(&varint);
    break;
  case 1:
  case 5:
    ok = in.Skip((tag & 7) == 1 ? 8 : 4);
    break;
  case 2:
    ok = in.ReadVarint32(&length);
    break;
  default: // groups, and tag 0: not in an ONNX file
    break;
  }
  FieldHeader field{tag >> 3, (tag & 7) == 2, uint64_t(in.CurrentPosition()),
                    length};
  if (!ok || field.number == 0 || field.headerSize > remaining ||
      field.payloadSize > remaining - field.headerSize)
    return std::nullopt;
  return field;
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

/// Reads slices of the model file with pread, through a small window.
/// The walk over a graph's fields reads a few bytes at the start of each
/// large initializer, which lies between megabytes of weights: through the
/// mapping each such read faults in a page (about 20 us on a virtual
/// machine, 45 ms for a 96-layer model's 2,300 of them); a pread of the
/// same bytes takes 2 us, and leaves the mapping untouched for munmap.
class FileSlices {
public:
  FileSlices(llvm::sys::fs::file_t file, uint64_t size)
      : file(file), size(size) {}

  /// Bytes [offset, offset + n), valid until the next call; none if they
  /// are not in the file or cannot be read.
  std::optional<llvm::StringRef> read(uint64_t offset, uint64_t n) {
    if (offset > size || n > size - offset)
      return std::nullopt;
    if (offset < windowStart || offset + n > windowStart + window.size()) {
      window.resize(std::min<uint64_t>(std::max<uint64_t>(n, kWindowBytes),
                                       size - offset));
      llvm::Expected<size_t> got = llvm::sys::fs::readNativeFileSlice(
          file, llvm::MutableArrayRef<char>(window.data(), window.size()),
          offset);
      if (!got || *got != window.size()) {
        if (!got)
          llvm::consumeError(got.takeError());
        window.clear();
        return std::nullopt;
      }
      windowStart = offset;
    }
    return llvm::StringRef(window).substr(offset - windowStart, n);
  }

  /// Walks the message at [offset, end): `take` gets the payload's offset
  /// and size of each length-delimited field `number`; every other field
  /// is appended, serialized, to `rest`. False if the message is not well
  /// formed or cannot be read, or `take` returns false.
  bool takeField(uint64_t offset, uint64_t end, uint32_t number,
                 llvm::function_ref<bool(uint64_t, uint64_t)> take,
                 std::string &rest) {
    for (uint64_t at = offset; at < end;) {
      std::optional<FieldHeader> field = fieldAt(at, end);
      if (!field)
        return false;
      if (field->number == number && field->delimited) {
        if (!take(at + field->headerSize, field->payloadSize))
          return false;
      } else {
        std::optional<llvm::StringRef> whole = read(at, field->size());
        if (!whole)
          return false;
        rest += *whole;
      }
      at += field->size();
    }
    return true;
  }

  /// The header of the field that starts at `offset` and ends by `end`.
  std::optional<FieldHeader> fieldAt(uint64_t offset, uint64_t end) {
    std::optional<llvm::StringRef> head =
        read(offset, std::min<uint64_t>(kMaxHeaderBytes, end - offset));
    if (!head)
      return std::nullopt;
    return decodeHeader(*head, end - offset);
  }

private:
  static constexpr uint64_t kWindowBytes = 16 << 10;
  llvm::sys::fs::file_t file;
  uint64_t size;
  std::string window;
  uint64_t windowStart = 0;
};

/// Parses the initializer at [offset, offset + length) of the file; a
/// large float one's raw_data stays in `fileBytes` (the mapped file),
/// unread.
bool parseInitializer(FileSlices &slices, llvm::StringRef fileBytes,
                      uint64_t offset, uint64_t length,
                      onnx::TensorProto &tensor,
                      OnnxWeightPayloads &payloads) {
  if (length < kLeftInFileBytes) {
    std::optional<llvm::StringRef> bytes = slices.read(offset, length);
    return bytes && tensor.ParseFromArray(bytes->data(), int(bytes->size()));
  }
  std::string rest;
  std::optional<std::pair<uint64_t, uint64_t>> raw; // offset, size
  // The last raw_data counts, as in protobuf.
  if (!slices.takeField(offset, offset + length, kTensorRawData,
                        [&](uint64_t at, uint64_t size) {
                          raw = {at, size};
                          return true;
                        },
                        rest))
    return false;
  if (!tensor.ParseFromString(rest))
    return false;
  if (!raw)
    return true;
  if (raw->second < kLeftInFileBytes || !isFloatType(tensor.data_type()) ||
      tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    std::optional<llvm::StringRef> bytes = slices.read(raw->first, raw->second);
    if (!bytes)
      return false;
    tensor.set_raw_data(bytes->data(), bytes->size());
    return true;
  }
  // A one-byte stand-in: onnx::checker wants a value field; it and shape
  // inference read the type and the dims.
  tensor.set_raw_data(std::string(1, '\0'));
  payloads.inFile[&tensor] = fileBytes.substr(raw->first, raw->second);
  return true;
}

} // namespace

bool tp::parseLeavingWeightPayloads(llvm::StringRef bytes,
                                    llvm::sys::fs::file_t file,
                                    onnx::ModelProto &model,
                                    OnnxWeightPayloads &payloads) {
  // The fields are walked through pread, not the mapping (FileSlices).
  FileSlices slices(file, bytes.size());
  llvm::SmallVector<std::pair<uint64_t, uint64_t>> graphs; // offset, size
  std::string modelRest, graphRest;
  if (!slices.takeField(0, bytes.size(), kModelGraph,
                        [&](uint64_t at, uint64_t size) {
                          graphs.push_back({at, size});
                          return true;
                        },
                        modelRest) ||
      !model.ParseFromString(modelRest))
    return false;
  // A message repeated on the wire is merged, in order.
  for (auto [start, length] : graphs) {
    if (!slices.takeField(start, start + length, kGraphInitializer,
                          [&](uint64_t at, uint64_t size) {
                            return parseInitializer(
                                slices, bytes, at, size,
                                *model.mutable_graph()->add_initializer(),
                                payloads);
                          },
                          graphRest))
      return false;
  }
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
