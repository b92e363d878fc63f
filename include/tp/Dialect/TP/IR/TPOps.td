//===- TPOps.td - tp dialect operations -------------------*- tablegen -*-===//

#ifndef TP_DIALECT_TP_IR_TPOPS_TD
#define TP_DIALECT_TP_IR_TPOPS_TD

include "tp/Dialect/TP/IR/TPDialect.td"
// SameOperandsAndResultType lives here since MLIR 21.
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def TP_ConstantOp : TP_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a tensor constant (ONNX Constant, small folded initializers)";
  let description = [{
    A dense tensor literal. Model weights are not constants: they are function
    arguments loaded by the runtime from the ONNX file.

    ```mlir
    %eps = tp.constant dense<1.0e-05> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs TP_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise with ONNX multidirectional broadcasting
//===----------------------------------------------------------------------===//

// Binary elementwise ops whose operand shapes broadcast as in numpy / ONNX
// (align trailing dims; a dim of 1 stretches). The result type is inferred.
class TP_BroadcastBinaryOp<string mnemonic, string onnxName, list<Trait> traits = []>
    : TP_Op<mnemonic, !listconcat(traits, [Pure])> {
  let summary = "elementwise " # onnxName # " with ONNX broadcasting";
  let description = [{
    ONNX `}] # onnxName # [{` (opset 7 and later): both operands have the same
    element type; shapes broadcast multidirectionally, e.g. `[8, 64]` with
    `[64]` gives `[8, 64]`.

    ```mlir
    %y = tp.}] # mnemonic # [{ %a, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins TP_NumericTensor:$lhs, TP_NumericTensor:$rhs);
  let results = (outs TP_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let builders = [
    // Infers the broadcast result type; the operands must be compatible.
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      std::string why;
      build($_builder, $_state,
            ::mlir::tp::inferBinaryOpType(lhs.getType(), rhs.getType(),
                                          ::mlir::tp::broadcastShapes, why),
            lhs, rhs);
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::tp::verifyBinaryOpType(*this, ::mlir::tp::broadcastShapes);
    }
  }];
}

def TP_AddOp : TP_BroadcastBinaryOp<"add", "Add", [Commutative]>;
def TP_SubOp : TP_BroadcastBinaryOp<"sub", "Sub">;
def TP_MulOp : TP_BroadcastBinaryOp<"mul", "Mul", [Commutative]>;
def TP_DivOp : TP_BroadcastBinaryOp<"div", "Div">;

// Unary elementwise ops: the result has the operand's type.
class TP_UnaryOp<string mnemonic, string onnxName, list<Trait> traits = []>
    : TP_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType])> {
  let summary = "elementwise " # onnxName;
  let arguments = (ins TP_FloatTensor:$input);
  let results = (outs TP_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def TP_ReluOp : TP_UnaryOp<"relu", "Relu"> {
  let description = [{
    ONNX `Relu`: `max(x, 0)` elementwise.

    ```mlir
    %h = tp.relu %x : tensor<8x256xf32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def TP_MatMulOp : TP_Op<"matmul", [Pure]> {
  let summary = "ONNX MatMul: (batched) matrix product with batch broadcasting";
  let description = [{
    numpy `matmul` semantics on operands of rank 2 or more: the last two dims
    are contracted as `[.., M, K] x [.., K, N] -> [.., M, N]` and the leading
    (batch) dims broadcast. Rank-1 operands of ONNX MatMul are reshaped to
    rank 2 by the importer.

    ```mlir
    %y = tp.matmul %x, %w : tensor<4x16x64xf32>, tensor<64x256xf32> -> tensor<4x16x256xf32>
    ```
  }];
  let arguments = (ins TP_NumericTensor:$lhs, TP_NumericTensor:$rhs);
  let results = (outs TP_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let builders = [
    // Infers the result type; the operands must be compatible.
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      std::string why;
      build($_builder, $_state,
            ::mlir::tp::inferBinaryOpType(lhs.getType(), rhs.getType(),
                                          ::mlir::tp::matmulShape, why),
            lhs, rhs);
    }]>
  ];
  let hasVerifier = 1;
}

#endif // TP_DIALECT_TP_IR_TPOPS_TD
