//===- EmitProgram.cpp - partitioned module -> program.so -----------------===//
#include "Manifest.h"
#include "tp/Pipelines/Pipelines.h"
#include "tp/Target/Program.h"
#include "tprt/Sha256.h"
#include "llvm/Support/FormatVariadic.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/IPO/DeadArgumentElimination.h"
#include "llvm/Transforms/Scalar/DCE.h"
#include "llvm/Transforms/Scalar/InstSimplifyPass.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/TargetParser/Host.h"

#include <future>
#include <optional>

using namespace mlir;
using namespace mlir::tp;

/// `void tp_entry(void **args)`: the step, which tp-pack-step-arguments
/// made take the runtime's array of descriptor pointers (inputs, weights,
/// then result buffers), so that the runtime calls every program the same
/// way. A step that is one block of calls (tp-outline-loop-nests made it
/// `optnone`) is cut into blocks of at most kMaxBlock instructions:
/// unoptimized instruction selection falls back from its fast path to the
/// general one for the rest of a block at the first aggregate (a
/// descriptor), and the general one's time grows faster than the block.
static LogicalResult addEntryPoint(llvm::Module &module, StringRef func,
                                   Location loc) {
  constexpr unsigned kMaxBlock = 256;
  llvm::Function *step = module.getFunction(func);
  if (!step || step->arg_size() != 1)
    return emitError(loc) << "internal: @" << func
                          << " does not take the runtime's argument array";
  if (module.getFunction("tp_entry"))
    return emitError(loc) << "internal: the program defines tp_entry";
  step->setName("tp_entry");
  if (!step->hasFnAttribute(llvm::Attribute::OptimizeNone))
    return success();
  // Split points first, then the splits from the last one back: each moves
  // one piece (splitting from the front would move the rest of a block of
  // a hundred thousand instructions at each point).
  for (llvm::BasicBlock &bb : llvm::make_early_inc_range(*step)) {
    SmallVector<llvm::BasicBlock::iterator> points;
    unsigned count = 0;
    for (auto it = bb.begin(); it != bb.end(); ++it)
      if (++count % kMaxBlock == 0 && std::next(it) != bb.end())
        points.push_back(std::next(it));
    for (llvm::BasicBlock::iterator point : llvm::reverse(points))
      llvm::SplitBlock(&bb, point);
  }
  return success();
}

/// The straight-line functions (`optnone`: tp_entry, the layers'
/// functions; thousands of calls and descriptors, no loops) are compiled
/// apart, by an unoptimizing code generator: -O2's (greedy register
/// allocation, list scheduling) takes seconds on them that grows faster
/// than they do, -O0's is linear, and they gain nothing from it. Whether
/// `module` has any; if so, its local symbols become hidden globals, as
/// the two objects refer to each other's.
static bool prepareStraightLineSplit(llvm::Module &module) {
  if (llvm::none_of(module, [](const llvm::Function &f) {
        return !f.isDeclaration() &&
               f.hasFnAttribute(llvm::Attribute::OptimizeNone);
      }))
    return false;
  for (llvm::GlobalValue &g : module.global_values())
    if (g.hasLocalLinkage()) {
      if (!g.hasName())
        g.setName("tp.local");
      g.setLinkage(llvm::GlobalValue::ExternalLinkage);
      g.setVisibility(llvm::GlobalValue::HiddenVisibility);
    }
  return true;
}

/// Keeps the definitions of one side of the split: the straight-line
/// functions (`straight`) or everything else; the other side's become
/// declarations. Each side is a copy of the whole module read back from
/// bitcode, or the module itself: cheaper than cloning the straight-line
/// functions, which grow with depth.
static void keepStraightLineSide(llvm::Module &module, bool straight) {
  for (llvm::Function &f : module)
    if (!f.isDeclaration() &&
        f.hasFnAttribute(llvm::Attribute::OptimizeNone) != straight)
      f.deleteBody();
  if (straight)
    for (llvm::GlobalVariable &g : module.globals())
      if (g.hasInitializer()) {
        g.setInitializer(nullptr);
        g.setLinkage(llvm::GlobalValue::ExternalLinkage);
      }
}

