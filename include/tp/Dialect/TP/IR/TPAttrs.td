//===- TPAttrs.td - tp dialect attributes -----------------*- tablegen -*-===//

#ifndef TP_DIALECT_TP_IR_TPATTRS_TD
#define TP_DIALECT_TP_IR_TPATTRS_TD

include "tp/Dialect/TP/IR/TPDialect.td"
include "mlir/IR/AttrTypeBase.td"

def TP_ShardingAttr : AttrDef<TP_Dialect, "Sharding"> {
  let mnemonic = "sharding";
  let summary = "how a tensor is laid out over the device mesh";
  let description = [{
    For every tensor dim, the mesh axes (by name, major first) it is split
    over, and the mesh axes over which the tensor is a partial sum (each
    device holds a summand; PyTorch DTensor's `Partial()`). A dim with no axes
    is replicated over every axis not named elsewhere.

    Examples (in IR the dim list closes with `]>`): `[{}, {"tp"} ]` is
    Shard(1) over tp; `[{"dp"}, {} ], partial = {"tp"}` is the batch split
    over dp and a partial sum over tp.
  }];
  let parameters = (ins "::mlir::ArrayAttr":$dims, "::mlir::ArrayAttr":$partial);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // TP_DIALECT_TP_IR_TPATTRS_TD
