//===- Communicator.h - collectives between the ranks of a mesh -*- C++ -*-===//
//
// One object per rank. Generated code reaches it through the C ABI
// (tprt.h); tests and tp-run use it directly. Implementations:
// ThreadsCommunicator (ranks are threads of one process, shared memory),
// MpiCommunicator (one process per rank, OpenMPI) and NcclCommunicator
// (one process per GPU). Besides the collectives, send / recv between two
// ranks carry a pipeline's activations and their gradients. Every collective gives
// up after the timeout with a message naming this rank, the collective and
// the ranks that never arrived, so a dead rank never hangs the others.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_COMMUNICATOR_H
#define TPRT_COMMUNICATOR_H

#include "tprt/Mesh.h"
#include "tprt/Status.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace tprt {

class Communicator {
public:
  virtual ~Communicator() = default;

  int rank() const { return rank_; }
  const Mesh &mesh() const { return mesh_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  /// The number of ranks in this rank's group along `axesMask`.
  int64_t groupSize(int64_t axesMask) const {
    return int64_t(mesh_.group(rank_, axesMask).size());
  }
  void setTimeout(std::chrono::milliseconds t) { timeout_ = t; }
  /// Whether the collectives take GPU buffers (NCCL); host communicators
  /// (threads, MPI) take host memory, and CUDA programs stage through it.
  virtual bool takesDeviceBuffers() const { return false; }

  /// Within the group of `axesMask`: dst = reduction of every member's src.
  virtual Status allReduce(const void *src, void *dst, int64_t count,
                           int32_t dtype, int32_t reduction, int64_t axesMask,
                           const std::string &what) = 0;
  /// src: `outer` blocks of `chunk`; dst: per outer index, every member's
  /// block in group order.
  virtual Status allGather(const void *src, void *dst, int64_t outer,
                           int64_t chunk, int32_t dtype, int64_t axesMask,
                           const std::string &what) = 0;
  /// src: per outer index, one block of `chunk` per member; dst: per outer
  /// index, the sum over members of this member's block.
  virtual Status reduceScatter(const void *src, void *dst, int64_t outer,
                               int64_t chunk, int32_t dtype, int64_t axesMask,
                               const std::string &what) = 0;

  /// Point to point, between pipeline stages. `peer` is a world rank.
  /// send hands `count` elements of src to `peer` and returns once they are
  /// copied out (src may be reused at once, and a send never waits for its
  /// receiver, so two stages that send to each other cannot deadlock);
  /// messages between two ranks arrive in the order they were sent.
  virtual Status send(const void *src, int64_t count, int32_t dtype, int peer,
                      const std::string &what) = 0;
  /// Waits for the next message from `peer` and copies it into dst; a
  /// message of another size, or none before the timeout, is an error that
  /// names both ranks and `what`.
  virtual Status recv(void *dst, int64_t count, int32_t dtype, int peer,
                      const std::string &what) = 0;
  /// Waits until every send of this rank has been delivered (before the
  /// communicator goes away); the timeout applies.
  virtual Status finishSends() { return Status::ok(); }

  /// all_gather of unequal blocks, as an uneven split leaves them
  /// (torch.chunk's sizes: a member may hand nothing): member i of the group
  /// hands counts[i] elements; dst receives every block, packed in group
  /// order. Each block is padded to the largest, gathered, then packed.
  Status allGatherV(const void *src, void *dst,
                    const std::vector<int64_t> &counts, int32_t dtype,
                    int64_t axesMask, const std::string &what);
  /// reduce_scatter into unequal blocks: src holds every member's block,
  /// packed in group order (counts[i] elements each); dst receives this
  /// member's block summed over the group.
  Status reduceScatterV(const void *src, void *dst,
                        const std::vector<int64_t> &counts, int32_t dtype,
                        int64_t axesMask, const std::string &what);

protected:
  Communicator(int rank, Mesh mesh) : rank_(rank), mesh_(std::move(mesh)) {}
  /// Scratch memory and copies of the kind the collectives take: host by
  /// default, GPU memory for NCCL.
  virtual void *allocateScratch(size_t bytes);
  virtual void releaseScratch(void *ptr);
  virtual Status copyBytes(void *dst, const void *src, size_t bytes);
  /// The errors send / recv share: a peer outside the mesh, and a message
  /// of another size than the receiver expects.
  Status checkPeer(int peer, const std::string &what) const;
  Status sizeMismatch(int peer, size_t expected, size_t sent,
                      const std::string &what) const;
  int rank_;
  Mesh mesh_;
  std::chrono::milliseconds timeout_{60000};
};

/// Shared state of N in-process ranks; create one, then a communicator per
/// rank (each used by its own thread).
class ThreadsWorld;
std::shared_ptr<ThreadsWorld> createThreadsWorld(const Mesh &mesh);
std::unique_ptr<Communicator> createThreadsCommunicator(
    std::shared_ptr<ThreadsWorld> world, int rank);

/// This process's rank under MPI (MPI must be initialized); builds the
/// group communicators of `axesMasks` up front, collectively.
std::unique_ptr<Communicator>
createMpiCommunicator(const Mesh &mesh, const std::vector<int64_t> &axesMasks,
                      std::string &error);

} // namespace tprt

#endif // TPRT_COMMUNICATOR_H