/// Compiles `m` with `tm` into an object file at `path`; false (and
/// `error` set) when it cannot. Runs on either thread: no MLIR diagnostics.
static bool emitObjectFile(llvm::Module &m, llvm::TargetMachine &tm,
                           StringRef path, std::string &error) {
  std::error_code ec;
  llvm::ToolOutputFile obj(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = ("cannot write " + path + ": " + ec.message()).str();
    return false;
  }
  llvm::legacy::PassManager codegen;
  if (tm.addPassesToEmitFile(codegen, obj.os(), nullptr,
                             llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit objects";
    return false;
  }
  codegen.run(m);
  obj.os().flush();
  obj.keep();
  return true;
}

/// A loop nest's function takes each buffer as a memref descriptor's
/// fields (3 + 2 x rank scalars), but its static shapes make every field
/// but the aligned pointer dead once the descriptor it rebuilds from them
/// is folded away (instsimplify, dce). LLVM's dead-argument elimination
/// then drops them from the function and its calls while it is still
/// internal (before the straight-line split): the straight-line callers, compiled
/// unoptimized, pass one value per buffer instead of up to nine.
static void dropDeadArguments(llvm::Module &module,
                              llvm::TargetMachine *machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::FunctionPassManager fold;
  fold.addPass(llvm::InstSimplifyPass());
  fold.addPass(llvm::DCEPass());
  llvm::ModulePassManager passes;
  passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fold)));
  passes.addPass(llvm::DeadArgumentEliminationPass());
  passes.run(module, mam);
}

/// `const char tp_manifest_sha256[65]`: the hex SHA-256 of manifest.json.
static void addManifestHash(llvm::Module &module, StringRef manifestText) {
  std::string hex = llvm::toHex(
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(manifestText)),
      /*LowerCase=*/true);
  auto *init = llvm::ConstantDataArray::getString(module.getContext(), hex);
  new llvm::GlobalVariable(module, init->getType(), /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, init,
                           "tp_manifest_sha256");
}

/// The libraries program.so links: MLIR's C runner utilities (memrefCopy
/// for strided copies) and libm; LLVM's OpenMP runtime (Debian's libomp5)
/// where parallel loop nests call it; for CUDA also libtprt_cuda, the CUDA
/// runtime (mgpu* launches, the allocator, cuBLAS GEMMs, NCCL collectives)
/// the program calls, so that every symbol resolves now rather than at load.
static SmallVector<std::string> linkArguments(const Target &target,
                                              bool openmp) {
  SmallVector<std::string> args = {
      std::string("-L") + TP_MLIR_LIBRARY_DIR,
      std::string("-Wl,-rpath,") + TP_MLIR_LIBRARY_DIR,
      "-lmlir_c_runner_utils", "-lm"};
  if (openmp)
    args.push_back("-l:libomp.so.5");
  if (target.cuda)
    for (std::string a :
         {std::string("-L") + TP_RUNTIME_LIBRARY_DIR,
          std::string("-Wl,-rpath,") + TP_RUNTIME_LIBRARY_DIR,
          std::string("-ltprt_cuda"), std::string("-ltprt"),
          std::string("-Wl,--no-undefined")})
      args.push_back(a);
  return args;
}

