//===- UntieMerged.h - parameters the exporter merged, apart again -*- C++ -*-===//
//
// An eval-mode torch.onnx.export merges initializers of equal value (every
// fresh LayerNorm's ones and zeros, every zero bias), so that one
// initializer stands for parameters PyTorch trains apart. By default tp
// trains such an initializer as one weight (docs/Training.md, "Shared
// initializers"); `tp-compile --untie-merged` gives each merged parameter
// its initializer back, under its own name. The model is rewritten the same way
// wherever it is read: by the importer, by the runtime's weight loader and
// before --save writes the trained copies back, so that the names agree.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_UNTIEMERGED_H
#define TPRT_UNTIEMERGED_H

#include <functional>

namespace onnx {
class ModelProto;
class TensorProto;
} // namespace onnx

namespace tprt {

/// torch.onnx.export records each parameter it merged into another of
/// equal value as an Identity of the kept initializer, whose output is the
/// merged parameter's own name (`Identity_3: layers.0.norm1.weight ->
/// layers.1.norm1.weight`); a weight PyTorch ties (the same Parameter) has
/// no such node. Each such Identity becomes an initializer of its own, a
/// copy, under that name. Deterministic. `copied(from, to)` is called for
/// each copy (the importer's lazily read payloads). Returns the number of
/// copies.
int untieMergedInitializers(
    onnx::ModelProto &model,
    const std::function<void(const onnx::TensorProto &,
                             onnx::TensorProto &)> &copied = nullptr);

} // namespace tprt

#endif // TPRT_UNTIEMERGED_H
