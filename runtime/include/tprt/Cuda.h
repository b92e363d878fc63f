//===- Cuda.h - the CUDA device side of the runtime -------------*- C++ -*-===//
//
// Built when the CUDA toolkit is found (TPRT_HAVE_CUDA). Everything here
// works per calling thread: each rank (a thread or a process) has a current
// device, a CUDA stream, a cuBLAS handle. Without a GPU or a driver every
// call fails with a Status that says so; nothing aborts.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_CUDA_H
#define TPRT_CUDA_H

#include "tprt/Communicator.h"
#include "tprt/Status.h"

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

} // namespace tprt::cuda

#endif // TPRT_CUDA_H