LogicalResult tp::emitCudaStage(ModuleOp module, const Target &target,
                                CudaStage stage, llvm::raw_ostream &os) {
  PassManager pm(module.getContext());
  if (failed(buildLowerToRuntimeCallsPipeline(pm, target)) ||
      failed(buildCudaBufferizeToGpuPipeline(pm, target)) ||
      (stage != CudaStage::Gpu &&
       failed(buildCudaKernelsToNVVMPipeline(pm, target))))
    return emitError(module.getLoc(), "internal: cannot build tp-lower-to-cuda");
  if (stage == CudaStage::Ptx)
    addCudaModuleToBinary(pm, target, "isa");
  if (failed(pm.run(module)))
    return failure();
  if (stage != CudaStage::Ptx) {
    module.print(os);
    return success();
  }
  // One PTX text per kernel module, each after a `//--- <module>.ptx` line
  // (a PTX comment, and split-file's marker: ptxas takes one module a file).
  for (auto binary : module.getOps<gpu::BinaryOp>())
    for (Attribute a : binary.getObjects()) {
      os << "//--- " << binary.getName() << ".ptx\n";
      os << cast<gpu::ObjectAttr>(a).getObject().getValue() << "\n";
    }
  return success();
}

/// The device's share of the arguments and results, by kind.
static ProgramMemory signatureMemory(func::FuncOp func) {
  auto bytes = [](Type t) {
    auto s = cast<ShapedType>(t);
    return s.getNumElements() * llvm::divideCeil(s.getElementTypeBitWidth(), 8);
  };
  ProgramMemory m;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    int64_t b = bytes(func.getArgumentTypes()[i]);
    if (func.getArgAttr(i, "tp.param"))
      m.parameters += b;
    else if (func.getArgAttr(i, "tp.state"))
      m.optimizerState += b;
    else
      m.inputs += b;
  }
  for (Type t : func.getResultTypes())
    m.results += bytes(t);
  return m;
}

std::shared_future<std::optional<std::string>>
tp::startModelChecksum(const std::string &path) {
  return std::async(std::launch::async, [path] {
    std::string hex;
    return tprt::sha256OfFile(path, hex) ? std::optional(hex) : std::nullopt;
  });
}

LogicalResult tp::verifyStage(ModuleOp module, bool verifyEach,
                              TimingScope &timing) {
  TimingScope verifyTiming = timing.nest("verify the IR");
  if (verifyEach || succeeded(verify(module)))
    return success();
  return emitError(module.getLoc())
         << "internal: the IR does not verify after this stage; "
            "tp-compile --verify-each names the pass";
}

