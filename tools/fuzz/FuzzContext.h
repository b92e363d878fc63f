//===- FuzzContext.h - one MLIR context for a fuzz target -------*- C++ -*-===//
#ifndef TP_TOOLS_FUZZ_FUZZCONTEXT_H
#define TP_TOOLS_FUZZ_FUZZCONTEXT_H

#include "tp/InitTP.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"

namespace tpfuzz {

/// Every dialect loaded once; diagnostics dropped, since errors are the
/// expected outcome of most inputs.
inline mlir::MLIRContext &quietContext() {
  static mlir::MLIRContext *context = [] {
    mlir::DialectRegistry registry;
    mlir::registerAllDialects(registry);
    mlir::tp::registerTPDialects(registry);
    auto *c = new mlir::MLIRContext(registry);
    c->loadAllAvailableDialects();
    c->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    return c;
  }();
  return *context;
}

} // namespace tpfuzz

#endif // TP_TOOLS_FUZZ_FUZZCONTEXT_H
