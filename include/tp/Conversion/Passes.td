//===- Passes.td - tp conversion passes -------------------*- tablegen -*-===//

#ifndef TP_CONVERSION_PASSES_TD
#define TP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def TPLowerToLinalg : Pass<"tp-lower-to-linalg"> {
  let summary = "Lower tp ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Rewrites every tp op into upstream ops on statically shaped tensors:
    matmuls become `linalg.matmul` / `linalg.batch_matmul` (or a
    `linalg.generic` contraction when batch dims broadcast), elementwise ops
    become `linalg.generic` with ONNX broadcasting spelled out in the
    indexing maps, and constants become `arith.constant`. Runs after
    partitioning, so shapes here are per-device. Fails, naming the op, if a
    tp op is left that has no lowering.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // TP_CONVERSION_PASSES_TD
