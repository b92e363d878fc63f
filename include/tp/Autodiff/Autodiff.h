//===- Autodiff.h - reverse-mode differentiation of tp ops -----*- C++ -*-===//
#ifndef TP_AUTODIFF_AUTODIFF_H
#define TP_AUTODIFF_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"

#include "tp/Autodiff/VJPInterface.h.inc"

namespace mlir::tp {

/// Attaches VJPOpInterface to every differentiable tp op.
void registerVJPInterfaceExternalModels(DialectRegistry &registry);

/// The ONNX node an op was imported from (its NameLoc), for messages.
std::string onnxNodeOf(Operation *op);

/// tp.one_hot of integer `labels` over all of `type`'s last dim (offset 0):
/// the cross-entropy loss and the embedding gradient build it.
Value buildOneHot(OpBuilder &b, Location loc, RankedTensorType type,
                  Value labels);

class ModuleTree;

/// Activation recomputation (Recompute.cpp): in the training step `step`,
/// whose forward ops are `forwardOps` and whose backward pass starts after
/// `lastBeforeBackward`, the backward pass reads recomputed copies of the
/// values of the modules `patterns` name (plan-style, `layers.*`) instead
/// of the forward's. Records the modules as `tp.recomputed_modules` on the
/// parent module; an entry that matches no module is an error.
LogicalResult recomputeCheckpointedModules(func::FuncOp step,
                                           const ModuleTree &tree,
                                           ArrayRef<std::string> patterns,
                                           ArrayRef<Operation *> forwardOps,
                                           Operation *lastBeforeBackward);

/// One weight's optimizer update in a training step: the weight (a step
/// argument), its gradient, and the ops that compute its new value and
/// optimizer state, in block order.
struct WeightUpdate {
  Value weight, gradient;
  SmallVector<Operation *> ops;
};

/// Moves each update right after the last op it waits for (its gradient,
/// the weight's last reader) and names its ops after the gradient's module
/// scope (`/layers.3.fc1/optimizer sgd`), so that a repeated layer's
/// updates are outlined with its backward ops (PlaceUpdates.cpp).
void placeUpdatesAfterGradients(ArrayRef<WeightUpdate> updates,
                                StringRef optimizer);

/// Mixed precision (KeepBf16.cpp): the f32 activations the backward pass
/// reads are kept as bf16 copies, widened again before their first
/// backward reader (as torch.autocast's activations are bf16).
void keepActivationsInBf16(func::FuncOp step, ArrayRef<Operation *> forwardOps,
                           Operation *lastBeforeBackward);

/// Elementwise rematerialization (Rematerialize.cpp): forward values the
/// backward pass reads that an elementwise op (or reshape, transpose,
/// expand) computes from values kept anyway are recomputed before their
/// first backward reader instead of kept (marked `tp.rematerialized`).
void rematerializeElementwise(func::FuncOp step,
                              ArrayRef<Operation *> forwardOps,
                              Operation *lastBeforeBackward);

#define GEN_PASS_DECL
#include "tp/Autodiff/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Autodiff/Passes.h.inc"

} // namespace mlir::tp

#endif // TP_AUTODIFF_AUTODIFF_H
