//===- TPOps.td - tp dialect operations -------------------*- tablegen -*-===//

#ifndef TP_DIALECT_TP_IR_TPOPS_TD
#define TP_DIALECT_TP_IR_TPOPS_TD

include "tp/Dialect/TP/IR/TPDialect.td"
include "tp/Dialect/TP/IR/TPAttrs.td"
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
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::mlir::tp::foldElementwise(*this, adaptor.getOperands());
    }
    ::llvm::LogicalResult $cppClass::verify() {
      return ::mlir::tp::verifyBinaryOpType(*this, ::mlir::tp::broadcastShapes);
    }
  }];
}

def TP_AddOp : TP_BroadcastBinaryOp<"add", "Add", [Commutative]>;
def TP_SubOp : TP_BroadcastBinaryOp<"sub", "Sub">;
def TP_MulOp : TP_BroadcastBinaryOp<"mul", "Mul", [Commutative]>;
def TP_DivOp : TP_BroadcastBinaryOp<"div", "Div">;
def TP_PowOp : TP_BroadcastBinaryOp<"pow", "Pow"> {
  // Floats only (math.powf); the importer raises integers in f64.
  let arguments = (ins TP_FloatTensor:$lhs, TP_FloatTensor:$rhs);
  let results = (outs TP_FloatTensor:$result);
}
// C's remainder, the sign of the dividend: ONNX Mod with fmod = 1 (floats
// and integers); the importer builds fmod = 0 (the divisor's sign) from it.
def TP_RemOp : TP_BroadcastBinaryOp<"rem", "Mod (fmod = 1)">;

class TP_CompareOp<string mnemonic, string onnxName>
    : TP_Op<mnemonic, [Pure]> {
  let summary = "ONNX " # onnxName # ": elementwise comparison with broadcasting";
  let description = [{
    A boolean (i1) tensor of the broadcast shape.

    ```mlir
    %m = tp.greater %x, %zero : tensor<8x64xf32>, tensor<f32> -> tensor<8x64xi1>
    ```
  }];
  let arguments = (ins TP_NumericTensor:$lhs, TP_NumericTensor:$rhs);
  let results = (outs StaticShapeTensorOf<[I1]>:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::mlir::tp::foldElementwise(*this, adaptor.getOperands());
    }
  }];
}
def TP_GreaterOp : TP_CompareOp<"greater", "Greater">;
def TP_LessOp : TP_CompareOp<"less", "Less">;
def TP_EqualOp : TP_CompareOp<"equal", "Equal">;
def TP_GreaterEqualOp : TP_CompareOp<"greater_equal", "GreaterOrEqual">;
def TP_LessEqualOp : TP_CompareOp<"less_equal", "LessOrEqual">;

class TP_LogicalOp<string mnemonic, string onnxName>
    : TP_Op<mnemonic, [Pure]> {
  let summary = "ONNX " # onnxName # ": elementwise on booleans with broadcasting";
  let arguments = (ins StaticShapeTensorOf<[I1]>:$lhs,
                       StaticShapeTensorOf<[I1]>:$rhs);
  let results = (outs StaticShapeTensorOf<[I1]>:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::mlir::tp::foldElementwise(*this, adaptor.getOperands());
    }
  }];
}
def TP_AndOp : TP_LogicalOp<"and", "And">;
def TP_OrOp : TP_LogicalOp<"or", "Or">;
def TP_XorOp : TP_LogicalOp<"xor", "Xor">;
def TP_NotOp : TP_Op<"not", [Pure, SameOperandsAndResultType]> {
  let summary = "ONNX Not: elementwise boolean negation";
  let arguments = (ins StaticShapeTensorOf<[I1]>:$input);
  let results = (outs StaticShapeTensorOf<[I1]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::mlir::tp::foldElementwise(*this, adaptor.getOperands());
    }
  }];
}
def TP_MaxOp : TP_BroadcastBinaryOp<"max", "Max", [Commutative]>;
def TP_MinOp : TP_BroadcastBinaryOp<"min", "Min", [Commutative]>;

// Unary elementwise ops: the result has the operand's type.
class TP_UnaryOp<string mnemonic, string onnxName, list<Trait> traits = []>
    : TP_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType])> {
  let summary = "elementwise " # onnxName;
  let description = "ONNX `" # onnxName # "` elementwise on a float tensor; "
                    "the result has the operand's type.";
  let arguments = (ins TP_FloatTensor:$input);
  let results = (outs TP_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::mlir::tp::foldElementwise(*this, adaptor.getOperands());
    }
  }];
}

