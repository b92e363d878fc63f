//===- TPDialect.td - the tp dialect ----------------------*- tablegen -*-===//
//
// The tp dialect holds an imported ONNX graph with ONNX semantics and static
// shapes. Sharding is decided on it (ops still mean matmul, reshape, softmax),
// then it is lowered to linalg on local shapes.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_TPDIALECT_TD
#define TP_DIALECT_TP_IR_TPDIALECT_TD

include "mlir/IR/OpBase.td"

def TP_Dialect : Dialect {
  let name = "tp";
  let cppNamespace = "::mlir::tp";
  let summary = "ONNX-level tensor ops that tp shards and lowers";
  let description = [{
    One op per ONNX operator family, on statically shaped tensors, keeping
    ONNX semantics (multidirectional broadcasting, attributes). Every op
    carries its ONNX node name as its location, so diagnostics and sharding
    reports point back into the model.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class TP_Op<string mnemonic, list<Trait> traits = []>
    : Op<TP_Dialect, mnemonic, traits>;

// tp works on static shapes: symbolic dims are bound at import time.
def TP_Tensor : StaticShapeTensorOf<[AnyType]>;
def TP_FloatTensor : StaticShapeTensorOf<[AnyFloat]>;
def TP_NumericTensor : StaticShapeTensorOf<[AnyFloat, AnySignlessInteger]>;

#endif // TP_DIALECT_TP_IR_TPDIALECT_TD
