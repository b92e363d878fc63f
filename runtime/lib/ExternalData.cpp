//===- ExternalData.cpp - ONNX external data, confined to the model's folder ===//
#include "tprt/ExternalData.h"

#include "onnx/onnx_pb.h"

#include <climits>
#include <cstdlib>
#include <sys/stat.h>
#include <vector>

using namespace tprt;

std::string tprt::normalizeExternalLocation(const std::string &location,
                                            std::string &why) {
  if (location.empty()) {
    why = "the location is empty";
    return "";
  }
  if (location.find('\0') != std::string::npos) {
    why = "the location holds a NUL byte";
    return "";
  }
  if (location.front() == '/') {
    why = "the location is an absolute path; ONNX external data is relative "
          "to the model's folder";
    return "";
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find('/', start);
    if (end == std::string::npos)
      end = location.size();
    std::string part = location.substr(start, end - start);
    start = end + 1;
    if (part.empty() || part == ".")
      continue;
    if (part == "..") {
      if (parts.empty()) {
        why = "the location climbs out of the model's folder";
        return "";
      }
      parts.pop_back();
      continue;
    }
    parts.push_back(std::move(part));
  }
  if (parts.empty()) {
    why = "the location names the model's folder, not a file in it";
    return "";
  }
  std::string out;
  for (const std::string &p : parts)
    out += (out.empty() ? "" : "/") + p;
  return out;
}

/// realpath(3) as a string; "" when the path does not resolve.
static std::string realPath(const std::string &path) {
  char buffer[PATH_MAX];
  if (!::realpath(path.c_str(), buffer))
    return "";
  return buffer;
}

Status tprt::confineExternalLocation(const std::string &modelDir,
                                     const std::string &tensorName,
                                     const std::string &location,
                                     std::string &path, uint64_t *fileSize) {
  // Quoted with its length kept: a NUL or newline in a hostile name
  // should not cut the message short.
  std::string quoted;
  for (char c : location)
    quoted += (c == '\0' || c == '\n') ? '?' : c;
  auto refuse = [&](const std::string &why) {
    return Status::error("weight '" + tensorName + "': external data '" +
                         quoted + "' is refused: " + why +
                         " (tp reads external data only from files inside "
                         "the model's folder)");
  };
  std::string why;
  std::string relative = normalizeExternalLocation(location, why);
  if (relative.empty())
    return refuse(why);
  std::string dir = realPath(modelDir.empty() ? "." : modelDir);
  if (dir.empty())
    return Status::error("weight '" + tensorName +
                         "': the model's folder " + modelDir +
                         " cannot be resolved");
  std::string joined = dir + (dir == "/" ? "" : "/") + relative;
  std::string resolved = realPath(joined);
  if (resolved.empty())
    return Status::error("weight '" + tensorName + "': its external data " +
                         joined + " does not exist or cannot be read");
  std::string prefix = dir == "/" ? dir : dir + "/";
  if (resolved.compare(0, prefix.size(), prefix) != 0)
    return refuse("a symbolic link leads out of the model's folder (to " +
                  resolved + ")");
  struct stat st;
  if (::stat(resolved.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return refuse("it is not a regular file");
  if (st.st_nlink > 1)
    return refuse("the file has " + std::to_string(st.st_nlink) +
                  " hard links, and another of its names may lie outside "
                  "the folder; copy it");
  path = resolved;
  if (fileSize)
    *fileSize = uint64_t(st.st_size);
  return Status::ok();
}

/// A decimal offset or length as ONNX writes them; false when it is not
/// one (a sign, letters, an overflow).
static bool parseSize(const std::string &text, uint64_t &out) {
  if (text.empty() || text.size() > 19)
    return false;
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    out = out * 10 + uint64_t(c - '0');
  }
  return true;
}

Status tprt::resolveExternalData(const onnx::TensorProto &tensor,
                                 const std::string &modelDir,
                                 uint64_t tensorBytes,
                                 ExternalDataRange &out) {
  const std::string &name = tensor.name();
  std::string location;
  bool hasLength = false;
  out = ExternalDataRange();
  for (const auto &kv : tensor.external_data()) {
    uint64_t *field = nullptr;
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      field = &out.offset;
    } else if (kv.key() == "length") {
      field = &out.length;
      hasLength = true;
    }
    if (field && !parseSize(kv.value(), *field))
      return Status::error("weight '" + name + "': external data " +
                           kv.key() + " '" + kv.value() +
                           "' is not a byte count");
  }
  uint64_t size;
  if (Status s =
          confineExternalLocation(modelDir, name, location, out.path, &size);
      !s)
    return s;
  if (hasLength && out.length != tensorBytes)
    return Status::error("weight '" + name + "': external data length " +
                         std::to_string(out.length) + " differs from the " +
                         std::to_string(tensorBytes) +
                         " bytes its type and dims need");
  out.length = tensorBytes;
  if (out.offset > size || out.length > size - out.offset)
    return Status::error("weight '" + name + "': its external data needs "
                         "bytes " + std::to_string(out.offset) + " to " +
                         std::to_string(out.offset + out.length) + " of " +
                         out.path + ", which has " + std::to_string(size) +
                         " (the file is shorter than the tensor)");
  return Status::ok();
}

bool tprt::onnxTensorBytes(const onnx::TensorProto &tensor, uint64_t &bytes) {
  uint64_t size;
  switch (tensor.data_type()) {
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::COMPLEX64:
    size = 8;
    break;
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    size = 4;
    break;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    size = 2;
    break;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    size = 1;
    break;
  case onnx::TensorProto::COMPLEX128:
    size = 16;
    break;
  default:
    return false;
  }
  bytes = size;
  for (int64_t d : tensor.dims()) {
    if (d < 0 || (d && bytes > (uint64_t(1) << 62) / uint64_t(d)))
      return false;
    bytes *= uint64_t(d);
  }
  return true;
}
