//===- fuzz-onnx.cpp - libFuzzer target: ONNX models, binary and text -----===//
//
// The whole import, as tp-compile runs it: the protobuf or text parser,
// the ONNX checker, shape inference, then tp's importer (node by node,
// constant folding included) into the tp dialect.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "tp/Import/OnnxImporter.h"
#include "tp/InitTP.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static MLIRContext *context = [] {
    DialectRegistry registry;
    registerAllDialects(registry);
    tp::registerTPDialects(registry);
    auto *c = new MLIRContext(registry);
    c->loadAllAvailableDialects();
    c->getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
    return c;
  }();
  tp::fuzz::InputFile file(data, size);
  if (!file.ok())
    return 0;
  OwningOpRef<ModuleOp> module =
      tp::importOnnxFile(context, file.path(), tp::OnnxImportOptions());
  return 0;
}
