//===- Passes.td - tp plan passes -------------------------*- tablegen -*-===//

#ifndef TP_PLAN_PASSES_TD
#define TP_PLAN_PASSES_TD

include "mlir/Pass/PassBase.td"

def TPApplyPlan : Pass<"tp-apply-plan", "::mlir::ModuleOp"> {
  let summary = "Turn a parallelize plan and a mesh into sharding annotations";
  let description = [{
    Reads a plan (a JSON file and/or the options below, PyTorch's styles:
    colwise, rowwise, sequence, replicate) and annotates the imported
    function: `shard.grid @mesh` with the axis names, `tp.sharding` on
    weights (by the module their ONNX initializer name belongs to), on graph
    inputs and outputs (data parallel splits their batch dim), and on the ops
    of modules in sequence style; `tp.sharding_origin` says which entry
    decided. A plan entry that matches no module is an error that suggests
    the closest module names. Example:
    `tp-apply-plan{mesh=tp=2 entry=fc1=colwise,fc2=rowwise}`.
  }];
  let options = [
    Option<"planFile", "plan", "std::string", "\"\"",
           "Plan file (JSON); options below add to or override it">,
    ListOption<"meshSpec", "mesh", "std::string",
               "Mesh axes in order, e.g. dp=2,tp=4">,
    ListOption<"entries", "entry", "std::string",
               "Plan entries module=style[@axis], e.g. fc1=colwise">,
    Option<"dataParallel", "data-parallel", "std::string", "\"\"",
           "Mesh axis that splits every input's batch dim">,
    ListOption<"inputs", "inputs", "std::string",
               "Input layouts name=replicate|sequence|shard(d)[@axis]">,
    ListOption<"outputs", "outputs", "std::string",
               "Output layouts name=replicate|sequence|shard(d)[@axis]">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def TPSplitFusedProjections
    : Pass<"tp-split-fused-projections", "::mlir::ModuleOp"> {
  let summary = "Give a colwise fused projection (q, k, v in one weight) "
                "Megatron's strided split";
  let description = [{
    Runs on the imported forward graph, before tp-autodiff and
    tp-apply-plan, for the plan's colwise entries. A weight read by one
    matmul (directly, [in, out], or transposed, a Linear's [out, in]),
    plus its bias, whose output is only sliced along its last dim into
    equal parts (GPT-2's c_attn split into q, k and v) becomes a view of
    the same bytes with the parts as a dim of their own, and the matmul
    one matmul per part on its slice of the view. tp-apply-plan's colwise
    split of the view then gives each device its block of every part
    (DTensor's _StridedShard), so that the parts, the head reshape and the
    attention stay local: a fused block has the collectives of Megatron's
    unfused one. The arguments record `tp.fused_view` (parts, out dim, in
    dim) and `tp.onnx_shape` (the initializer's dims, which the runtime
    reads and writes).
  }];
  let options = [
    Option<"planFile", "plan", "std::string", "\"\"",
           "Plan file (JSON)">,
    ListOption<"entries", "entry", "std::string",
               "Plan entries module=style[@axis], e.g. c_attn=colwise">,
  ];
}

def TPAssignStages : Pass<"tp-assign-stages", "::mlir::ModuleOp"> {
  let summary = "Cut the imported graph into the plan's pipeline stages";
  let description = [{
    For a plan with "pipeline" (its mesh axis, optionally the modules that
    begin stages 1, 2, ... as `split_before`, the microbatches and the
    schedule), gives the module `tp.pipeline`: the stage of every ONNX
    node of the imported forward graph (`node_stages`, by node name), and
    per stage its first module, FLOPs, parameter bytes and the activation
    bytes it sends on per microbatch.
    Without split_before, the cuts fall at layer starts (the numbered
    children of the shallowest ModuleList: `layers.N`, `h.N`) and balance
    FLOPs plus parameter bytes. Errors name the plan's pipeline: an axis
    that is not in the mesh, a split point that names no module or is out
    of order, a number of split points that does not match the axis, more
    stages than layers, microbatches that do not divide the batch. Without
    a pipeline in the plan the pass does nothing. Example:
    `tp-assign-stages{mesh=pp=2 pipeline=axis=pp,split_before=layers.1}`.
  }];
  let options = [
    Option<"planFile", "plan", "std::string", "\"\"",
           "Plan file (JSON); the options below override it">,
    ListOption<"meshSpec", "mesh", "std::string",
               "Mesh axes in order, e.g. pp=2,tp=2">,
    Option<"pipeline", "pipeline", "std::string", "\"\"",
           "axis=pp[,split_before=layers.4+layers.8][,microbatches=8]"
           "[,schedule=gpipe|1f1b]">,
    Option<"dataParallel", "data-parallel", "std::string", "\"\"",
           "Mesh axis that splits every input's batch dim">,
  ];
}

def TPAutocast : Pass<"tp-autocast", "::mlir::ModuleOp"> {
  let summary = "Mixed precision: matmuls and convolutions on bf16 operands, "
                "summed in f32 (torch.autocast)";
  let description = [{
    Runs on the imported forward graph, before tp-autodiff. With
    `precision=bf16`, every tp.matmul and tp.conv on f32 operands reads
    them rounded to bf16 (one tp.cast per value, right after it is
    defined) and keeps its f32 result: the products run on bf16 hardware
    and are summed in f32, as torch.autocast's CPU and CUDA kernels do.
    Everything else stays f32: elementwise math, norms, softmax, the loss,
    the weights (master weights) and the optimizer. tp-autodiff then
    differentiates through the casts: the matmuls of the backward pass take
    bf16 operands too, the values the backward pass keeps for them are the
    bf16 copies (half the bytes), and weight gradients are summed in f32.
    `precision=f32` (the default) leaves the graph as it is. With
    `bf16-weights` (a forward-only program: no optimizer needs f32 master
    weights), a weight read only through its bf16 copy becomes a bf16
    argument, which the runtime rounds once when it loads the weights:
    half the bytes. Example: `tp-autocast{precision=bf16 bf16-weights}`.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"f32\"",
           "f32 (nothing changes) or bf16">,
    Option<"bf16Weights", "bf16-weights", "bool", "false",
           "Weights read only by products become bf16 arguments "
           "(forward-only programs)">,
  ];
}

#endif // TP_PLAN_PASSES_TD