def TP_ReluOp : TP_UnaryOp<"relu", "Relu"> {
  let description = [{
    ONNX `Relu`: `max(x, 0)` elementwise.

    ```mlir
    %h = tp.relu %x : tensor<8x256xf32>
    ```
  }];
}
def TP_NegOp : TP_UnaryOp<"neg", "Neg">;
def TP_AbsOp : TP_UnaryOp<"abs", "Abs">;
def TP_CeilOp : TP_UnaryOp<"ceil", "Ceil">;
def TP_FloorOp : TP_UnaryOp<"floor", "Floor">;
def TP_RoundOp : TP_UnaryOp<"round", "Round"> {
  let description = "ONNX `Round`: to the nearest integer, halves to even.";
}
def TP_CosOp : TP_UnaryOp<"cos", "Cos">;
def TP_SinOp : TP_UnaryOp<"sin", "Sin">;
def TP_SqrtOp : TP_UnaryOp<"sqrt", "Sqrt">;
def TP_ErfOp : TP_UnaryOp<"erf", "Erf">;
def TP_TanhOp : TP_UnaryOp<"tanh", "Tanh">;
def TP_SigmoidOp : TP_UnaryOp<"sigmoid", "Sigmoid">;
def TP_ExpOp : TP_UnaryOp<"exp", "Exp">;
def TP_LogOp : TP_UnaryOp<"log", "Log">;
def TP_ReciprocalOp : TP_UnaryOp<"reciprocal", "Reciprocal">;

