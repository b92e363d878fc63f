//===- InitTP.h - register every tp dialect and pass ----------*- C++ -*-===//
//
// One place that tools (tp-opt, tp-compile) call so that they see the same
// dialects, passes and pipelines.
//
//===----------------------------------------------------------------------===//
#ifndef TP_INITTP_H
#define TP_INITTP_H

namespace mlir {
class DialectRegistry;
namespace tp {

/// Adds the tp dialect to `registry`.
void registerTPDialects(DialectRegistry &registry);

/// Registers every tp pass (and pipeline) with the global pass registry.
void registerTPPasses();

} // namespace tp
} // namespace mlir

#endif // TP_INITTP_H
