//===- Program.h - compile a partitioned module into a program -*- C++ -*-===//
//
// The back end of tp-compile: the per-device module (after tp-partition)
// becomes out/program.so, one SPMD shared library with the C entry point
// `tp_entry(void **args)`, and out/manifest.json, which tells tp-run what to
// feed it (docs/Runtime.md describes both). For the CUDA target the library
// also holds the kernels (a cubin) and links against libtprt's CUDA
// runtime (cudart, cuBLAS, NCCL).
//
//===----------------------------------------------------------------------===//
#ifndef TP_TARGET_PROGRAM_H
#define TP_TARGET_PROGRAM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "tp/Pipelines/Pipelines.h"
#include "llvm/ADT/StringRef.h"
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tp {

/// A graph input, weight or output as the user sees it (global shape).
struct TensorInfo {
  std::string name;
  std::string kind; // input | param | output
  SmallVector<int64_t> shape;
  std::string dtype; // f32, f16, bf16, f64, i64, i32, i1
  /// A weight's PyTorch name where the exporter renamed it (tp.torch_names).
  std::string torchName;
  /// Every PyTorch name of a weight (several for a tied weight), and
  /// whether the initializer is PyTorch's tensor transposed (a folded
  /// Linear weight, `[in, out]`; tp.stored_transposed).
  std::vector<std::string> torchNames;
  bool torchTransposed = false;
  /// The ONNX initializer's dims of a weight the program reads as a view
  /// (tp.onnx_shape), and of its gradient and update; else empty.
  SmallVector<int64_t> onnxShape;
};

/// The global signature of the imported function (before partition).
std::vector<TensorInfo> describeSignature(func::FuncOp func);

/// Bytes a device holds while the program runs (its share of each tensor).
struct ProgramMemory {
  int64_t parameters = 0, optimizerState = 0, inputs = 0, results = 0;
  /// The peak of the step's temporaries, freed after their last use
  /// (tp-free-after-last-use).
  int64_t temporaries = 0;
  /// Pipelines: each stage's peak of temporaries (the largest is
  /// `temporaries`).
  std::vector<int64_t> stageTemporaries;
  int64_t total() const {
    return parameters + optimizerState + inputs + results + temporaries;
  }
};

/// The SHA-256 of the file at `path` (lower-case hex; nullopt when it
/// cannot be read), computed on another thread.
std::shared_future<std::optional<std::string>>
startModelChecksum(const std::string &path);

struct ProgramOptions {
  std::string outDir;
  std::string modelPath;
  /// startModelChecksum(modelPath), started early by the caller (a deep
  /// model's hundreds of MB take longer than the lowering); when not
  /// valid, emitProgram starts it.
  std::shared_future<std::optional<std::string>> modelSha256;
  /// cpu, or cuda (kernels for target.arch).
  Target target;
  /// Called with a line per stage (tp-compile -v), or empty.
  std::function<void(const std::string &)> progress;
  /// Filled in when not null: what a device holds (tp-compile --report).
  ProgramMemory *memory = nullptr;
  /// Where each stage's time is recorded (tp-compile --mlir-timing), or
  /// null.
  TimingScope *timing = nullptr;
  /// Verify after every pass (tp-compile --verify-each), not only after
  /// each stage.
  bool verifyEach = false;
};

/// Verifies `module` unless the pass manager verified it after every pass
/// (`verifyEach`); the time goes to `timing` ("verify the IR"). tp-compile
/// verifies where the IR leaves a phase (the per-device program before it
/// is lowered or written, the LLVM dialect before translation), not after
/// each stage: on a deep model each verification took ~0.1 ms per layer,
/// and some fifty passes' verifications a tenth of the compile.
LogicalResult verifyStage(ModuleOp module, bool verifyEach,
                          TimingScope &timing);

/// Lowers `module` (partitioned, tp ops on local shapes) to LLVM, emits an
/// object for the host CPU, links out/program.so with the system linker and
/// writes out/manifest.json. `global` is describeSignature() of the function
/// before partitioning. On failure emits an error and writes nothing.
LogicalResult emitProgram(ModuleOp module,
                          const std::vector<TensorInfo> &global,
                          const ProgramOptions &options);

/// What `tp-compile --target cuda --emit=gpu|nvvm|ptx` writes: the module
/// after the CUDA pipeline's gpu-dialect or NVVM stage, or the kernels'
/// PTX (for ptxas). `module` is the partitioned program; it is lowered in
/// place.
enum class CudaStage { Gpu, NVVM, Ptx };
LogicalResult emitCudaStage(ModuleOp module, const Target &target,
                            CudaStage stage, llvm::raw_ostream &os);

} // namespace mlir::tp

#endif // TP_TARGET_PROGRAM_H