def TP_CastOp : TP_Op<"cast", [Pure]> {
  let summary = "ONNX Cast: convert the element type";
  let description = [{
    Same shape, another element type; floats round to nearest, floats to
    integers truncate toward zero, and `i1` is ONNX `bool`.

    ```mlir
    %y = tp.cast %x : tensor<4xi64> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins TP_Tensor:$input);
  let results = (outs TP_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TP_WhereOp : TP_Op<"where", [Pure]> {
  let summary = "ONNX Where: select with three-way broadcasting";
  let description = [{
    `cond ? x : y` elementwise; the three shapes broadcast together.

    ```mlir
    %r = tp.where %c, %x, %y : tensor<4x4xi1>, tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[I1]>:$condition, TP_Tensor:$lhs,
                       TP_Tensor:$rhs);
  let results = (outs TP_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $lhs `,` $rhs attr-dict `:` type($condition) `,` type($lhs)
    `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::mlir::tp::foldElementwise(*this, adaptor.getOperands());
    }
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
    rank 2 by the importer. Both operands have one element type; the result
    has it too, or is f32 for bf16 / f16 operands (mixed precision: the
    products are summed in f32, as tp-autocast writes them).

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
    }]>,
    // Infers the result shape; the result's element type is `resultElement`
    // (f32 for mixed precision's bf16 operands).
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   "::mlir::Type":$resultElement), [{
      std::string why;
      build($_builder, $_state,
            ::mlir::tp::inferBinaryOpType(lhs.getType(), rhs.getType(),
                                          ::mlir::tp::matmulShape, why)
                .clone(resultElement),
            lhs, rhs);
    }]>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalizations and reductions
//===----------------------------------------------------------------------===//

class TP_SoftmaxLikeOp<string mnemonic, string onnxName>
    : TP_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "ONNX " # onnxName # " along one axis (opset 13 semantics)";
  let description = [{
    Normalizes along `axis` only (non-negative, less than the rank). Opset
    11-12 models, whose }] # onnxName # [{ flattens from `axis` on, are
    imported through reshapes around this op.

    ```mlir
    %p = tp.}] # mnemonic # [{ %s {axis = 3 : i64} : tensor<4x4x16x16xf32>
    ```
  }];
  let arguments = (ins TP_FloatTensor:$input, I64Attr:$axis);
  let results = (outs TP_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def TP_ConvOp : TP_Op<"conv", [Pure]> {
  let summary = "ONNX Conv (N-d, grouped), without bias";
  let description = [{
    `input` is `[N, C, S...]`, `filter` `[M, C / group, K...]`; the result
    is `[N, M, O...]` with `O = (S + pad_begin + pad_end - dilation (K - 1)
    - 1) / stride + 1`. `pads` holds the begin pads of every spatial dim,
    then the end pads (ONNX's order). The importer adds the bias. As for
    tp.matmul, bf16 / f16 operands may give an f32 result.

    ```mlir
    %y = tp.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
                         pads = array<i64: 1, 1, 1, 1>, group = 1 : i64}
        : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins TP_FloatTensor:$input, TP_FloatTensor:$filter,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads, I64Attr:$group);
  let results = (outs TP_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` type($input) `,` type($filter) `->` type($result)
  }];
  let hasVerifier = 1;
}
// The two gradients of tp.conv, as the VJP emits them: on the CPU they run
// as oneDNN's backward kernels (tp-lower-conv-to-dnnl); elsewhere
// tp-expand-conv-gradients writes them as tp.conv.
class TP_ConvGradOp<string mnemonic, string operands, string result>
    : TP_Op<mnemonic, [Pure]> {
  let description = [{
    The gradient of `tp.conv` (same `strides`, `dilations`, `pads` and
    `group`) with respect to its }] # result # [{, from }] # operands # [{.
  }];
  let arguments = (ins TP_FloatTensor:$lhs, TP_FloatTensor:$rhs,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads, I64Attr:$group);
  let results = (outs TP_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}
def TP_ConvInputGradOp : TP_ConvGradOp<"conv_input_grad",
    "`lhs`, the output's gradient `[N, M, O...]`, and `rhs`, the filter "
    "`[M, C / group, K...]`",
    "input `[N, C, S...]` (the result's shape says S, which the forward's "
    "floor division does not determine)"> {
  let summary = "The input's gradient of tp.conv (a transposed convolution)";
  let extraClassDeclaration = [{
    Value getOutputGrad() { return getLhs(); }
    Value getFilter() { return getRhs(); }
  }];
}
def TP_ConvFilterGradOp : TP_ConvGradOp<"conv_filter_grad",
    "`lhs`, the input `[N, C, S...]`, and `rhs`, the output's gradient "
    "`[N, M, O...]`",
    "filter `[M, C / group, K...]`"> {
  let summary = "The filter's gradient of tp.conv";
  let extraClassDeclaration = [{
    Value getInput() { return getLhs(); }
    Value getOutputGrad() { return getRhs(); }
  }];
}

def TP_PoolOp : TP_Op<"pool", [Pure]> {
  let summary = "ONNX MaxPool / AveragePool (N-d)";
  let description = [{
    `kind` is `max` or `avg`; windows of `kernel` over the spatial dims of
    `[N, C, S...]` with `strides`, `dilations` and `pads` (begin pads, then
    end pads; padding never wins a max). `avg` divides by the window size
    when `count_include_pad`, else by the number of elements inside the
    input.

    ```mlir
    %y = tp.pool %x {kind = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                     dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                     count_include_pad = false} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
    ```
  }];
  let arguments = (ins TP_FloatTensor:$input, StrAttr:$kind,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads,
                       BoolAttr:$count_include_pad);
  let results = (outs TP_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}
def TP_SoftmaxOp : TP_SoftmaxLikeOp<"softmax", "Softmax">;
def TP_LogSoftmaxOp : TP_SoftmaxLikeOp<"log_softmax", "LogSoftmax">;

def TP_LayerNormOp : TP_Op<"layer_norm", [Pure]> {
  let summary = "ONNX LayerNormalization over the dims from `axis` on";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, with mean and (biased)
    variance over dims `[axis, rank)`; `scale` and `bias` have exactly the
    normalized dims' shape.

    ```mlir
    %y = tp.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32}
        : tensor<4x16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<4x16x64xf32>
    ```
  }];
  let arguments = (ins TP_FloatTensor:$input, TP_FloatTensor:$scale,
                       TP_FloatTensor:$bias, I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs TP_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` type($input) `,` type($scale) `,`
    type($bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

class TP_ReduceOp<string mnemonic, string onnxName>
    : TP_Op<mnemonic, [Pure]> {
  let summary = "ONNX " # onnxName # " over a set of axes";
  let description = [{
    Reduces the listed `axes` (sorted, unique, non-negative); `keepdims`
    keeps them as size-1 dims.

    ```mlir
    %m = tp.}] # mnemonic # [{ %x {axes = array<i64: 2>, keepdims = true} : tensor<4x16x64xf32> -> tensor<4x16x1xf32>
    ```
  }];
  let arguments = (ins TP_NumericTensor:$input, DenseI64ArrayAttr:$axes,
                       BoolAttr:$keepdims);
  let results = (outs TP_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def TP_ReduceSumOp : TP_ReduceOp<"reduce_sum", "ReduceSum">;
def TP_ReduceMeanOp : TP_ReduceOp<"reduce_mean", "ReduceMean">;
def TP_ReduceMaxOp : TP_ReduceOp<"reduce_max", "ReduceMax">;
def TP_ReduceProdOp : TP_ReduceOp<"reduce_prod", "ReduceProd">;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def TP_ArgReduceOp : TP_Op<"arg_reduce", [Pure]> {
  let summary = "ONNX ArgMax / ArgMin: the index of the extreme along an axis";
  let description = [{
    `kind` is `max` or `min`; ties give the first index, or the last with
    `select_last_index`. The result (i64) drops `axis` or keeps it as 1.

    ```mlir
    %i = tp.arg_reduce %x {kind = "max", axis = 1 : i64, keepdims = false,
                           select_last_index = false} : tensor<4x10xf32> -> tensor<4xi64>
    ```
  }];
  let arguments = (ins TP_NumericTensor:$input, StrAttr:$kind, I64Attr:$axis,
                       BoolAttr:$keepdims, BoolAttr:$select_last_index);
  let results = (outs StaticShapeTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}
def TP_ReshapeOp : TP_Op<"reshape", [Pure]> {
  let summary = "ONNX Reshape / Squeeze / Unsqueeze / Flatten with a static target";
  let description = [{
    Same elements in row-major order, another static shape. The importer
    resolves ONNX's `0` and `-1` entries.

    ```mlir
    %h = tp.reshape %q : tensor<4x16x64xf32> -> tensor<4x16x4x16xf32>
    ```
  }];
  let arguments = (ins TP_Tensor:$input);
  let results = (outs TP_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TP_TransposeOp : TP_Op<"transpose", [Pure]> {
  let summary = "ONNX Transpose: permute dims";
  let description = [{
    Result dim `i` is input dim `perm[i]`.

    ```mlir
    %t = tp.transpose %w {perm = array<i64: 1, 0>} : tensor<256x64xf32> -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins TP_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs TP_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::mlir::tp::foldTranspose(*this, adaptor.getInput());
    }
  }];
}

def TP_ConcatOp : TP_Op<"concat", [Pure]> {
  let summary = "ONNX Concat along one axis";
  let description = [{
    ```mlir
    %s = tp.concat %a, %b {axis = 0 : i64} : tensor<2xi64>, tensor<1xi64> -> tensor<3xi64>
    ```
  }];
  let arguments = (ins Variadic<TP_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs TP_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TP_SliceOp : TP_Op<"slice", [Pure]> {
  let summary = "ONNX Slice / Split with static, positive-step bounds";
  let description = [{
    For every dim `d`, takes indices `starts[d], starts[d] + steps[d], ...`
    below `limits[d]`; bounds are clamped and non-negative, steps positive.

    ```mlir
    %q = tp.slice %qkv {starts = array<i64: 0, 0>, limits = array<i64: 8, 64>, steps = array<i64: 1, 1>}
        : tensor<8x192xf32> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins TP_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$steps);
  let results = (outs TP_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TP_GatherOp : TP_Op<"gather", [Pure]> {
  let summary = "ONNX Gather: take slices of `data` along `axis` (embedding lookup)";
  let description = [{
    Result shape is `data.shape[:axis] + indices.shape + data.shape[axis+1:]`;
    negative indices count from the end, as in ONNX.

    ```mlir
    %e = tp.gather %table, %ids {axis = 0 : i64} : tensor<1000x64xf32>, tensor<4x16xi64> -> tensor<4x16x64xf32>
    ```
  }];
  let arguments = (ins TP_Tensor:$data,
                       StaticShapeTensorOf<[AnySignlessInteger]>:$indices,
                       I64Attr:$axis);
  let results = (outs TP_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def TP_GatherElementsOp : TP_Op<"gather_elements", [Pure]> {
  let summary = "ONNX GatherElements: one element of `data` per index";
  let description = [{
    `result[i...] = data[i...]` with the `axis` coordinate replaced by
    `indices[i...]` (negative counts from the end). `indices` has the rank
    of `data`, no dim larger than data's off the axis; the result has the
    shape of `indices`.

    ```mlir
    %p = tp.gather_elements %x, %i {axis = 1 : i64} : tensor<4x10xf32>, tensor<4x1xi64> -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins TP_Tensor:$data,
                       StaticShapeTensorOf<[AnySignlessInteger]>:$indices,
                       I64Attr:$axis);
  let results = (outs TP_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TP_OneHotOp : TP_Op<"one_hot", [Pure]> {
  let summary = "one-hot encoding of integer labels over the last dim";
  let description = [{
    `result[i..., c] = (indices[i...] == c + offset) ? 1 : 0` for `c` in
    `[0, depth)`, with `depth` the result's last dim. The labels side of
    tp-autodiff's cross-entropy loss; tp-partition splits the class dim by
    giving each device its slice's first class as `offset` (the vocab-parallel
    cross entropy of Megatron), so labels outside a slice give zero rows.

    ```mlir
    %oh = tp.one_hot %labels, %offset : tensor<8xi64>, tensor<i64> -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[AnySignlessInteger]>:$indices,
                       0DTensorOf<[I64]>:$offset);
  let results = (outs TP_FloatTensor:$result);
  let assemblyFormat = [{
    $indices `,` $offset attr-dict `:` type($indices) `,` type($offset)
    `->` type($result)
  }];
  let hasVerifier = 1;
}
def TP_MaskedGatherOp : TP_Op<"masked_gather", [Pure]> {
  let summary = "gather from a slice of a table; ids outside it give zeros";
  let description = [{
    The per-device half of a vocab-parallel embedding (Megatron): `data` is
    the slice of the table whose first row along `axis` has global index
    `offset`; an id inside the slice looks up its row, any other id gives
    zeros, so that summing over the devices gives the full lookup. Created
    by tp-partition, not by the importer.

    ```mlir
    %e = tp.masked_gather %slice, %ids, %offset {axis = 0 : i64}
        : tensor<500x64xf32>, tensor<4x16xi64>, tensor<i64> -> tensor<4x16x64xf32>
    ```
  }];
  let arguments = (ins TP_Tensor:$data,
                       StaticShapeTensorOf<[AnySignlessInteger]>:$indices,
                       0DTensorOf<[I64]>:$offset, I64Attr:$axis);
  let results = (outs TP_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $offset attr-dict `:` type($data) `,` type($indices)
    `,` type($offset) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TP_DropoutOp : TP_Op<"dropout", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "training-mode Dropout with a counter-based mask";
  let description = [{
    `result = keep ? input / (1 - ratio) : 0`, where `keep` is drawn per
    element by Philox4x32-10 (Salmon et al., SC'11; what cuRAND and
    PyTorch's CUDA generator use) from
    key = (`seed` low 32 bits, `seed` high 32 bits) and
    counter = (index low 32 bits, index high 32 bits, `site`, `step`):
    `keep` when its first output word is at least `ratio * 2^32`. `index`
    is the element's row-major index in `global_shape`, the whole tensor
    before sharding, so that a mask is the same on every mesh; `site`
    numbers the model's Dropout nodes and `step` counts the program's runs.
    Nothing is stored for the backward pass: the gradient is the same op
    applied to the output's gradient, which draws the same mask.

    tp-partition adds `offsets`: for each dim, the global index of this
    device's first element along it (none while the op is global).

    ```mlir
    %y = tp.dropout %x, %step {ratio = 1.000000e-01 : f64, seed = 0 : i64,
                               site = 2 : i64, global_shape = array<i64: 8, 64>}
        : tensor<8x64xf32>, tensor<i64> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins TP_FloatTensor:$input, 0DTensorOf<[I64]>:$step,
                       Variadic<0DTensorOf<[I64]>>:$offsets, F64Attr:$ratio,
                       I64Attr:$seed, I64Attr:$site,
                       DenseI64ArrayAttr:$global_shape);
  let results = (outs TP_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $step (`offsets` `(` $offsets^ `:` type($offsets) `)`)?
    attr-dict `:` type($input) `,` type($step) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TP_ExpandOp : TP_Op<"expand", [Pure]> {
  let summary = "ONNX Expand: broadcast to a static shape";
  let description = [{
    ```mlir
    %b = tp.expand %x : tensor<1x64xf32> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins TP_Tensor:$input);
  let results = (outs TP_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDefinition = [{
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor adaptor) {
      return ::mlir::tp::foldElementwise(*this, adaptor.getOperands());
    }
  }];
}

#endif // TP_DIALECT_TP_IR_TPOPS_TD
