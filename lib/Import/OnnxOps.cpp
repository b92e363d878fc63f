//===- OnnxOps.cpp - the ONNX op types tp imports -------------------------===//
//
// One handler per ONNX op type (default domain, opsets 1-17). Handlers turn
// ONNX attributes and constant inputs into static tp ops; opset differences
// (axes as attribute vs. input, Softmax's flattening before opset 13) are
// resolved in them so that tp ops have one meaning. Each op family's file
// lists its op types with their handlers and first opsets; this registry
// gathers those lists and the handlers that have files of their own into
// one list sorted by name, which lookups and `--list-onnx-ops` read.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tp;

namespace {

/// The op types whose handlers have files of their own (NodeImporter.h).
const OnnxOpEntry kOwnFileOps[] = {
    {"ConvTranspose", 1, importConvTranspose},
    {"CumSum", 11, importCumSum},
    {"Einsum", 12, importEinsum},
    {"NegativeLogLikelihoodLoss", 12, importNegativeLogLikelihoodLoss},
    {"Range", 11, importRange},
    {"Resize", 11, importResize},
    {"ScatterElements", 11, importScatterElements},
    {"ScatterND", 11, importScatterND},
    {"SoftmaxCrossEntropyLoss", 12, importSoftmaxCrossEntropyLoss},
    {"TopK", 1, importTopK},
};

/// Every op type tp imports, sorted by name.
ArrayRef<OnnxOpEntry> allOps() {
  static const SmallVector<OnnxOpEntry> ops = [] {
    const ArrayRef<OnnxOpEntry> families[] = {
        elementwiseOnnxOps(), contractionOnnxOps(), normReduceOnnxOps(),
        shapeOnnxOps(),       constantOnnxOps(),    convOnnxOps(),
        kOwnFileOps};
    SmallVector<OnnxOpEntry> all;
    for (ArrayRef<OnnxOpEntry> family : families)
      llvm::append_range(all, family);
    llvm::sort(all, [](const OnnxOpEntry &a, const OnnxOpEntry &b) {
      return a.opType < b.opType;
    });
    assert(std::adjacent_find(all.begin(), all.end(),
                              [](const OnnxOpEntry &a, const OnnxOpEntry &b) {
                                return a.opType == b.opType;
                              }) == all.end() &&
           "an ONNX op type is listed by two files");
    return all;
  }();
  return ops;
}

} // namespace

NodeHandler tp::lookupNodeHandler(StringRef opType, int64_t opset) {
  for (const OnnxOpEntry &e : allOps())
    if (e.opType == opType && opset >= e.since)
      return e.handler;
  return nullptr;
}

int64_t tp::onnxOpSince(StringRef opType) {
  for (const OnnxOpEntry &e : allOps())
    if (e.opType == opType)
      return e.since;
  return 0;
}

ArrayRef<std::pair<StringRef, int64_t>> tp::supportedOnnxOps() {
  static const SmallVector<std::pair<StringRef, int64_t>> list = [] {
    SmallVector<std::pair<StringRef, int64_t>> l;
    for (const OnnxOpEntry &e : allOps())
      l.push_back({e.opType, e.since});
    return l;
  }();
  return list;
}
