//===- fuzz-plan.cpp - libFuzzer target: plans (--plan, --mesh, entries) --===//
//
// The input is a plan file, optionally followed by a line `\n--\n` and
// command-line strings: the first is a --mesh spec, the others
// --plan-entry values. The plan is applied to the MLP reference model
// (imported once) by tp-apply-plan and propagated, as tp-compile does.
//
//===----------------------------------------------------------------------===//
#include "FuzzContext.h"
#include "FuzzInput.h"
#include "tp/Import/OnnxImporter.h"
#include "tp/Plan/Passes.h"
#include "tp/Sharding/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

using namespace mlir;
using tpfuzz::quietContext;

static ModuleOp model() {
  static OwningOpRef<ModuleOp> *module = [] {
    auto *m = new OwningOpRef<ModuleOp>(tp::importOnnxFile(
        &quietContext(), TP_FUZZ_MLP_MODEL, tp::OnnxImportOptions()));
    if (!*m)
      abort();
    return m;
  }();
  return **module;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [planText, flags] = input.split("\n--\n");
  tpfuzz::InputFile file(reinterpret_cast<const uint8_t *>(planText.data()),
                           planText.size());
  if (!file.ok())
    return 0;
  tp::TPApplyPlanOptions options;
  options.planFile = file.path();
  llvm::SmallVector<llvm::StringRef> parts;
  flags.split(parts, '\n');
  for (size_t i = 0; i < parts.size() && !flags.empty(); ++i) {
    if (i == 0)
      options.meshSpec.push_back(parts[i].str());
    else
      options.entries.push_back(parts[i].str());
  }
  OwningOpRef<ModuleOp> module = model().clone();
  PassManager pm(&quietContext());
  pm.addPass(tp::createTPApplyPlan(options));
  pm.addPass(tp::createTPPropagateSharding());
  (void)pm.run(*module);
  return 0;
}
