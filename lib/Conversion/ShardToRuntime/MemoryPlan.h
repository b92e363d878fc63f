//===- MemoryPlan.h - bytes of the buffers a program allocates -*- C++ -*-===//
#ifndef TP_LIB_CONVERSION_SHARDTORUNTIME_MEMORYPLAN_H
#define TP_LIB_CONVERSION_SHARDTORUNTIME_MEMORYPLAN_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::tp {

/// The bytes the runtime's allocator hands out for `alloc` (0 for a
/// dynamic shape): its size rounded up to its alignment and to the
/// allocator's 64-byte granule.
int64_t allocationBytes(memref::AllocOp alloc);

} // namespace mlir::tp

#endif // TP_LIB_CONVERSION_SHARDTORUNTIME_MEMORYPLAN_H
