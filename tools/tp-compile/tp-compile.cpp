//===- tp-compile.cpp - the tp driver: model.onnx -> program --------------===//
//
//   tp-compile model.onnx [--shape x=8x64] --emit=tp|linalg -o out.mlir
//
// Nothing is written unless every stage succeeds.
//
//===----------------------------------------------------------------------===//
#include "tp/Conversion/Passes.h"
#include "tp/Import/OnnxImporter.h"
#include "tp/InitTP.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Emit { TP, Linalg };

cl::OptionCategory category("tp-compile options");

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<model.onnx>"), cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file ('-' for stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(category));
cl::list<std::string>
    shapes("shape",
           cl::desc("Bind a graph input's shape, e.g. --shape x=8x64 "
                    "(repeat or comma-separate for several inputs)"),
           cl::value_desc("input=d0xd1..."), cl::CommaSeparated,
           cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::TP),
    cl::values(clEnumValN(Emit::TP, "tp", "the imported graph in the tp dialect"),
               clEnumValN(Emit::Linalg, "linalg",
                          "after tp-lower-to-linalg (linalg/tensor/arith/math)")),
    cl::cat(category));
cl::opt<bool> listOps("list-onnx-ops",
                      cl::desc("Print the supported ONNX ops and opsets "
                               "(a markdown table) and exit"),
                      cl::cat(category));
cl::opt<bool> verbose("v", cl::desc("Print one progress line per stage"),
                      cl::cat(category));

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
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tp-compile: compile an ONNX model into a tp program\n\n"
      "  tp-compile model.onnx --emit=tp -o model.mlir\n"
      "  tp-compile model.onnx --shape x=8x64 --emit=linalg -o -\n\n"
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

  tp::OnnxImportOptions options;
  for (const std::string &s : shapes)
    if (auto err = tp::parseShapeBinding(s, options)) {
      llvm::errs() << "tp-compile: error: " << *err << "\n";
      return 1;
    }

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  tp::registerTPDialects(registry);
  MLIRContext context(registry);
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

  progress("importing " + inputFile);
  OwningOpRef<ModuleOp> module =
      tp::importOnnxFile(&context, inputFile, options);
  if (!module)
    return 1;

  if (emit == Emit::Linalg) {
    progress("lowering to linalg");
    PassManager pm(&context);
    pm.addPass(tp::createTPLowerToLinalg());
    if (failed(pm.run(*module)))
      return 1;
  }

  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "tp-compile: error: " << error << "\n";
    return 1;
  }
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  progress("wrote " + outputFile);
  return 0;
}
