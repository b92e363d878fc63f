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
    indexing maps, and constants become `arith.constant`. A GEMM operand
    that is a transpose of its last two dims is then read through a
    transposed indexing map instead (BLAS takes it as a flag). Runs after
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

def TPFuseElementwise : Pass<"tp-fuse-elementwise"> {
  let summary = "Upstream linalg elementwise fusion that leaves GEMMs alone";
  let description = [{
    linalg-fuse-elementwise-ops with a control function: producers with one
    use fuse into their consumers, and reshapes fold into linalg ops by
    expansion, except where the producer or the consumer is a
    `linalg.matmul` / `linalg.batch_matmul`. Upstream's pass folds the
    reshapes around a matmul on `[B*S, D]` into a `linalg.generic`, which
    then runs as scalar loops instead of on the runtime's GEMM
    (tp-lower-matmul-to-blas).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def TPFreeAfterLastUse : Pass<"tp-free-after-last-use", "::mlir::ModuleOp"> {
  let summary = "Free each temporary buffer right after its last use";
  let description = [{
    Runs on buffers after buffer-deallocation-pipeline, which frees what a
    block allocates at the block's end: a training step, one block, would
    keep every temporary of the forward and the backward pass alive to the
    end. Each `memref.dealloc` of a `memref.alloc` in the same block moves
    to just after the last op of that block that uses the buffer or a view
    of it (subview, reshapes, casts), so that the caching allocator hands
    the bytes to the next temporary. A buffer that flows into an op that
    may alias it otherwise keeps its dealloc where it was.

    Two cases the move alone leaves, both the cost of calling a layer's
    function (tp-outline-repeated-layers):
    - A public function's buffer whose last use is its copy into an output
      parameter (buffer-results-to-out-params copies what a call returned,
      a layer's weight gradient, at the step's end) is replaced by the
      parameter: one buffer instead of two held to the end.
    - A private function whose every caller passes, at one argument, its
      own buffer that it frees right after the call frees that argument
      itself after its last use there: a layer's backward function drops
      each activation its forward kept once it has read it, not when it
      returns.

    tp-plan-peak-memory then records the peak these frees give.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TPPlanPeakMemory : Pass<"tp-plan-peak-memory", "::mlir::ModuleOp"> {
  let summary = "Record the planned peak of a step's temporary bytes";
  let description = [{
    Walks the module's public function (the step) in program order and
    records the most bytes of its allocations live at once as the
    module's `tp.peak_temporary_bytes` (each allocation rounded up to 64
    bytes, as the runtime's allocator hands them out; a call adds its
    callee's peak, and frees the arguments the callee deallocates), and
    for a pipeline's dispatch the step's peak at each stage function's
    call (`tp.peak_bytes_at_calls`). The manifest carries them, --report
    prints them, and tp-run --profile compares them with what the step
    allocated. It runs after every pass that moves allocations or frees:
    on the CPU after tp-fuse-parallel-loops, which hoists the allocations
    between the loops it merges and sinks their frees.
  }];
}

def TPFreeDistinctAllocations
    : Pass<"tp-free-distinct-allocations", "::mlir::func::FuncOp"> {
  let summary = "Free a block's own allocations without alias analysis";
  let description = [{
    Runs between ownership-based-buffer-deallocation and
    buffer-deallocation-simplification (tp spells out
    buffer-deallocation-pipeline to put it there). Each buffer that a
    `bufferization.dealloc` without retained values frees unconditionally
    and that is a `memref.alloc` of the function (seen through its base
    buffer and views), appearing once in the op, gets a `memref.dealloc` of
    its own before the op. The op keeps the rest; it is erased when none is
    left. An op with a buffer of unknown origin that it may free is left
    as it is. This is what the simplification would conclude, but it asks
    whether every pair of buffers may alias: quadratic in a training
    step's thousands of temporaries.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TPStageResultsToOutParams
    : Pass<"tp-stage-results-to-out-params", "::mlir::ModuleOp"> {
  let summary = "A pipeline's stages write the step's results in place";
  let description = [{
    Runs on buffers after buffer-results-to-out-params, in a module that
    tp-split-stages cut into pipeline stages. There the dispatch
    (`scf.index_switch` on the stage coordinate) yields, per result of the
    step, a buffer each case allocated (its stage function's output, or a
    stand-in for a result another stage computes) or an argument, and the
    step copies the yielded buffer into its output parameter. This pass
    hands each stage function the output parameter itself and drops the
    stand-ins and the copies: a stage writes only the results it computes,
    holds no second copy of them, and leaves the others untouched, so that
    tp-run need not allocate them on that stage's ranks.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TPFindInPlaceUpdates : Pass<"tp-find-in-place-updates", "::mlir::ModuleOp"> {
  let summary = "Find the results that may share their argument's buffer";
  let description = [{
    Runs on buffers after buffer-results-to-out-params, where a training
    step's updated weights and optimizer state are output buffers written
    by one elementwise op reading the argument they update at the same
    index (`w - lr * g`). When that op is the first to touch the output and
    nothing reads the argument after it, the output may be the argument's
    own buffer: the update happens in place and the step holds one copy of
    the weights, not two. Records each such (output argument, argument)
    pair, as argument numbers after bufferization, in the module's
    `tp.in_place_updates`; the manifest marks those results `in_place` and
    the runtime hands the program the argument's buffer for them.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TPOutlineRepeatedLayers
    : Pass<"tp-outline-repeated-layers", "::mlir::ModuleOp"> {
  let summary = "Compile a model's repeated layers once: one function per "
                "distinct layer, called for each";
  let description = [{
    Runs on the per-device program (tp ops on local shapes, in the CPU
    pipeline right after partition; linalg on tensors works as well),
    before the collectives are lowered. The ops of one layer (their ONNX node names
    share a numbered scope, `/model/layers.3/...`) that follow one another
    form a run: a layer's forward ops, and its backward ops in a training
    step. Each run moves into a function taking the values it reads (the
    layer's weights, its input, the activations its backward pass reads)
    and returning those the rest of the step reads; runs that are the same
    but for those values call one function, marked `noinline` and named
    after every layer (`/model/layers.*/mlp/Mul`: the collective sites and
    messages say so). Runs that repeat fewer than `min-repeats` times stay
    inline. tp-compile runs it with N = 2 unless told otherwise
    (`--outline-layers=N`, 0 to keep every layer inline).

    The lowering to linalg, elementwise fusion, bufferization, the
    lowering to loops and LLVM then see each distinct layer once, so a deep model's compile time and memory grow with its
    number of distinct layers rather than with its depth.
  }];
  let options = [
    Option<"minRepeats", "min-repeats", "unsigned", "2",
           "Outline only runs that occur at least this many times">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect"];
}

def TPLinalgToLoops : Pass<"tp-linalg-to-loops"> {
  let summary = "Linalg ops on buffers to scf.for loop nests";
  let description = [{
    Upstream's `convert-linalg-to-loops` (`linalg::linalgOpToLoops`, with
    the folding of memref.dim and affine.apply it applies), driven from
    the linalg ops alone. The upstream pass hands every op of the function
    to the greedy rewriter and then simplifies its regions: on a 96-layer
    training step, whose straight-line code is tens of thousands of ops
    that none of its patterns change, that took 1.7 s of tp-compile's 15.
    A `memref.copy` between strided views becomes a `linalg.copy` first,
    hence a loop nest: lowered as a copy it would call the C runner's
    `memrefCopy`, which walks the view an element at a time.

    The outer loops of a nest whose iterations are independent (the fewest
    of the op's leading parallel dims that make 16 iterations, never the
    innermost of several, kept for the vectorizer) become one
    `scf.parallel` over their linearized range when the whole nest runs at
    least `min-parallel-iterations` times: tp-outline-loop-nests splits it
    into one chunk per thread.
  }];
  let options = [
    Option<"minParallelIterations", "min-parallel-iterations", "int64_t",
           /*default=*/"32768",
           "Nests of fewer iterations stay serial (0: every nest does)">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def TPExpandArith : Pass<"tp-expand-arith"> {
  let summary = "arith-expand{include-bf16} but for min and max";
  let description = [{
    Upstream's ceil / floor division and bf16 conversion expansions (what
    the CPU's LLVM lowering cannot lower itself); min and max ops stay and
    become LLVM's maxnum / maximum intrinsics, whose row reductions LLVM
    vectorizes. Upstream's arith-expand also turns every min and max into
    compares and selects, which left a softmax's row max scalar.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def TPFuseParallelLoops : Pass<"tp-fuse-parallel-loops"> {
  let summary = "Adjacent parallel nests over the same rows run as one";
  let description = [{
    Runs after tp-linalg-to-loops. A softmax is five nests over the same
    rows (scale, max, exp, sum, divide), a layer norm four: each sweeps the
    whole tensor, which comes from memory each time when it does not fit
    in the cache. Two adjacent 1-D `scf.parallel` loops over the same rows
    (the same range, delinearized the same way) become one, whose
    iteration runs the first body and then the second on its row, when
    that computes the same: every buffer one of them writes and the other
    touches is touched, in both, through one view and only at the
    iteration's own row (the accesses' leading indices are the row's
    indices), and neither body touches memory other than by loads and
    stores. Allocations and ops that touch no memory between the two move
    before the first, frees after the second; anything else between them
    keeps them apart.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def TPOutlineLoopNests : Pass<"tp-outline-loop-nests", "::mlir::ModuleOp"> {
  let summary = "Move every top-level loop nest into a function of its own";
  let description = [{
    Runs on buffers after convert-linalg-to-loops. Each `scf.for` nest at
    the top level of a function becomes a private, `no_inline` function
    taking the buffers and values it uses, marked for LLVM as internal and
    `noinline`. A training step of many layers is otherwise one LLVM
    function of thousands of loops, on which LLVM's loop passes take
    minutes (their cost grows faster than the function); per loop nest
    they take milliseconds, and each loop is optimized the same way.

    Nests that are the same but for the buffers they are given (a model's
    repeated layers) share one function, so a deep model's kernels are
    optimized and compiled once. Constants come into the function (not as
    arguments), and the calls replace the nests directly.

    What is left of the calling function is one basic block of allocations
    and calls; unless a loop stayed in it, it is marked `optnone`: LLVM's
    code generator takes time that grows faster than a block on one block
    of thousands of calls, and optimizing it gains nothing measurable.

    A nest's buffer argument is `llvm.noalias` where, at every call, it is
    a view of an allocation (or a constant global) that no other argument
    of the call views; a function's own arguments are not (the caller's
    buffers may overlap). Without it LLVM assumes that a nest's stores may
    change what it loads: short rows stay scalar (im2col's) and every
    vectorized loop is guarded by overlap checks.

    A 1-D `scf.parallel` at the top level (tp-linalg-to-loops' independent
    outer loops) becomes an OpenMP parallel loop with one contiguous chunk
    of its range per thread (`num_threads` from `tprt_loop_threads()`, the
    rank's share of the cores); each chunk is an `scf.for` over that range,
    outlined as any nest, so its inner loops and `noalias` arguments are
    those of a serial nest.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::omp::OpenMPDialect",
                           "::mlir::scf::SCFDialect"];
}

def TPTraceKernelSites : Pass<"tp-trace-kernel-sites", "::mlir::ModuleOp"> {
  let summary = "Number each loop nest's and GEMM's call for tp-run --trace and --profile";
  let description = [{
    Runs after tp-outline-loop-nests. Each call of an outlined loop nest,
    each OpenBLAS GEMM call and each oneDNN convolution call gets a site
    number and is bracketed by
    `tprt_kernel_begin(site)` and `tprt_kernel_end(site)`: with tracing or
    profiling on, the runtime records the call's time under the site's
    name (its ONNX node, as --report names places); off, each call tests a
    thread-local pointer. The names go to the module attribute
    `tp.kernel_sites`, and from there to the manifest's `kernel_sites`.

    Each site also gets a kernel family (`tp.kernel_families`), which
    `tp-run --profile` totals per step: `convolution` (a conv's library
    call, or its im2col, GEMM and layout moves: the lowering tags their
    locations), `gemm`,
    `reduction` (a nest that carries an accumulator or stores an element
    on several iterations), `elementwise` (a nest that computes on data),
    `copy` (one that only moves it).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def TPLowerCollectives : Pass<"tp-lower-collectives", "::mlir::ModuleOp"> {
  let summary = "Lower shard collectives to calls into the tprt runtime";
  let description = [{
    Rewrites the per-device program's `shard` collectives (all_reduce,
    all_gather, reduce_scatter, all_to_all, all_slice) and
    `shard.process_multi_index` into calls of the runtime's C ABI
    (`runtime/include/tprt/tprt.h`): buffers are passed as pointers with
    element counts, mesh axes as a bit mask that the runtime resolves to a
    communicator group, so the program never knows which backend (threads,
    MPI) runs it. all_to_all becomes an all_gather and a local slice;
    all_slice a local slice at this device's index. Each collective gets a
    site number; the module's `tp.collective_sites` names them (kind and
    ONNX node) for the runtime's error messages. Removes `shard.grid`.
    With `target=cuda` the calls are the `tprt_cuda_` entry points, which
    take device buffers and order the collective after the kernels before it
    (NCCL when the runtime has it).
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "cpu (tprt_*) or cuda (tprt_cuda_*): which runtime entry points">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def TPApproximateMath : Pass<"tp-approximate-math"> {
  let summary = "f32 exp, log, erf and tanh as polynomials that vectorize";
  let description = [{
    For the CPU target. libm's scalar calls (expf, erff, ...) keep LLVM's
    loop vectorizer off every loop that has one: softmax's exponentials,
    GELU's erf, the losses' logarithms. Upstream's polynomial
    approximations of f32 `math.exp`, `expm1`, `log`, `log1p`, `log2`,
    `erf` and `tanh` are plain arithmetic, which the vectorizer widens to
    the CPU's vector width (errors of a few ulp; `numerics.mlir` and the
    e2e tests compare with numpy and PyTorch).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def TPLowerMatmulToBlas : Pass<"tp-lower-matmul-to-blas", "::mlir::ModuleOp"> {
  let summary = "Call the runtime's GEMM (OpenBLAS) for f32 matmuls on buffers";
  let description = [{
    After bufferization: every `linalg.matmul` and `linalg.batch_matmul` on
    f32 memrefs with the identity layout, reading A and B plain or
    transposed (the indexing maps tp-lower-to-linalg gives a GEMM whose
    operand was a transpose), becomes a call of `tprt_sgemm` /
    `tprt_sgemm_batched` (row-major C += A B, with `TPRT_TRANS_A` /
    `TPRT_TRANS_B` flags), which the runtime implements with OpenBLAS.
    Other matmuls stay for the loop lowering. With `target=cuda`, f32, f16 and bf16 matmuls become
    `tprt_cuda_gemm` (cuBLAS; a batch count and the element type code).
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "cpu (tprt_sgemm, OpenBLAS) or cuda (tprt_cuda_gemm, cuBLAS)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def TPLowerConvToDnnl : Pass<"tp-lower-conv-to-dnnl", "::mlir::ModuleOp"> {
  let summary = "Call the runtime's convolutions (oneDNN) for f32 convs and their gradients";
  let description = [{
    For the CPU, before tp-lower-to-linalg: every f32 `tp.conv`,
    `tp.conv_input_grad` and `tp.conv_filter_grad` with 1 to 3 spatial
    dims becomes a call of `tprt_conv` on its operands' buffers (as
    tp-lower-collectives calls collectives: `bufferization.to_buffer`, a
    result buffer, `bufferization.to_tensor`), with the kind of
    convolution and a constant array of its shape and attributes
    (`TPRT_CONV_*` in tprt.h). The runtime runs oneDNN's direct kernels,
    PyTorch's on the CPU. A mixed-precision one (bf16 operands, f32
    result: tp-autocast) runs on oneDNN's bf16 kernels (`TPRT_CONV_BF16`
    in the kind); f16 operands are widened to f32 (`tp.cast`).
    Other convs stay for tp-lower-to-linalg (im2col and a GEMM) and
    tp-expand-conv-gradients.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def TPPrepareGpuBuffers : Pass<"tp-prepare-gpu-buffers", "::mlir::ModuleOp"> {
  let summary = "Make every buffer a kernel touches device memory, every copy a kernel";
  let description = [{
    Runs on buffers, before convert-linalg-to-parallel-loops, for the CUDA
    target. Kernels cannot read host globals: every `memref.get_global`
    becomes a fresh allocation (device memory, through the runtime's
    allocator) filled from the global once per call by `gpu.memcpy`.
    `memref.copy` between buffers becomes `linalg.copy`, so that it runs as
    a kernel: host code never dereferences a buffer. A `linalg.generic` whose reduction dims come before
    parallel ones is interchanged so that the parallel dims are outermost:
    they become one kernel, not one kernel per reduction step.

    With `host-upload`, the global's copy stays a `memref.copy`: for
    running the kernels' loops on the CPU (`tp-compile --gpu-loops-on-cpu`).
  }];
  let options = [
    Option<"hostUpload", "host-upload", "bool", /*default=*/"false",
           "Fill a global's copy with memref.copy, not gpu.memcpy (the loops "
           "run on the host)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TPTileParallelLoopsForGpu
    : Pass<"tp-tile-parallel-loops-for-gpu", "::mlir::func::FuncOp"> {
  let summary = "Collapse and tile top-level scf.parallel loops for GPU blocks";
  let description = [{
    Every outermost `scf.parallel` is collapsed into one dimension and tiled
    by `block-size` with an in-bounds guard, so that gpu-map-parallel-loops
    maps the tiles to blocks and the elements of a tile to threads
    (`block-size` threads per block, whatever the loop's rank and shape).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def TPBufferizeStepSignature
    : Pass<"tp-bufferize-step-signature", "::mlir::ModuleOp"> {
  let summary = "The step's arguments and results as buffers, before "
                "one-shot-bufferize";
  let description = [{
    Runs right before `one-shot-bufferize{bufferize-function-boundaries}`
    on the public functions (the step), which nothing calls. Each tensor
    argument becomes a memref with the identity layout (what
    `function-boundary-type-conversion=identity-layout-map` gives it) read
    through `bufferization.to_tensor restrict writable` (a function
    argument's tensor: no other tensor aliases it, and ops may write into
    it); each tensor result becomes `bufferization.to_buffer` of the value
    returned (what one-shot's return does). One-shot then bufferizes the
    body and its calls as before, but relates no result to any argument:
    it would test every (result, argument) pair of the step for aliasing
    and equivalence, information only a caller uses, and for a deep
    training step (thousands of weights in, their updates out) that
    product took half of bufferization and grew with the square of depth.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def TPPackStepArguments : Pass<"tp-pack-step-arguments", "::mlir::ModuleOp"> {
  let summary = "The step takes one pointer to its memref descriptors";
  let description = [{
    Runs right before convert-to-llvm, on the public function (the step),
    whose results buffer-results-to-out-params made output parameters.
    The step's memref arguments become one `!llvm.ptr` argument, the
    array of descriptor pointers `tp_entry(void **args)` receives: the
    body loads each descriptor from its slot and casts it back to the
    memref its ops read (reconcile-unrealized-casts folds the casts).
    Without it the step has one argument per buffer (thousands for a deep
    training step), MLIR's C interface a wrapper taking them all as
    pointers and the LLVM function every descriptor expanded into
    scalars; converting such a signature took seconds that grow with the
    number of arguments times the number of ops.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def TPFoldDescriptorReads : Pass<"tp-fold-descriptor-reads", "::mlir::ModuleOp"> {
  let summary = "Read a memref descriptor's fields where they were written";
  let description = [{
    Runs on the LLVM dialect, after convert-to-llvm. An `llvm.extractvalue`
    of a field that the `llvm.insertvalue` chain of its struct wrote is
    replaced by the inserted value; ops left without users (the rest of
    the chain, its constants) are erased. The descriptors that
    finalize-memref-to-llvm builds for a training step's allocations are
    mostly read back for their pointers only (a layer takes its buffers as
    bare pointers; free takes the allocated one): at 96 layers this drops
    ~40% of the step's LLVM ops, which translation, the verifier and code
    generation each walked. A linear walk, where canonicalization would
    iterate the whole function to a fixed point.
  }];
}

def TPBarePointerCalls : Pass<"tp-bare-pointer-calls", "::mlir::ModuleOp"> {
  let summary = "Private functions take their buffers as bare pointers";
  let description = [{
    Runs right before the lowering to LLVM on the CPU. Marks `llvm.bareptr`
    (MLIR's per-function bare-pointer calling convention, which
    convert-to-llvm honours at the function and at each call) every
    private function with a body that only `func.call` uses and whose
    memref arguments and results all have static shapes, strides and
    offsets: the layer functions of a deep step, called once per layer,
    and the loop nests. Without it each memref crosses a call as its
    whole descriptor (allocated and aligned pointer, offset, sizes,
    strides): a layer's ~90 buffers became ~900 scalars at each of its
    calls, half of the LLVM IR of a 96-layer training step, converted and
    translated per layer.

    The callee rebuilds each descriptor from the aligned pointer and the
    static type, with the allocated pointer equal to it; a callee that
    frees an argument (tp-free-after-last-use) therefore needs
    allocations whose two pointers are equal, which
    `finalize-memref-to-llvm{use-aligned-alloc}` gives.
  }];
}

#endif // TP_CONVERSION_PASSES_TD