LogicalResult tp::emitProgram(ModuleOp module,
                              const std::vector<TensorInfo> &global,
                              const ProgramOptions &options) {
  auto progress = [&](const std::string &msg) {
    if (options.progress)
      options.progress(msg);
  };
  // The step; pipeline stages (tp-split-stages) are private functions it
  // calls.
  SmallVector<func::FuncOp> funcs;
  for (auto f : module.getOps<func::FuncOp>())
    if (f.isPublic())
      funcs.push_back(f);
  if (funcs.size() != 1)
    return emitError(module.getLoc(), "expected one public function to compile");
  func::FuncOp func = funcs.front();
  std::string funcName = func.getName().str();

  std::shared_future<std::optional<std::string>> modelSha256 =
      options.modelSha256.valid() ? options.modelSha256
                                  : startModelChecksum(options.modelPath);
  progress("lowering to linalg with collectives as runtime calls");
  TimingScope noTiming;
  TimingScope &timing = options.timing ? *options.timing : noTiming;
  PassManager toCalls(module.getContext()), toLLVM(module.getContext());
  if (timing) {
    toCalls.enableTiming(timing);
    toLLVM.enableTiming(timing);
  }
  toCalls.enableVerifier(options.verifyEach);
  toLLVM.enableVerifier(options.verifyEach);
  if (failed(buildLowerToRuntimeCallsPipeline(toCalls, options.target)) ||
      failed(buildBufferizeToLLVMPipeline(toLLVM, options.target,
                                          /*packStepArguments=*/true)))
    return emitError(module.getLoc(), "internal: cannot build the lowering");
  if (failed(toCalls.run(module)))
    return failure();
  TimingScope sha256Timing = timing.nest("model checksum: the wait for it");
  std::optional<std::string> sha256 = modelSha256.get();
  sha256Timing.stop();
  if (!sha256)
    return emitError(module.getLoc())
           << "cannot read " << options.modelPath << " to checksum it";
  // The manifest reads the partitioned signature and attributes, and the
  // collective sites tp-lower-collectives numbered; bufferization rewrites
  // the signature, so it comes now.
  TimingScope manifestTiming = timing.nest("manifest");
  FailureOr<Manifest> manifest =
      buildManifest(module, func, global, options.modelPath, *sha256,
                    options.target.cuda ? "cuda" : "cpu");
  manifestTiming.stop();
  if (failed(manifest))
    return failure();
  if (options.memory)
    *options.memory = signatureMemory(func);
  unsigned numArgs = func.getNumArguments();
  // tp's argument and result attributes have done their job (the manifest
  // has them); LLVM translation does not know them.
  func.removeArgAttrsAttr();
  func.removeResAttrsAttr();
  const Target &tpTarget = options.target;
  progress(tpTarget.cuda ? "bufferizing, kernels for " + tpTarget.arch +
                               " (NVVM, ptxas), host code to LLVM (cuBLAS calls)"
           : tpTarget.gpuLoopsOnCpu
               ? "bufferizing, the CUDA target's kernel loops (blocks of " +
                     std::to_string(tpTarget.blockSize) +
                     " threads) on the CPU, lowering to LLVM (BLAS calls)"
               : "bufferizing and lowering to LLVM (loops, BLAS calls)");
  if (failed(toLLVM.run(module)) ||
      failed(verifyStage(module, options.verifyEach, timing)))
    return failure();
  // Results tp-find-in-place-updates lets the runtime write into their
  // argument's buffer (CPU programs; a CUDA program's buffers are staged).
  if (auto pairs = module->getAttrOfType<ArrayAttr>("tp.in_place_updates");
      pairs && !options.target.cuda) {
    for (Attribute attr : pairs) {
      ArrayRef<int64_t> pair = cast<DenseI64ArrayAttr>(attr).asArrayRef();
      int64_t r = pair[0] - int64_t(numArgs), a = pair[1];
      if (r < 0 || r >= int64_t(manifest->results.size()) ||
          a >= int64_t(numArgs))
        continue;
      ManifestEntry &result = manifest->results[r];
      if (result.global.name == manifest->arguments[a].global.name &&
          !result.inPlace) {
        result.inPlace = true;
        if (options.memory)
          options.memory->results -= result.localBytes();
      }
    }
  }
  // The loop nests' and GEMMs' call sites tp-trace-kernel-sites numbered
  // (tp-run --trace names them, --profile totals them by family).
  if (module->hasAttr("tp.kernel_sites")) {
    manifest->fields["kernel_sites"] = moduleStrings(module, "tp.kernel_sites");
    manifest->fields["kernel_phases"] =
        moduleStrings(module, "tp.kernel_phases");
    manifest->fields["kernel_microbatches"] =
        moduleIntegers(module, "tp.kernel_microbatches");
    manifest->fields["kernel_families"] =
        moduleStrings(module, "tp.kernel_families");
  }
  // tp-plan-peak-memory's plan, for tp-run --profile to compare with.
  if (auto peak = module->getAttrOfType<IntegerAttr>("tp.peak_temporary_bytes")) {
    manifest->fields["peak_temporary_bytes"] = peak.getInt();
    if (options.memory)
      options.memory->temporaries = peak.getInt();
  }
  // Pipeline stages: whether a stage's ranks may go without the buffers
  // it does not touch (tp-stage-results-to-out-params); each stage's plan
  // (the step's peak while it calls the stage), and what a microbatch
  // keeps alive on it.
  if (llvm::json::Object *pipeline = manifest->fields.getObject("pipeline")) {
    if (module->hasAttr("tp.stage_buffers_only"))
      (*pipeline)["stage_buffers_only"] = true;
    if (auto calls =
            module->getAttrOfType<DictionaryAttr>("tp.peak_bytes_at_calls")) {
      llvm::json::Array peaks;
      int64_t stages = pipeline->getInteger("stages").value_or(0);
      for (int64_t s = 0; s < stages; ++s) {
        auto bytes = calls.getAs<IntegerAttr>(funcName + "_stage" +
                                              std::to_string(s));
        peaks.push_back(bytes ? bytes.getInt() : -1);
        if (options.memory && bytes)
          options.memory->stageTemporaries.push_back(bytes.getInt());
      }
      (*pipeline)["peak_temporary_bytes"] = std::move(peaks);
    }
  }

  progress("translating to LLVM IR and optimizing (-O2, host CPU)");
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  module.getContext()->appendDialectRegistry(registry);
  TimingScope translateTiming = timing.nest("translate to LLVM IR");
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "tp-program");
  translateTiming.stop();
  if (!llvmModule)
    return emitError(module.getLoc(), "translation to LLVM IR failed");
  if (failed(addEntryPoint(*llvmModule, funcName, module.getLoc())))
    return failure();
  // program.so carries the SHA-256 of the manifest written beside it, so
  // that tp-run refuses an edited manifest or a pair from two compiles.
  TimingScope manifestTextTiming = timing.nest("manifest");
  std::string manifestText = manifest->render() + "\n";
  manifestTextTiming.stop();
  addManifestHash(*llvmModule, manifestText);

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return emitError(module.getLoc()) << "no LLVM target for "
                                      << triple.str() << ": " << error;
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), "", targetOptions,
      llvm::Reloc::PIC_));
  llvmModule->setDataLayout(machine->createDataLayout());
  llvmModule->setTargetTriple(triple);
  // Split before -O2, whose module passes would walk every instruction of
  // the straight-line functions too (seconds for a deep model's step).
  // Parallel loop nests fork OpenMP teams (tp-outline-loop-nests).
  bool openmp = llvmModule->getFunction("__kmpc_fork_call") != nullptr;
  if (!options.target.cuda) {
    TimingScope deadArgumentsTiming =
        timing.nest("drop loop nests' dead arguments");
    dropDeadArguments(*llvmModule, machine.get());
  }
  TimingScope splitTiming = timing.nest("split off straight-line functions");
  bool straight = !options.target.cuda && prepareStraightLineSplit(*llvmModule);
  splitTiming.stop();

  if (std::error_code ec = llvm::sys::fs::create_directories(options.outDir))
    return emitError(module.getLoc())
           << "cannot create " << options.outDir << ": " << ec.message();
  SmallString<256> objPath(options.outDir), soPath(options.outDir),
      manifestPath(options.outDir), straightObjPath(options.outDir);
  llvm::sys::path::append(objPath, "program.o");
  llvm::sys::path::append(straightObjPath, "program_calls.o");
  llvm::sys::path::append(soPath, "program.so");
  llvm::sys::path::append(manifestPath, "manifest.json");

  // The straight-line functions compile on a second thread while -O2
  // optimizes and compiles the loop nests (a 96-layer training step: 0.3 s
  // of -O0 code generation off the critical path). An LLVMContext serves
  // one thread, so the module travels as bitcode into a context of its
  // own, which keeps the straight-line functions and this one the rest.
  std::future<std::string> straightObject;
  if (straight) {
    TimingScope bitcodeTiming =
        timing.nest("straight-line functions to bitcode (second thread)");
    SmallVector<char, 0> bitcode;
    llvm::raw_svector_ostream bitcodeStream(bitcode);
    llvm::WriteBitcodeToFile(*llvmModule, bitcodeStream);
    keepStraightLineSide(*llvmModule, /*straight=*/false);
    straightObject = std::async(
        std::launch::async,
        [bitcode = std::move(bitcode), triple, target, targetOptions,
         path = std::string(straightObjPath)]() -> std::string {
          llvm::LLVMContext context;
          auto parsed = llvm::parseBitcodeFile(
              llvm::MemoryBufferRef(StringRef(bitcode.data(), bitcode.size()),
                                    "straight-line functions"),
              context);
          if (!parsed)
            return "cannot read back the straight-line functions: " +
                   llvm::toString(parsed.takeError());
          keepStraightLineSide(**parsed, /*straight=*/true);
          std::unique_ptr<llvm::TargetMachine> unoptimized(
              target->createTargetMachine(
                  triple, llvm::sys::getHostCPUName(), "", targetOptions,
                  llvm::Reloc::PIC_, std::nullopt,
                  llvm::CodeGenOptLevel::None));
          (*parsed)->setDataLayout(unoptimized->createDataLayout());
          std::string error;
          emitObjectFile(**parsed, *unoptimized, path, error);
          return error;
        });
  }

  auto optimize = makeOptimizingTransformer(2, 0, machine.get());
  TimingScope optimizeTiming = timing.nest("optimize LLVM IR (-O2)");
  if (llvm::Error err = optimize(llvmModule.get()))
    return emitError(module.getLoc())
           << "LLVM optimization failed: " << llvm::toString(std::move(err));
  optimizeTiming.stop();

  progress("emitting the object file");
  TimingScope codegenTiming = timing.nest("code generation (-O2)");
  std::string objectError;
  if (!emitObjectFile(*llvmModule, *machine, objPath, objectError))
    return emitError(module.getLoc()) << objectError;
  codegenTiming.stop();
  if (straight) {
    TimingScope straightTiming = timing.nest(
        "code generation (straight-line functions, -O0): the wait for it");
    std::string error = straightObject.get();
    if (!error.empty())
      return emitError(module.getLoc()) << error;
  }

  progress("linking program.so with the system linker");
  TimingScope linkTiming = timing.nest("link program.so");
  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return emitError(module.getLoc(),
                     "no system C compiler driver 'cc' to link program.so");
  SmallString<256> tmpSo(soPath);
  tmpSo += ".tmp";
  std::string ccPath = *cc;
  std::string objStr(objPath), straightObjStr(straightObjPath),
      tmpStr(tmpSo);
  SmallVector<std::string> libs = linkArguments(options.target, openmp);
  SmallVector<StringRef> argv = {ccPath, "-shared", "-o", tmpStr, objStr};
  if (straight)
    argv.push_back(straightObjStr);
  argv.append(libs.begin(), libs.end());
  std::string linkError;
  int rc = llvm::sys::ExecuteAndWait(ccPath, argv, std::nullopt, {}, 0, 0,
                                     &linkError);
  llvm::sys::fs::remove(objPath);
  if (straight)
    llvm::sys::fs::remove(straightObjPath);
  if (rc != 0) {
    llvm::sys::fs::remove(tmpSo);
    return emitError(module.getLoc())
           << "linking program.so failed (" << ccPath << " exited " << rc
           << (linkError.empty() ? "" : ": " + linkError) << ")";
  }

  // Both files through temporaries renamed over their names, so that a
  // failed compile leaves the previous program whole (a crash between the
  // two renames leaves a pair tp-run refuses: program.so carries the
  // manifest's hash).
  std::error_code ec;
  SmallString<256> tmpManifest(manifestPath);
  tmpManifest += ".tmp";
  {
    llvm::ToolOutputFile out(tmpManifest, ec, llvm::sys::fs::OF_None);
    if (ec)
      return emitError(module.getLoc())
             << "cannot write " << manifestPath << ": " << ec.message();
    out.os() << manifestText;
    out.os().flush();
    if (out.os().has_error())
      return emitError(module.getLoc())
             << "cannot write " << manifestPath << ": "
             << out.os().error().message();
    out.keep();
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmpManifest, manifestPath)) {
    llvm::sys::fs::remove(tmpManifest);
    return emitError(module.getLoc())
           << "cannot write " << manifestPath << ": " << ec.message();
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmpSo, soPath))
    return emitError(module.getLoc())
           << "cannot write " << soPath << ": " << ec.message();
  progress("wrote " + std::string(soPath) + " and " +
           std::string(manifestPath));
  return success();
}
