//===- VJPInterface.td - reverse-mode rules of tp ops -----*- tablegen -*-===//

#ifndef TP_AUTODIFF_VJPINTERFACE_TD
#define TP_AUTODIFF_VJPINTERFACE_TD

include "mlir/IR/OpBase.td"

def TP_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let description = [{
    The vector-Jacobian product of a differentiable tp op: given the
    gradient of the loss with respect to its result, build (at the builder's
    insertion point, with tp ops) the gradient with respect to each operand,
    or a null Value for an operand that is not differentiable (an integer
    index, a shape). Broadcast operands get their gradient summed back to
    their own shape.
  }];
  let cppNamespace = "::mlir::tp";
  let methods = [
    InterfaceMethod<
      "Appends one gradient (or null) per operand to `operandGrads`.",
      "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$b, "::mlir::Value":$resultGrad,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // TP_AUTODIFF_VJPINTERFACE_TD
