//===- ExternalData.h - ONNX external data, confined to the model's folder -*- C++ -*-===//
//
// An initializer stored as ONNX external data names a file by its
// `location`, relative to the model's folder. A model a user was sent must
// not make tp read files outside that folder (the hole was CVE-2022-25882
// in onnx's own loader, and CVE-2024-27318 its bypass with `a/../../`;
// Debian 12's onnx 1.12 checks none of it), so tp-compile, tp-run and the
// Python package all resolve locations here, and nowhere else.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_EXTERNALDATA_H
#define TPRT_EXTERNALDATA_H

#include "tprt/Status.h"

#include <cstdint>
#include <string>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace tprt {

/// `location` with `.` and `..` parts folded away, lexically; "" when it is
/// empty, absolute, holds a NUL byte, climbs above the folder (`a/../../x`)
/// or names the folder itself. `why` then says which.
std::string normalizeExternalLocation(const std::string &location,
                                      std::string &why);

/// The file `location` names inside `modelDir`: normalized as above, and
/// once symlinks are resolved still inside the folder, a regular file, and
/// without other hard links (another name of it may lie anywhere). Errors
/// name the tensor and the location; nothing is read. `fileSize`, when
/// given, gets the file's size.
Status confineExternalLocation(const std::string &modelDir,
                               const std::string &tensorName,
                               const std::string &location, std::string &path,
                               uint64_t *fileSize = nullptr);

/// Where a tensor's external data lies: the confined file and the byte
/// range [offset, offset + length), checked against the file's size.
struct ExternalDataRange {
  std::string path;
  uint64_t offset = 0, length = 0;
};

/// Reads the external_data entries of `tensor` (location, offset, length),
/// confines the location to `modelDir` and checks the range: the length, when
/// given, equals `tensorBytes` (the tensor's size by its type and dims),
/// and the range lies within the file.
Status resolveExternalData(const onnx::TensorProto &tensor,
                           const std::string &modelDir, uint64_t tensorBytes,
                           ExternalDataRange &out);

/// The bytes `tensor`'s type and dims make; false for an element type of no
/// fixed size (strings) or a size past 2^63.
bool onnxTensorBytes(const onnx::TensorProto &tensor, uint64_t &bytes);

} // namespace tprt

#endif // TPRT_EXTERNALDATA_H
