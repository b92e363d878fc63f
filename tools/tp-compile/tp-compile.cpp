//===- tp-compile.cpp - the tp driver: model.onnx -> program --------------===//
//
//   tp-compile model.onnx [--shape x=8x64] --emit=tp|linalg -o out.mlir
//
// Nothing is written unless every stage succeeds.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"
#include "tp/Import/ModuleTree.h"
#include "tp/Import/OnnxImporter.h"
#include "tp/InitTP.h"
#include "tp/Autodiff/Autodiff.h"
#include "tp/Plan/Passes.h"
#include "tp/Plan/Plan.h"
#include "tp/Sharding/Passes.h"
#include "tp/Sharding/Report.h"
#include "tp/Target/Program.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/Regex.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Emit { TP, Linalg, Sharded, Program, Gpu, NVVM, Ptx };

cl::OptionCategory category("tp-compile options");

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<model.onnx>"), cl::cat(category));
cl::opt<std::string> outputFile("o",
                                cl::desc("Output: a file ('-' for stdout), "
                                         "or the program folder when the "
                                         "name ends in '/', is a folder, or "
                                         "(with a plan) does not end in "
                                         ".mlir"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(category));
cl::list<std::string>
    shapes("shape",
           cl::desc("Bind a graph input's shape, e.g. --shape x=8x64 "
                    "(repeat or comma-separate for several inputs)"),
           cl::value_desc("input=d0xd1..."), cl::CommaSeparated,
           cl::cat(category));
cl::list<std::string> constantInputs(
    "constant-input",
    cl::desc("Bind a graph input to a value at compile time, e.g. "
             "--constant-input k=k.npy (a .npy file or an ONNX TensorProto "
             ".pb): for inputs tp needs as constants (TopK's K, Resize's "
             "scales, Reshape's shape); the program no longer takes them"),
    cl::value_desc("input=file"), cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::TP),
    cl::values(
        clEnumValN(Emit::TP, "tp",
                   "the tp dialect (per-device when a plan is given)"),
        clEnumValN(Emit::Linalg, "linalg",
                   "after tp-lower-to-linalg (linalg/tensor/arith/math)"),
        clEnumValN(Emit::Sharded, "sharded",
                   "the per-device program in linalg with shard collectives "
                   "(needs a plan)"),
        clEnumValN(Emit::Program, "program",
                   "out/program.so and out/manifest.json for tp-run (the "
                   "default when -o names a directory)"),
        clEnumValN(Emit::Gpu, "gpu",
                   "CUDA: kernels in the gpu dialect, cuBLAS calls on the "
                   "host"),
        clEnumValN(Emit::NVVM, "nvvm",
                   "CUDA: the kernels lowered to NVVM for --arch"),
        clEnumValN(Emit::Ptx, "ptx",
                   "CUDA: the kernels' PTX (what ptxas assembles)")),
    cl::cat(category));
cl::opt<std::string> targetOpt(
    "target",
    cl::desc("cpu (OpenBLAS GEMMs, loops; the default) or cuda (cuBLAS "
             "GEMMs, generated kernels, NCCL collectives)"),
    cl::init("cpu"), cl::cat(category));
cl::opt<std::string> archOpt(
    "arch", cl::desc("CUDA: the GPU architecture of the kernels"),
    cl::init("sm_90"), cl::cat(category));
cl::opt<int64_t> blockSizeOpt(
    "block-size", cl::desc("CUDA: threads per block of generated kernels"),
    cl::init(256), cl::cat(category));
cl::opt<unsigned> outlineLayers(
    "outline-layers",
    cl::desc("CPU: layers that repeat at least N times are compiled once, "
             "as one function per distinct layer called for each, so that "
             "compile time grows with the distinct layers rather than the "
             "depth (96-layer training step: 1.2 s, 6-7 s inline); the step "
             "needs the same memory and time as inline. 0: every layer "
             "inline"),
    cl::value_desc("N"), cl::init(2), cl::cat(category));
cl::opt<int64_t> parallelLoopsOpt(
    "parallel-loops",
    cl::desc("CPU: a loop nest of at least N iterations runs on all of a "
             "rank's threads (tp-run --threads-per-rank), its independent "
             "outer loops split among them, and adjacent such nests over the "
             "same rows run as one (a softmax, a norm); smaller nests run "
             "on one thread, where a fork would cost more than it saves. "
             "0: every nest on one thread"),
    cl::value_desc("N"), cl::init(32768), cl::cat(category));
