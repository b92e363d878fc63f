//===- Manifest.h - what a compiled program expects ------------*- C++ -*-===//
#ifndef TPRT_MANIFEST_H
#define TPRT_MANIFEST_H

#include "tprt/Mesh.h"
#include "tprt/Status.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tprt {

/// One argument or result of the program, as manifest.json describes it.
struct TensorSpec {
  std::string name;
  std::string kind; // input | param | output
  /// A weight's PyTorch name where it differs from the ONNX name.
  std::string torchName;
  /// Every PyTorch name of a tied weight (empty: torchName alone), and
  /// whether the initializer is PyTorch's tensor transposed.
  std::vector<std::string> torchNames;
  bool torchTransposed = false;
  int32_t dtype = -1;
  std::vector<int64_t> shape, localShape;
  /// The ONNX initializer's dims where the program reads the same bytes in
  /// another shape (a fused projection's view); empty otherwise. Outputs,
  /// gradients and saved weights take these dims.
  std::vector<int64_t> onnxShape;
  /// A result the program may write into the buffer of the argument of the
  /// same name (an optimizer's in-place update; tp-find-in-place-updates).
  bool inPlace = false;
  /// A pipeline's result: the stage whose value counts (ranks of other
  /// stages return a stand-in); -1 otherwise.
  int stage = -1;
  /// A pipeline's argument: the stages that read it; a result: the stages
  /// that write it, when more than its `stage` does. Empty: every stage.
  std::vector<int64_t> stages;
  /// Per dim, the mesh axes (indices, major first) splitting it.
  std::vector<std::vector<int>> sharding;

  int64_t numElements() const;
  int64_t localElements() const;
  std::string shapeString() const;
  /// Which block of each dim `rank` holds.
  std::vector<int64_t> blockOf(const Mesh &mesh, int rank) const;
};

struct Manifest {
  std::string dir;
  std::string target, library, entry;
  std::string modelPath, modelSha256;
  /// Compiled with --untie-merged: the model is read with every parameter
  /// the exporter merged by value as an initializer of its own
  /// (tprt/UntieMerged.h).
  bool untieMerged = false;
  Mesh mesh;
  std::vector<TensorSpec> arguments, results;
  std::vector<std::string> collectiveSites;
  /// The loop nests' and GEMMs' call sites, by ONNX node, and what each
  /// does: gemm, convolution, reduction, elementwise or copy
  /// (tp-trace-kernel-sites).
  std::vector<std::string> kernelSites, kernelFamilies;
  /// Per kernel and collective site: its step phase (forward, loss,
  /// backward, update) and pipeline microbatch (-1: none), for the trace.
  std::vector<std::string> kernelPhases, collectivePhases;
  std::vector<int64_t> kernelMicrobatches, collectiveMicrobatches;
  std::vector<int64_t> axisMasks;
  /// Initializers of the model file that are a weight transposed (a tied
  /// weight's copy made by the exporter's constant folding): copy ->
  /// weight. --save writes them from the trained weight.
  std::vector<std::pair<std::string, std::string>> tiedCopies;
  /// Graph inputs tp-compile --constant-input bound to a value: the program
  /// does not take them.
  std::vector<std::string> constantInputs;
  /// Pipeline parallelism: the mesh axis of the stages (-1: none), the
  /// microbatches and schedule, and per stage the planned peak of
  /// temporaries and the activation bytes a microbatch keeps for its
  /// backward.
  int stageAxis = -1;
  int64_t microbatches = 1;
  std::string schedule;
  std::vector<int64_t> stagePeakBytes, stageKeptBytes;
  /// Whether a stage's ranks touch only the arguments its stage reads and
  /// the results it writes (the others need no buffer there).
  bool stageBuffersOnly = false;
  /// The planned peak of a step's temporaries per device (-1: not given).
  int64_t peakTemporaryBytes = -1;

  /// The hex SHA-256 of manifest.json, which program.so must carry.
  std::string sha256;

  /// Whether rank `rank`'s block of result `t` is part of the result: not
  /// when a pipeline computes it on another stage.
  bool holdsResult(const TensorSpec &t, int rank) const {
    return t.stage < 0 || stageAxis < 0 || stageOf(rank) == t.stage;
  }
  /// Whether rank `rank` needs a buffer for argument or result `t`: not
  /// on a pipeline stage that never touches it.
  bool needsBuffer(const TensorSpec &t, bool isResult, int rank) const {
    if (!stageBuffersOnly || stageAxis < 0)
      return true;
    if (!t.stages.empty())
      return std::find(t.stages.begin(), t.stages.end(), stageOf(rank)) !=
             t.stages.end();
    return !isResult || holdsResult(t, rank);
  }
  int64_t stageOf(int rank) const {
    return mesh.indexAlong(rank, int64_t(1) << stageAxis);
  }

  /// The argument whose buffer result `r` shares (inPlace), or -1.
  int inPlaceArgument(size_t r) const;

  static Status load(const std::string &dir, Manifest &out);
  /// The manifest text of `path` (named in messages), every field checked.
  static Status parse(const std::string &path, const std::string &text,
                      const std::string &dir, Manifest &out);
};

} // namespace tprt

#endif // TPRT_MANIFEST_H
