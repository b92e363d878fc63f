//===- WeightLoader.h - a rank's shards of the ONNX weights ----*- C++ -*-===//
#ifndef TPRT_WEIGHTLOADER_H
#define TPRT_WEIGHTLOADER_H

#include "tprt/Manifest.h"

#include <memory>

namespace tprt {

/// The model's initializers, parsed once per process and shared by the
/// ranks it runs.
class WeightSource {
public:
  /// untieMerged: read the model as tp-compile --untie-merged imported it
  /// (the manifest says), and save it so.
  static Status open(const std::string &modelPath,
                     std::unique_ptr<WeightSource> &out,
                     bool untieMerged = false);
  virtual ~WeightSource() = default;
  /// Copies `rank`'s block of weight `t` into `local` (localElements of
  /// t.dtype). For external-data models only that block is read from disk.
  virtual Status loadBlock(const TensorSpec &t, const Mesh &mesh, int rank,
                           void *local) const = 0;
  /// Drops the model's weights from memory once every rank has its blocks
  /// (a step then holds one copy of them, as PyTorch does); loadBlock fails
  /// afterwards, and saveWithWeights reads the model file again.
  virtual void release() = 0;
  /// Writes the model to `path` (binary ONNX) with the given initializers'
  /// data replaced (name -> raw little-endian bytes), atomically
  /// (tprt/AtomicFile.h). Weights are embedded, or, when the model had
  /// external data or would pass protobuf's 2 GiB, written to one data file
  /// beside it, `<file name>.data` (tensors of 1 KB and more).
  virtual Status saveWithWeights(
      const std::string &path,
      const std::vector<std::pair<std::string, std::vector<char>>> &weights)
      const = 0;
};

/// SHA-256 of a file, lower-case hex.
Status sha256File(const std::string &path, std::string &hex);

} // namespace tprt

#endif // TPRT_WEIGHTLOADER_H