cl::opt<bool> gpuLoopsOnCpu(
    "gpu-loops-on-cpu",
    cl::desc("A CPU program whose loops are the CUDA target's kernels "
             "(buffers prepared for the GPU, parallel loops tiled into "
             "blocks of --block-size threads), run one after another: "
             "checks the GPU-specific rewrites without a GPU"),
    cl::cat(category));
cl::opt<std::string> cudaPathOpt(
    "cuda-path",
    cl::desc("CUDA: the toolkit whose ptxas and libdevice build the kernels "
             "(default: $CUDA_ROOT, $CUDA_HOME, $CUDA_PATH, else "
             "/usr/local/cuda)"),
    cl::value_desc("dir"), cl::cat(category));
cl::OptionCategory planCategory("parallelize plan options (docs/Plans.md)");
cl::opt<std::string> planFile("plan", cl::desc("Plan file (JSON)"),
                              cl::value_desc("plan.json"),
                              cl::cat(planCategory));
cl::opt<std::string> meshSpec(
    "mesh", cl::desc("Device mesh, e.g. --mesh tp=4 or --mesh dp=2,tp=4 "
                     "(overrides the plan file's)"),
    cl::value_desc("axis=size,..."), cl::cat(planCategory));
cl::list<std::string> planEntries(
    "plan-entry",
    cl::desc("Plan entry module=style[@axis] (styles: colwise, rowwise, "
             "sequence, replicate); adds to or overrides the file's"),
    cl::value_desc("module=style"), cl::CommaSeparated, cl::cat(planCategory));
cl::opt<std::string> dataParallel(
    "data-parallel", cl::desc("Mesh axis that splits every input's batch dim"),
    cl::value_desc("axis"), cl::cat(planCategory));
cl::opt<bool> syncBatchNorm(
    "sync-batchnorm",
    cl::desc("Training-mode BatchNormalization takes its statistics over the "
             "whole batch (PyTorch's SyncBatchNorm: all-reduced over the "
             "data-parallel axis), not each rank's part (DDP); as "
             "\"sync_batchnorm\": true in a plan file"),
    cl::cat(planCategory));
cl::opt<std::string> precisionOpt(
    "precision",
    cl::desc("f32, or bf16: matmuls and convolutions on bf16 operands summed "
             "in f32, weights, optimizer and everything else in f32 "
             "(torch.autocast; tp-autocast); as \"precision\": \"bf16\" in a "
             "plan file"),
    cl::value_desc("f32|bf16"), cl::cat(planCategory));
cl::opt<bool> keepF32Weights(
    "keep-f32-weights",
    cl::desc("With --precision bf16 and no --train: keep the weights f32 "
             "rather than storing the ones products read as bf16 (the Python "
             "package does: a module's forward shares its weights with its "
             "training step)"),
    cl::cat(planCategory));
cl::opt<std::string> gradReduceDtype(
    "grad-reduce-dtype",
    cl::desc("Element type the data-parallel all-reduces of weight gradients "
             "move: f32, or bf16 (half the bytes; DDP's bf16_compress_hook); "
             "as \"grad_reduce_dtype\" in a plan file"),
    cl::value_desc("f32|bf16"), cl::cat(planCategory));
cl::list<std::string> inputLayouts(
    "input-layout",
    cl::desc("Layout of a graph input: name=replicate|sequence|shard(d)"),
    cl::value_desc("name=layout"), cl::CommaSeparated, cl::cat(planCategory));
cl::list<std::string> outputLayouts(
    "output-layout",
    cl::desc("Layout of a graph output: name=replicate|sequence|shard(d)"),
    cl::value_desc("name=layout"), cl::CommaSeparated, cl::cat(planCategory));
cl::opt<std::string> pipelineSpec(
    "pipeline",
    cl::desc("Pipeline parallelism: consecutive modules on the stages of a "
             "mesh axis, the batch in microbatches (as \"pipeline\" in a "
             "plan file, whose keys this overrides): "
             "axis=pp[,split_before=layers.4+layers.8][,microbatches=8]"
             "[,schedule=gpipe|1f1b]; without split_before, tp balances the "
             "stages by FLOPs and parameter bytes (--report shows them)"),
    cl::value_desc("axis=pp,..."), cl::cat(planCategory));
cl::opt<bool> explainSharding(
    "explain-sharding",
    cl::desc("Print every value's layout and why it has it (to stdout)"),
    cl::cat(planCategory));
cl::opt<std::string> report(
    "report", cl::ValueOptional,
    cl::desc("Print the per-device collectives and memory (to stdout); "
             "--report=json for JSON"),
    cl::value_desc("json"), cl::cat(planCategory));

