//===- RuntimeABI.h - what generated code calls in tprt --------*- C++ -*-===//
//
// The compiler's view of runtime/include/tprt/tprt.h: function names and
// the codes for element types and reductions. Both sides include the same
// constants (tprt.h is C; this header adds the MLIR type mapping).
//
//===----------------------------------------------------------------------===//
#ifndef TP_RUNTIME_RUNTIMEABI_H
#define TP_RUNTIME_RUNTIMEABI_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "tprt/tprt.h"
#include <optional>

namespace mlir::tp {

constexpr const char *kAllReduceFn = "tprt_all_reduce";
constexpr const char *kAllGatherFn = "tprt_all_gather";
constexpr const char *kReduceScatterFn = "tprt_reduce_scatter";
constexpr const char *kAxisIndexFn = "tprt_axis_index";
constexpr const char *kSendFn = "tprt_send";
constexpr const char *kRecvFn = "tprt_recv";
constexpr const char *kSgemmFn = "tprt_sgemm";
constexpr const char *kSgemmBatchedFn = "tprt_sgemm_batched";
constexpr const char *kGemmBf16Fn = "tprt_gemm_bf16";
constexpr const char *kConvFn = "tprt_conv";
/// Around each loop nest's call, for tp-run --trace (tprt/Trace.h).
constexpr const char *kKernelBeginFn = "tprt_kernel_begin";
constexpr const char *kKernelEndFn = "tprt_kernel_end";
/// The threads a rank's parallel loop nests may use (OpenMP's team size).
constexpr const char *kLoopThreadsFn = "tprt_loop_threads";
/// The CUDA target's entry points (tprt_cuda.h): device buffers, ordered
/// after the kernels launched before them.
constexpr const char *kCudaAllReduceFn = "tprt_cuda_all_reduce";
constexpr const char *kCudaAllGatherFn = "tprt_cuda_all_gather";
constexpr const char *kCudaReduceScatterFn = "tprt_cuda_reduce_scatter";
constexpr const char *kCudaGemmFn = "tprt_cuda_gemm";
constexpr int32_t kReduceSum = TPRT_SUM;
constexpr int32_t kReduceMax = TPRT_MAX;

/// The `target` option of the passes that emit runtime calls: true for
/// cuda, false for cpu; anything else is an error on `op` naming `pass`.
FailureOr<bool> isCudaTarget(StringRef target, Operation *op, StringRef pass);

/// The tprt dtype code of an element type, if the runtime handles it.
std::optional<int32_t> runtimeDType(Type elem);

/// The address of `memref`'s first element as an i64: how the tprt C ABI
/// takes buffers.
Value bufferAddress(OpBuilder &b, Location loc, Value memref);

/// The private declaration of runtime function `name` in `module`, made on
/// first use.
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    TypeRange args, TypeRange results = {});

} // namespace mlir::tp

#endif // TP_RUNTIME_RUNTIMEABI_H
