//===- Passes.td - tp sharding passes ---------------------*- tablegen -*-===//

#ifndef TP_SHARDING_PASSES_TD
#define TP_SHARDING_PASSES_TD

include "mlir/Pass/PassBase.td"

def TPPropagateSharding : Pass<"tp-propagate-sharding", "::mlir::ModuleOp"> {
  let summary = "Decide every value's layout from the plan's annotations";
  let description = [{
    Propagates the `tp.sharding` annotations that tp-apply-plan put on
    arguments, results and ops through every tp op, forwards and backwards,
    to a fixed point, using each op's sharding rule (matmul's reduction
    factor, reshape's compound factors, softmax's replicated axis, ...).
    Plan annotations on weights win over those on activations, which win
    over propagated ones; elementwise and reshape-like ops are visited before
    contractions and reductions; the result is deterministic. Every op gets
    `tp.in_shardings` (what it reads) and `tp.out_shardings` (what it
    produces, possibly a partial sum) and `tp.sharding_origin` (why, which
    `--explain-sharding` prints; tp-compile asks for it only then: on a deep
    model's step it is one unique string per value). An op without a rule is
    replicated with a warning that names its ONNX node.
  }];
  let options = [
    Option<"recordOrigins", "record-origins", "bool", /*default=*/"true",
           "Record why each value has its layout (tp.sharding_origin)">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def TPPadUneven : Pass<"tp-pad-uneven", "::mlir::ModuleOp"> {
  let summary = "Pad unevenly split dims so that every split divides";
  let description = [{
    Runs on the global program after tp-propagate-sharding. A dim of n
    elements split k ways is padded at its end to k * ceil(n / k), so that
    device i holds torch.chunk's block i (ceil(n / k) elements, the last ones
    fewer or none) followed by padding. Each op pads the factors of its
    sharding rule, so that reshapes, contractions and elementwise ops agree
    on where the padding lies; reductions over a padded factor (matmul's
    contraction, ReduceSum / ReduceMean, a conv's input channels, a softmax
    axis) first select their neutral element in the padding. A value
    produced with one padding and read with another is cut and re-padded
    on a whole dim. The padding is recorded (`tp.padded_dims`), from which
    tp-partition takes real sizes: a mean's count, a vocab-parallel
    lookup's negative ids, the report's per-rank bytes. Function arguments
    and results take padded types; the runtime reads and writes only the
    real elements of each block.
  }];
}

def TPPartition : Pass<"tp-partition", "::mlir::ModuleOp"> {
  let summary = "Rewrite to the per-device program with explicit collectives";
  let description = [{
    Gives every value its per-device (local) type and, wherever a value's
    layout differs from what its user reads, inserts the cheapest
    resharding as upstream `shard` collectives on the mesh axes concerned:
    Partial -> Replicate is `shard.all_reduce`, Partial -> Shard is
    `shard.reduce_scatter`, Shard -> Replicate is `shard.all_gather`,
    Shard(i) -> Shard(j) is `shard.all_to_all`, Replicate -> Shard is a local
    `shard.all_slice`. Ops whose local meaning differs are rewritten: a
    vocab-split gather masks the ids outside the local slice, a ReduceMean
    over a split dim divides by the global count.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TPBucketAllReduces : Pass<"tp-bucket-all-reduces", "::mlir::ModuleOp"> {
  let summary = "Combine all_reduces into buckets, like DDP's gradient buckets";
  let description = [{
    Runs on the per-device program (after tp-partition). `shard.all_reduce`s
    over the same mesh axes with the same reduction and element type are
    replaced by one all_reduce of their flattened concatenation (then sliced
    back), in program order, while the bucket stays under `bucket-mb` MiB
    and no op between them reads one of their results. A training step's
    data-parallel gradient all_reduces, read only by the optimizer, become
    as few collectives as the cap allows (PyTorch DDP's `bucket_cap_mb`,
    25 by default); 0 turns bucketing off. With `grad-reduce-dtype=bf16`
    (DDP's bf16_compress_hook), the f32 all_reduces of weight gradients
    (those a `grad_*` result of the step reads) move bf16: rounded before,
    widened after, half the bytes.
  }];
  let options = [
    Option<"bucketMb", "bucket-mb", "double", "25",
           "Bucket size cap in MiB (0: no bucketing)">,
    Option<"gradReduceDtype", "grad-reduce-dtype", "std::string", "\"f32\"",
           "Element type weight gradients are all-reduced in: f32 or bf16">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def TPSplitStages : Pass<"tp-split-stages", "::mlir::ModuleOp"> {
  let summary = "Split the per-device program into its pipeline stages";
  let description = [{
    Runs after tp-partition on a module that tp-assign-stages gave a
    pipeline of two or more stages. The function becomes one private
    function per stage (`@<name>_stage<s>`: its ops, found by ONNX node
    name; the loss's on the last stage; the optimizer's with the gradient
    they read) and a dispatch on the device's coordinate along the stage
    axis (`scf.index_switch` over `shard.process_multi_index`). A value one
    stage computes and another reads becomes `shard.send` right after it is
    computed and `shard.recv` where it is first needed, in one order per
    pair of stages. Ops that read only arguments and constants are computed
    in each stage that needs them. Each result gets `tp.stage`, the stage
    whose value counts; the dispatch returns the others as the argument of
    the same name or an uninitialised tensor.
  }];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // TP_SHARDING_PASSES_TD