cl::OptionCategory trainCategory("training options");
cl::opt<bool> train("train",
                    cl::desc("Compile the training step (tp-autodiff): loss, "
                             "every weight's gradient, updated weights"),
                    cl::cat(trainCategory));
cl::opt<std::string> lossKind(
    "loss",
    cl::desc("mse (mean of the squared output), cross_entropy (logits "
             "against integer `labels`, vocab-parallel when the classes are "
             "split) or output (the model's scalar output)"),
    cl::init("mse"), cl::cat(trainCategory));
cl::opt<int64_t> ignoreIndexOpt(
    "ignore-index",
    cl::desc("--loss cross_entropy: labels equal to this are left out of the "
             "loss and of the mean's count, on every rank (PyTorch's "
             "ignore_index)"),
    cl::init(-100), cl::cat(trainCategory));
cl::opt<std::string> reductionOpt(
    "reduction",
    cl::desc("--loss cross_entropy: mean (over the labels not ignored) or "
             "sum"),
    cl::value_desc("mean|sum"), cl::init("mean"), cl::cat(trainCategory));
cl::opt<double> labelSmoothingOpt(
    "label-smoothing",
    cl::desc("--loss cross_entropy: PyTorch's label_smoothing, in [0, 1]"),
    cl::init(0.0), cl::cat(trainCategory));
cl::opt<std::string> batchNormMode(
    "batchnorm",
    cl::desc("BatchNormalization: 'train' normalizes with batch statistics "
             "and updates the running ones (model.train()), 'eval' with the "
             "running ones (model.eval()); default: as the model says "
             "(training_mode, or running statistics as outputs)"),
    cl::value_desc("train|eval"), cl::cat(trainCategory));
cl::opt<std::string> dropoutMode(
    "dropout",
    cl::desc("Dropout: 'eval' makes every Dropout the identity, also one "
             "the model exported in training mode (model.eval()); default: "
             "as the model says: a training-mode Dropout draws a mask per "
             "run (Philox keyed by --seed, the run and each element's "
             "index in the whole tensor: the same mask on every mesh)"),
    cl::value_desc("eval"), cl::cat(trainCategory));
cl::opt<int64_t> seed(
    "seed",
    cl::desc("Training-mode Dropout's masks are keyed by this seed "
             "(default 0): the same seed, run and model give the same masks "
             "on any mesh"),
    cl::init(0), cl::cat(trainCategory));
cl::opt<bool> untieMerged(
    "untie-merged",
    cl::desc("Train apart, as PyTorch does, the parameters an eval-mode "
             "torch.onnx.export merged because their values were equal "
             "(fresh LayerNorms, zero biases): each Identity it left, named "
             "after a merged parameter, becomes that parameter's own "
             "initializer, and --save writes them apart. A weight PyTorch "
             "ties (an embedding and its LM head) stays one. Default: an "
             "initializer is one weight, however many modules read it"),
    cl::cat(trainCategory));
cl::opt<bool> inputGrads(
    "input-grads",
    cl::desc("Also return grad_<input> for every float input"),
    cl::cat(trainCategory));
cl::opt<double> bucketMb(
    "bucket-mb",
    cl::desc("Combine all_reduces that nothing reads in between into "
             "buckets of at most this many MiB (DDP's bucket_cap_mb; 0: off)"),
    cl::init(25), cl::cat(trainCategory));
cl::opt<bool> withLabels(
    "labels",
    cl::desc("The training step takes a `labels` input (shaped like the "
             "output) and --loss mse compares with it instead of zeros"),
    cl::cat(trainCategory));
cl::opt<std::string> optimizerKind("optimizer",
                                   cl::desc("sgd, adamw, or none (gradients only)"),
                                   cl::init("sgd"), cl::cat(trainCategory));
cl::opt<double> learningRate("lr", cl::desc("Learning rate"), cl::init(0.1),
                             cl::cat(trainCategory));
cl::opt<double> momentumOpt("momentum", cl::desc("SGD momentum"),
                            cl::init(0), cl::cat(trainCategory));
cl::opt<double> adamEpsilon("adam-epsilon", cl::desc("AdamW epsilon"),
                            cl::init(1e-8), cl::cat(trainCategory));
