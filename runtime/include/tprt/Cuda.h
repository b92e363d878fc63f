//===- Cuda.h - the CUDA device side of the runtime -------------*- C++ -*-===//
//
// Built when the CUDA toolkit is found (TPRT_HAVE_CUDA), into its own
// library, libtprt_cuda.so: libtprt and tp-run do not link it (nor cudart,
// cuBLAS, NCCL), so CPU programs never load them. They reach it through
// cudaApi(), which loads it beside libtprt.so on first use; CUDA programs
// link it themselves. Everything here works per calling thread: each rank
// (a thread or a process) has a current device, a CUDA stream, a cuBLAS
// handle. Without a GPU or a driver every call fails with a Status that says
// so; nothing aborts.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_CUDA_H
#define TPRT_CUDA_H

#include "tprt/Communicator.h"
#include "tprt/Status.h"

namespace tprt {
class Program;
} // namespace tprt

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace tprt::cuda {

/// The number of CUDA devices; an error naming the reason (no driver, no
/// device) when there are none.
Status deviceCount(int &count);
/// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)".
std::string deviceDescription(int device);
/// Binds the calling thread to `device`.
Status setDevice(int device);

/// The caching allocator of GPU memory that programs allocate from; the
/// host reaches it only through copy().
void *allocate(size_t bytes);
void *allocateAligned(size_t alignment, size_t bytes);
void release(void *ptr);

/// Waits for everything the calling thread's stream has queued.
Status synchronize();
/// cudaMemcpy with the kind inferred from the pointers, on this thread's
/// stream, then waits.
Status copy(void *dst, const void *src, size_t bytes);

/// Lets f32 GEMMs use TF32 tensor cores (PyTorch's allow_tf32).
void setAllowTf32(bool allow);

/// NCCL: one process per GPU. Rank 0 makes the id; every rank gets it (over
/// MPI or a file, see tp-run) before creating its communicator, which
/// splits one NCCL communicator per axes mask off the world's.
using NcclId = std::array<char, 128>;
Status makeNcclId(NcclId &id);
std::unique_ptr<Communicator>
createNcclCommunicator(const Mesh &mesh, const std::vector<int64_t> &axesMasks,
                       int rank, const NcclId &id, std::string &error);

/// The entry points of libtprt_cuda.so that libtprt and tp-run call.
struct CudaApi {
  Status (*deviceCount)(int &count);
  std::string (*deviceDescription)(int device);
  Status (*setDevice)(int device);
  void *(*allocate)(size_t bytes);
  void *(*allocateAligned)(size_t alignment, size_t bytes);
  void (*release)(void *ptr);
  void (*setAllowTf32)(bool allow);
  Status (*makeNcclId)(NcclId &id);
  std::unique_ptr<Communicator> (*createNcclCommunicator)(
      const Mesh &mesh, const std::vector<int64_t> &axesMasks, int rank,
      const NcclId &id, std::string &error);
  /// Program::runOnGpu.
  double (*runProgram)(const Program &program, const std::vector<void *> &args,
                       const std::vector<void *> &results);
};

/// libtprt_cuda.so's entry points, loaded on the first call; null (with
/// `error` set, if given) when it cannot be loaded: built without CUDA, or
/// cudart / cuBLAS / NCCL missing here.
const CudaApi *cudaApi(std::string *error = nullptr);

} // namespace tprt::cuda

#endif // TPRT_CUDA_H
