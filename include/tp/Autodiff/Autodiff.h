//===- Autodiff.h - reverse-mode differentiation of tp ops -----*- C++ -*-===//
#ifndef TP_AUTODIFF_AUTODIFF_H
#define TP_AUTODIFF_AUTODIFF_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"

#include "tp/Autodiff/VJPInterface.h.inc"

namespace mlir::tp {

/// Attaches VJPOpInterface to every differentiable tp op.
void registerVJPInterfaceExternalModels(DialectRegistry &registry);

/// tp.one_hot of integer `labels` over all of `type`'s last dim (offset 0):
/// The ONNX node an op was imported from (its NameLoc), for messages.
std::string onnxNodeOf(Operation *op);

/// the cross-entropy loss and the embedding gradient build it.
Value buildOneHot(OpBuilder &b, Location loc, RankedTensorType type,
                  Value labels);

#define GEN_PASS_DECL
#include "tp/Autodiff/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Autodiff/Passes.h.inc"

} // namespace mlir::tp

#endif // TP_AUTODIFF_AUTODIFF_H