cl::list<std::string> frozenWeights(
    "frozen",
    cl::desc("Weights not to train, as globs over ONNX or PyTorch names "
             "(--frozen '*.inv_freq'): an ONNX file keeps PyTorch's buffers "
             "(rotary tables, running statistics) as initializers like the "
             "parameters"),
    cl::value_desc("glob"), cl::CommaSeparated, cl::cat(trainCategory));
cl::list<std::string> recomputeModules(
    "recompute",
    cl::desc("Modules whose activations the backward pass recomputes "
             "instead of keeping them from the forward pass "
             "(torch.utils.checkpoint per module; --recompute 'layers.*', "
             "or \"recompute\": [\"layers.*\"] in a plan file): less memory, "
             "one more forward pass of those modules; --report says how much "
             "of each"),
    cl::value_desc("module"), cl::CommaSeparated, cl::cat(trainCategory));
cl::opt<bool> rematerializeOpt(
    "rematerialize",
    cl::desc("Recompute in the backward pass, instead of keeping from the "
             "forward pass, the values an elementwise op computes from values "
             "kept anyway (a decomposed GELU's or layer norm's intermediates): "
             "less memory, the same results (default: on; "
             "--rematerialize=false keeps them)"),
    cl::init(true), cl::cat(trainCategory));
cl::opt<double> weightDecayOpt(
    "weight-decay",
    cl::desc("Weight decay (SGD: L2 in the gradient; AdamW: decoupled)"),
    cl::init(0), cl::cat(trainCategory));

cl::opt<bool> listOps("list-onnx-ops",
                      cl::desc("Print the supported ONNX ops and opsets "
                               "(a markdown table) and exit"),
                      cl::cat(category));
cl::opt<bool> listModules(
    "list-modules",
    cl::desc("Print the PyTorch modules tp recovered from the model (the "
             "paths a plan names), each with its ops and parameters (ONNX "
             "name, PyTorch name, shape, stored transposed or not, the op "
             "that reads it), and exit"),
    cl::cat(planCategory));
cl::opt<bool> verbose("v", cl::desc("Print one progress line per stage"),
                      cl::cat(category));
cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass, to find the pass that broke "
             "it (slower on deep models; by default the IR is verified where "
             "it leaves a phase: the per-device program before it is lowered "
             "or written, the LLVM dialect before translation)"),
    cl::init(false), cl::cat(category));

/// --report, pipelines: per stage the planned peak of temporaries and
/// what it is made of: one microbatch's kept activations times the
/// microbatches alive between their forward and backward under the
/// schedule (1F1B: at most p - s on stage s of p; GPipe: all of them).
void printStageMemory(ModuleOp module, const tp::ProgramMemory &memory) {
  auto p = module->getAttrOfType<DictionaryAttr>("tp.pipeline");
  auto kept = p ? p.getAs<DenseI64ArrayAttr>("kept_bytes_per_microbatch")
                : DenseI64ArrayAttr();
  if (!kept || memory.stageTemporaries.empty())
    return;
  int64_t stages = kept.size();
  int64_t m = p.getAs<IntegerAttr>("microbatches").getInt();
  bool oneFOneB = p.getAs<StringAttr>("schedule").getValue() == "1f1b";
  for (int64_t s = 0; s < stages && s < int64_t(memory.stageTemporaries.size());
       ++s) {
    int64_t alive = oneFOneB ? std::min(m, stages - s) : m;
    llvm::outs() << llvm::formatv("  stage {0}: temporaries {1} bytes at "
                                  "their peak",
                                  s, memory.stageTemporaries[s]);
    // A forward alone keeps nothing for a backward.
    if (kept[s])
      llvm::outs() << llvm::formatv(
          "; a microbatch keeps {0} bytes of activations for its backward, "
          "{1} microbatch(es) alive at once under {2}",
          kept[s], alive, oneFOneB ? "1f1b" : "gpipe");
    llvm::outs() << "\n";
  }
}

