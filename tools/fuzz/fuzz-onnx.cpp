//===- fuzz-onnx.cpp - libFuzzer target: ONNX models, binary and text -----===//
//
// The whole import, as tp-compile runs it: the protobuf or text parser,
// the ONNX checker, shape inference, then tp's importer (node by node,
// constant folding included) into the tp dialect.
//
//===----------------------------------------------------------------------===//
#include "FuzzContext.h"
#include "FuzzInput.h"
#include "tp/Import/OnnxImporter.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tpfuzz::InputFile file(data, size);
  if (!file.ok())
    return 0;
  OwningOpRef<ModuleOp> module = tp::importOnnxFile(
      &tpfuzz::quietContext(), file.path(), tp::OnnxImportOptions());
  return 0;
}