void progress(const Twine &msg) {
  if (verbose)
    llvm::errs() << "tp-compile: " << msg << "\n";
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // MLIR's own printing flags (--mlir-print-debuginfo shows ONNX node names).
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  // --mlir-timing: where the compile's time goes, per pass and per stage.
  registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions({&category, &planCategory, &trainCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "tp-compile: compile an ONNX model into a tp program\n\n"
      "  tp-compile model.onnx --emit=tp -o model.mlir\n"
      "  tp-compile model.onnx --shape x=8x64 --emit=linalg -o -\n"
      "  tp-compile model.onnx --mesh tp=2 --plan-entry fc1=colwise,fc2=rowwise "
      "--emit=sharded --report -o out.mlir\n"
      "  tp-compile model.onnx --plan plan.json -o out/            (program "
      "for tp-run)\n"
      "  tp-compile model.onnx --target cuda --arch sm_90 -o out/  (for "
      "NVIDIA GPUs)\n\n"
      "The model may be binary ONNX or ONNX's text syntax.\n");

  if (listOps) {
    llvm::outs() << "| ONNX op | opsets |\n|---|---|\n";
    for (auto [op, since] : tp::supportedOnnxOps())
      llvm::outs() << "| " << op << " | "
                   << std::max(since, tp::kMinOnnxOpset) << "-"
                   << tp::kMaxOnnxOpset << " |\n";
    return 0;
  }
  if (inputFile.empty()) {
    llvm::errs() << "tp-compile: error: no input model (see --help)\n";
    return 1;
  }

  bool cudaStage = emit == Emit::Gpu || emit == Emit::NVVM || emit == Emit::Ptx;
  if (targetOpt != "cpu" && targetOpt != "cuda") {
    llvm::errs() << "tp-compile: error: unknown --target '" << targetOpt
                 << "' (cpu or cuda)\n";
    return 1;
  }
  if (cudaStage && targetOpt.getNumOccurrences() && targetOpt != "cuda") {
    llvm::errs() << "tp-compile: error: --emit=gpu, nvvm and ptx are stages "
                    "of --target cuda\n";
    return 1;
  }
  tp::Target target;
  target.cuda = cudaStage || targetOpt == "cuda";
  target.arch = archOpt;
  target.blockSize = blockSizeOpt;
  target.gpuLoopsOnCpu = gpuLoopsOnCpu;
  target.outlineLayers = outlineLayers;
  if (parallelLoopsOpt < 0) {
    llvm::errs() << "tp-compile: error: --parallel-loops " << parallelLoopsOpt
                 << ": N >= 0 iterations (0: no parallel nests)\n";
    return 1;
  }
  target.parallelLoops = parallelLoopsOpt;
  if (gpuLoopsOnCpu && target.cuda) {
    llvm::errs() << "tp-compile: error: --gpu-loops-on-cpu builds a CPU "
                    "program; it does not go with --target cuda or "
                    "--emit=gpu, nvvm, ptx\n";
    return 1;
  }
  if (target.cuda && !llvm::Regex("^sm_[0-9]+a?$").match(target.arch)) {
    llvm::errs() << "tp-compile: error: --arch '" << target.arch
                 << "' is not a CUDA architecture like sm_90\n";
    return 1;
  }
  if ((target.cuda || target.gpuLoopsOnCpu) &&
      (target.blockSize < 1 || target.blockSize > 1024)) {
    llvm::errs() << "tp-compile: error: --block-size " << target.blockSize
                 << " is not in 1..1024\n";
    return 1;
  }

  // The pipelines are pipeline text: every pass must be registered.
  registerAllPasses();
  tp::registerTPPasses();

  tp::OnnxImportOptions options;
  for (const std::string &s : shapes)
    if (auto err = tp::parseShapeBinding(s, options)) {
      llvm::errs() << "tp-compile: error: " << *err << "\n";
      return 1;
    }
  for (const std::string &s : constantInputs)
    if (auto err = tp::parseConstantInputBinding(s, options)) {
      llvm::errs() << "tp-compile: error: " << *err << "\n";
      return 1;
    }

  if (!batchNormMode.empty() && batchNormMode != "train" &&
      batchNormMode != "eval") {
    llvm::errs() << "tp-compile: error: --batchnorm must be train or eval, "
                    "got '" << batchNormMode << "'\n";
    return 1;
  }
  options.batchNorm = batchNormMode;
  if (!dropoutMode.empty() && dropoutMode != "eval") {
    llvm::errs() << "tp-compile: error: --dropout takes 'eval' (without "
                    "it, training-mode Dropout draws masks), got '"
                 << dropoutMode << "'\n";
    return 1;
  }
  options.dropout = dropoutMode;
  options.seed = seed;
  options.untieMerged = untieMerged;
  // The plan file's recompute entries, then --recompute's.
  std::vector<std::string> recompute;
  {
    // Training-mode BatchNormalization is imported per data-parallel group
    // (DDP) unless SyncBatchNorm: the plan's mesh decides it. A bad plan
    // is reported by the plan pass, with its context.
    tp::Plan early;
    if (!planFile.empty())
      (void)tp::readPlanFile(planFile, early);
    if (!meshSpec.empty())
      (void)tp::parseMeshSpec(meshSpec, early);
    if (!dataParallel.empty())
      early.dataParallel = dataParallel;
    early.syncBatchNorm |= syncBatchNorm;
    options.batchNormGroups = tp::batchNormGroups(early);
    recompute = early.recompute;
    if (precisionOpt.empty())
      precisionOpt = early.precision.empty() ? "f32" : early.precision;
    if (gradReduceDtype.empty())
      gradReduceDtype =
          early.gradReduceDtype.empty() ? "f32" : early.gradReduceDtype;
    recompute.insert(recompute.end(), recomputeModules.begin(),
                     recomputeModules.end());
  }
  for (auto *opt : {&precisionOpt, &gradReduceDtype})
    if (*opt != "f32" && *opt != "bf16") {
      llvm::errs() << "tp-compile: error: --" << opt->ArgStr
                   << " must be f32 or bf16, got '" << *opt << "'\n";
      return 1;
    }
  if (gradReduceDtype == "bf16" && !train) {
    llvm::errs() << "tp-compile: error: --grad-reduce-dtype bf16 needs "
                    "--train: only a training step all-reduces gradients\n";
    return 1;
  }
  if (!recompute.empty() && !train) {
    bool fromPlan = recompute.size() > recomputeModules.size();
    llvm::errs() << "tp-compile: error: recompute '" << recompute.front()
                 << "' (" << (fromPlan ? planFile.getValue() : "--recompute")
                 << ") needs --train: only a training step keeps activations "
                    "for a backward pass\n";
    return 1;
  }

  // `-o out/` (or an existing directory) means: build a program; so does
  // any other name but `-` or `*.mlir` with a plan, since a plan is given to
  // build a program (MLIR text of a plan needs --emit=sharded or a .mlir).
  bool planGiven = !planFile.empty() || !meshSpec.empty() ||
                   !planEntries.empty() || !dataParallel.empty();
  if (!emit.getNumOccurrences() &&
      (StringRef(outputFile).ends_with("/") ||
       llvm::sys::fs::is_directory(outputFile) ||
       (planGiven && outputFile != "-" &&
        !StringRef(outputFile).ends_with(".mlir") &&
        !explainSharding && !report.getNumOccurrences())))
    emit = Emit::Program;
  if (emit == Emit::Program && llvm::sys::fs::is_regular_file(outputFile)) {
    llvm::errs() << "tp-compile: error: -o " << outputFile
                 << " is a file; a program is a folder (program.so and "
                    "manifest.json): name another\n";
    return 1;
  }
  if (emit == Emit::Program && outputFile == "-") {
    llvm::errs() << "tp-compile: error: --emit=program needs -o <directory>\n";
    return 1;
  }
  // Kernel binaries and PTX need ptxas and libdevice (transcendentals).
  if (target.cuda && (emit == Emit::Program || emit == Emit::Ptx)) {
    target.cudaPath = tp::cudaToolkitPath(cudaPathOpt);
    std::string libdevice = target.cudaPath + "/nvvm/libdevice/libdevice.10.bc";
    if (!llvm::sys::fs::exists(libdevice)) {
      llvm::errs() << "tp-compile: error: no CUDA toolkit at '"
                   << target.cudaPath << "' (" << libdevice
                   << " is missing); --cuda-path names it\n";
      return 1;
    }
  }
  // The model's SHA-256 (for the manifest) is read while tp compiles: a
  // deep model's hundreds of MB take longer than the lowering alone.
  std::shared_future<std::optional<std::string>> modelSha256;
  if (emit == Emit::Program && !listModules)
    modelSha256 = tp::startModelChecksum(inputFile);

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  tp::registerTPDialects(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  registerAllToLLVMIRTranslations(registry);
  MLIRContext context(registry);
  // A message names the ONNX node, module or plan entry; the IR of the op
  // it was raised on (a whole training step, for some) is not for users.
  context.printOpOnDiagnostic(false);
  // Importer messages already name the model file and ONNX node; print them
  // as one line each, like a compiler does.
  ScopedDiagnosticHandler printer(&context, [](Diagnostic &diag) {
    llvm::errs() << "tp-compile: "
                 << (diag.getSeverity() == DiagnosticSeverity::Error
                         ? "error: "
                         : "warning: ")
                 << diag.str() << "\n";
    for (const Diagnostic &note : diag.getNotes())
      llvm::errs() << "  note: " << note.str() << "\n";
    return success();
  });

  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();

  progress("importing " + inputFile);
  TimingScope importTiming = timing.nest("import " + inputFile);
  OwningOpRef<ModuleOp> module =
      tp::importOnnxFile(&context, inputFile, options);
  importTiming.stop();
  if (!module)
    return 1;
  if (listModules) {
    auto func = *module->getOps<func::FuncOp>().begin();
    tp::ModuleTree::build(func).print(func, llvm::outs());
    return 0;
  }

  // Every stage's pass manager lives to the end: --mlir-timing keys a
  // pass's timer by its address, which a later stage's pass would reuse
  // (and have its time shown under an earlier pass's name).
  std::vector<std::unique_ptr<PassManager>> passManagers;
  auto runPasses = [&](auto addPasses) {
    PassManager &pm =
        *passManagers.emplace_back(std::make_unique<PassManager>(&context));
    pm.enableTiming(timing);
    pm.enableVerifier(verifyEach);
    addPasses(pm);
    return pm.run(*module);
  };
  if (!planFile.empty() || !planEntries.empty()) {
    // Fused projections the plan splits colwise get Megatron's strided
    // split; before autodiff, so that the backward pass is the split one's.
    tp::TPSplitFusedProjectionsOptions fused;
    fused.planFile = planFile;
    fused.entries.assign(planEntries.begin(), planEntries.end());
    if (failed(runPasses([&](PassManager &pm) {
          pm.addPass(tp::createTPSplitFusedProjections(fused));
        })))
      return 1;
  }
  // Pipeline stages are cut on the imported forward graph, whose op order
  // and module scopes say where a layer begins (before tp-autodiff).
  {
    tp::TPAssignStagesOptions stages;
    stages.planFile = planFile;
    if (!meshSpec.empty())
      stages.meshSpec.push_back(meshSpec);
    stages.pipeline = pipelineSpec;
    stages.dataParallel = dataParallel;
    if (failed(runPasses([&](PassManager &pm) {
          pm.addPass(tp::createTPAssignStages(stages));
        })))
      return 1;
  }
  if (precisionOpt == "bf16") {
    // On the forward graph: tp-autodiff differentiates through its casts.
    tp::TPAutocastOptions autocast;
    autocast.precision = precisionOpt;
    // Without an optimizer there are no f32 master weights to keep.
    autocast.bf16Weights = !train && !keepF32Weights;
    if (failed(runPasses([&](PassManager &pm) {
          pm.addPass(tp::createTPAutocast(autocast));
        })))
      return 1;
  }
  if (train) {
    progress("generating the training step (tp-autodiff)");
    tp::TPAutodiffOptions autodiff;
    autodiff.loss = lossKind;
    autodiff.ignoreIndex = ignoreIndexOpt;
    autodiff.reduction = reductionOpt;
    autodiff.labelSmoothing = labelSmoothingOpt;
    autodiff.optimizer = optimizerKind;
    autodiff.labels = withLabels;
    autodiff.inputGrads = inputGrads;
    autodiff.lr = learningRate;
    autodiff.momentum = momentumOpt;
    autodiff.weightDecay = weightDecayOpt;
    autodiff.epsilon = adamEpsilon;
    autodiff.frozen.assign(frozenWeights.begin(), frozenWeights.end());
    autodiff.recompute.assign(recompute.begin(), recompute.end());
    autodiff.rematerialize = rematerializeOpt;
    // A rematerialized value is recomputed by the stage of its forward op,
    // which with microbatches would have to send it forward in its
    // backward pass: pipelines of microbatches keep such values instead.
    if (auto p = module->getOperation()->getAttrOfType<DictionaryAttr>(
            "tp.pipeline"))
      if (p.getAs<IntegerAttr>("microbatches").getInt() > 1)
        autodiff.rematerialize = false;
    if (failed(runPasses([&](PassManager &pm) {
          pm.addPass(tp::createTPAutodiff(autodiff));
        })))
      return 1;
  }
  bool sharding = !planFile.empty() || !meshSpec.empty() ||
                  !planEntries.empty() || !dataParallel.empty();
  // A program always runs on a mesh; without a plan, one device.
  bool lowered = emit == Emit::Program || cudaStage;
  if (lowered && !sharding)
    meshSpec = "tp=1";
  sharding |= lowered;
  std::vector<tp::TensorInfo> globalSignature =
      tp::describeSignature(*module->getOps<func::FuncOp>().begin());
  if ((emit == Emit::Sharded || explainSharding ||
       report.getNumOccurrences()) &&
      !sharding) {
    llvm::errs() << "tp-compile: error: --emit=sharded, --explain-sharding "
                    "and --report need a plan (--plan plan.json or --mesh "
                    "tp=2 --plan-entry ...)\n";
    return 1;
  }
  if (sharding) {
    tp::TPApplyPlanOptions plan;
    plan.planFile = planFile;
    if (!meshSpec.empty())
      plan.meshSpec.push_back(meshSpec);
    plan.entries.assign(planEntries.begin(), planEntries.end());
    plan.dataParallel = dataParallel;
    plan.inputs.assign(inputLayouts.begin(), inputLayouts.end());
    plan.outputs.assign(outputLayouts.begin(), outputLayouts.end());
    progress("applying the plan and propagating shardings");
    if (failed(runPasses([&](PassManager &pm) {
          pm.addPass(tp::createTPApplyPlan(plan));
          pm.addPass(tp::createTPPropagateSharding(
              tp::TPPropagateShardingOptions{/*recordOrigins=*/bool(explainSharding)}));
        })))
      return 1;
    if (explainSharding)
      tp::printShardingExplanation(*module, llvm::outs());
    progress("partitioning into the per-device program");
    if (failed(runPasses([&](PassManager &pm) {
          pm.addPass(tp::createTPPadUneven());
          pm.addPass(tp::createTPPartition());
          // Pipeline stages before buckets: a bucket holds one stage's
          // gradients.
          pm.addPass(tp::createTPSplitStages());
          tp::TPBucketAllReducesOptions buckets;
          buckets.bucketMb = bucketMb;
          buckets.gradReduceDtype = gradReduceDtype;
          pm.addPass(tp::createTPBucketAllReduces(buckets));
        })))
      return 1;
    if (report.getNumOccurrences())
      tp::printCollectiveReport(*module, llvm::outs(), report == "json");
  }
  // The program tp's stages built, before it is lowered or written.
  if (failed(tp::verifyStage(*module, verifyEach, timing)))
    return 1;
  if (emit == Emit::Program) {
    tp::ProgramOptions program;
    program.outDir = outputFile;
    llvm::SmallString<256> modelPath(inputFile);
    llvm::sys::fs::make_absolute(modelPath);
    program.modelPath = std::string(modelPath);
    program.modelSha256 = modelSha256;
    program.target = target;
    if (verbose)
      program.progress = [](const std::string &m) { progress(m); };
    program.timing = &timing;
    program.verifyEach = verifyEach;
    tp::ProgramMemory memory;
    bool textReport = report.getNumOccurrences() && report != "json";
    if (textReport)
      program.memory = &memory;
    if (failed(tp::emitProgram(*module, globalSignature, program)))
      return 1;
    if (textReport)
      llvm::outs() << llvm::formatv(
          "  memory per device after buffer reuse (program.so): parameters "
          "{0} bytes, optimizer state {1} bytes, inputs {2} bytes, results "
          "{3} bytes, temporaries {4} bytes at their peak; total {5} bytes\n",
          memory.parameters, memory.optimizerState, memory.inputs,
          memory.results, memory.temporaries, memory.total());
    if (textReport)
      printStageMemory(*module, memory);
#ifndef __SANITIZE_ADDRESS__
    // As clang's -disable-free: the process ends here, and erasing a deep
    // step's ops one by one only delays its exit (the OS reclaims them).
    (void)module.release();
#endif
    return 0;
  }
  std::string cudaText;
  if (cudaStage) {
    progress("lowering for CUDA " + target.arch);
    llvm::raw_string_ostream os(cudaText);
    tp::CudaStage stage = emit == Emit::Gpu    ? tp::CudaStage::Gpu
                          : emit == Emit::NVVM ? tp::CudaStage::NVVM
                                               : tp::CudaStage::Ptx;
    if (failed(tp::emitCudaStage(*module, target, stage, os)))
      return 1;
  }
  if (emit != Emit::TP && !cudaStage) {
    progress("lowering to linalg");
    if (failed(runPasses([&](PassManager &pm) {
          pm.addPass(tp::createTPLowerToLinalg());
        })) ||
        failed(tp::verifyStage(*module, verifyEach, timing)))
      return 1;
  }
  // Reports own stdout unless -o names a file.
  if ((explainSharding || report.getNumOccurrences()) && outputFile == "-")
    return 0;

  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "tp-compile: error: " << error << "\n";
    return 1;
  }
  if (cudaStage)
    output->os() << cudaText;
  else
    module->print(output->os());
  output->os() << "\n";
  output->keep();
  progress("wrote " + outputFile);
  return 0;
}
