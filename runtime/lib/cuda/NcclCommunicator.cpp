//===- NcclCommunicator.cpp - one process per GPU, NCCL -------------------===//
//
// One NCCL communicator for the world, and one per axes mask split off it
// up front (ncclCommSplit is collective: color = the group's first rank,
// key = the rank's place in the group, so that group order is the mesh's
// as with every other communicator). Collectives run on a stream of their
// own; the host polls it against the deadline and aborts the communicators
// when a rank never arrives, so a dead rank turns into an error, not a
// hang. Buffers are GPU memory. send / recv go over the world
// communicator, sends held back and grouped with the next recv.
//
//===----------------------------------------------------------------------===//
#include "CudaInternal.h"
#include "tprt/Cuda.h"
#include "tprt/DType.h"

#include <cstring>
#include <algorithm>
#include <map>
#include <nccl.h>
#include <thread>

using namespace tprt;

namespace {

bool ncclType(int32_t dtype, ncclDataType_t &t) {
  switch (dtype) {
  case TPRT_F32: t = ncclFloat32; return true;
  case TPRT_F16: t = ncclFloat16; return true;
  case TPRT_BF16: t = ncclBfloat16; return true;
  case TPRT_F64: t = ncclFloat64; return true;
  case TPRT_I64: t = ncclInt64; return true;
  case TPRT_I32: t = ncclInt32; return true;
  case TPRT_I8: t = ncclInt8; return true;
  case TPRT_BOOL: t = ncclUint8; return true;
  default: return false;
  }
}

class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(int rank, Mesh mesh) : Communicator(rank, std::move(mesh)) {}

  bool takesDeviceBuffers() const override { return true; }

  ~NcclCommunicator() override {
    for (auto &[mask, c] : groups)
      ncclCommDestroy(c);
    if (world)
      ncclCommDestroy(world);
    if (stream)
      cudaStreamDestroy(stream);
  }

  Status init(const std::vector<int64_t> &masks, const cuda::NcclId &id) {
    if (cudaError_t e = cudaStreamCreateWithFlags(&stream,
                                                  cudaStreamNonBlocking))
      return Status::error(std::string("creating NCCL's stream: ") +
                           cudaGetErrorString(e));
    ncclUniqueId uid;
    static_assert(sizeof uid == sizeof(cuda::NcclId));
    std::memcpy(&uid, id.data(), sizeof uid);
    if (Status s = nccl(ncclCommInitRank(&world, mesh_.numRanks(), uid, rank_),
                        "ncclCommInitRank");
        !s)
      return s;
    for (int64_t mask : masks) {
      std::vector<int> g = mesh_.group(rank_, mask);
      ncclComm_t c;
      if (Status s = nccl(ncclCommSplit(world, g.front(),
                                        int(mesh_.indexAlong(rank_, mask)), &c,
                                        nullptr),
                          "ncclCommSplit");
          !s)
        return s;
      groups[mask] = c;
    }
    return Status::ok();
  }

  Status allReduce(const void *src, void *dst, int64_t count, int32_t dtype,
                   int32_t reduction, int64_t mask,
                   const std::string &what) override {
    Call c;
    if (Status s = prepare(mask, dtype, what, c); !s)
      return s;
    ncclRedOp_t op = reduction == TPRT_MAX ? ncclMax : ncclSum;
    Status s = nccl(
        ncclAllReduce(src, dst, size_t(count), c.type, op, c.comm, stream),
        what);
    return s ? wait(what) : s;
  }

  Status allGather(const void *src, void *dst, int64_t outer, int64_t chunk,
                   int32_t dtype, int64_t mask,
                   const std::string &what) override {
    Call c;
    if (Status s = prepare(mask, dtype, what, c); !s)
      return s;
    // NCCL gathers member-major; with several outer indices the program
    // wants each member's block per outer index: gather into scratch, then
    // regroup.
    size_t block = chunk * c.elemSize;
    char *tmp = scratch(c, outer, block);
    Status s = nccl(ncclAllGather(src, tmp ? tmp : dst, size_t(outer * chunk),
                                  c.type, c.comm, stream),
                    what);
    if (s && tmp)
      s = regroup(tmp, static_cast<char *>(dst), /*toNccl=*/false, c, outer,
                  block);
    if (s)
      s = wait(what);
    cuda::release(tmp);
    return s;
  }

  Status reduceScatter(const void *src, void *dst, int64_t outer,
                       int64_t chunk, int32_t dtype, int64_t mask,
                       const std::string &what) override {
    Call c;
    if (Status s = prepare(mask, dtype, what, c); !s)
      return s;
    // Member-major first: member j's blocks of every outer index together.
    size_t block = chunk * c.elemSize;
    char *tmp = scratch(c, outer, block);
    Status s = tmp ? regroup(static_cast<const char *>(src), tmp,
                             /*toNccl=*/true, c, outer, block)
                   : Status::ok();
    if (s)
      s = nccl(ncclReduceScatter(tmp ? tmp : src, dst, size_t(outer * chunk),
                                 c.type, ncclSum, c.comm, stream),
               what);
    if (s)
      s = wait(what);
    cuda::release(tmp);
    return s;
  }

  /// A send is copied into scratch and held back until this rank's next
  /// recv, collective or finishSends, and then posted in one NCCL group with
  /// it (as Megatron's batched isend / irecv): a send posted alone would
  /// wait for its receiver on the stream, and two stages sending to each
  /// other would deadlock.
  Status send(const void *src, int64_t count, int32_t dtype, int peer,
              const std::string &what) override {
    ncclDataType_t type;
    if (Status s = checkP2p(peer, dtype, what, type); !s)
      return s;
    size_t bytes = count * dtypeSize(dtype);
    void *copy = cuda::allocate(std::max<size_t>(bytes, 1));
    // Copied before returning: the caller may overwrite src at once.
    cudaError_t e =
        cudaMemcpyAsync(copy, src, bytes, cudaMemcpyDeviceToDevice, stream);
    if (e == cudaSuccess)
      e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
      cuda::release(copy);
      return Status::error("rank " + std::to_string(rank_) + ": " + what +
                           ": " + cudaGetErrorString(e));
    }
    held.push_back({copy, size_t(count), type, peer, what});
    return Status::ok();
  }

  /// NCCL messages carry no size: a sender of another count is not caught
  /// here (the compiler emits both ends from one tensor type).
  Status recv(void *dst, int64_t count, int32_t dtype, int peer,
              const std::string &what) override {
    ncclDataType_t type;
    if (Status s = checkP2p(peer, dtype, what, type); !s)
      return s;
    return postHeld(what, [&]() {
      return ncclRecv(dst, size_t(count), type, peer, world, stream);
    });
  }

  Status finishSends() override {
    if (held.empty())
      return Status::ok();
    std::string what = held.back().what;
    return postHeld(what, [] { return ncclSuccess; });
  }

protected:
  // allGatherV / reduceScatterV pad and pack in GPU memory.
  void *allocateScratch(size_t bytes) override {
    return cuda::allocate(std::max<size_t>(bytes, 1));
  }
  void releaseScratch(void *ptr) override { cuda::release(ptr); }
  Status copyBytes(void *dst, const void *src, size_t bytes) override {
    return bytes ? cuda::copy(dst, src, bytes) : Status::ok();
  }

private:
  ncclComm_t world = nullptr;
  std::map<int64_t, ncclComm_t> groups;
  cudaStream_t stream = nullptr;

  /// Sends not yet posted: copies of their sources.
  struct HeldSend {
    void *copy;
    size_t count;
    ncclDataType_t type;
    int peer;
    std::string what;
  };
  std::vector<HeldSend> held;

  Status checkP2p(int peer, int32_t dtype, const std::string &what,
                  ncclDataType_t &type) {
    if (Status s = checkPeer(peer, what); !s)
      return s;
    if (!world)
      return Status::error("rank " + std::to_string(rank_) + ": " + what +
                           ": NCCL's communicator was aborted");
    if (!ncclType(dtype, type))
      return Status::error("rank " + std::to_string(rank_) + ": " + what +
                           ": NCCL cannot move element type " +
                           dtypeName(dtype));
    return Status::ok();
  }

  /// Posts the held sends and `also` (a recv, or nothing) in one group,
  /// waits for them, and frees the copies.
  template <typename Fn> Status postHeld(const std::string &what, Fn also) {
    Status s = nccl(ncclGroupStart(), what);
    for (const HeldSend &h : held)
      if (s)
        s = nccl(ncclSend(h.copy, h.count, h.type, h.peer, world, stream),
                 h.what);
    if (s)
      s = nccl(also(), what);
    if (Status end = nccl(ncclGroupEnd(), what); s)
      s = end;
    if (s)
      s = wait(what);
    for (const HeldSend &h : held)
      cuda::release(h.copy);
    held.clear();
    return s;
  }

  Status nccl(ncclResult_t r, const std::string &what) {
    if (r == ncclSuccess)
      return Status::ok();
    return Status::error("rank " + std::to_string(rank_) + ": " + what +
                         ": NCCL: " + ncclGetErrorString(r) + " (" +
                         ncclGetLastError(world) + ")");
  }

  /// What a collective over one group needs.
  struct Call {
    ncclComm_t comm;
    ncclDataType_t type;
    size_t members, elemSize;
  };

  Status prepare(int64_t mask, int32_t dtype, const std::string &what,
                 Call &c) {
    if (Status s = finishSends(); !s)
      return s;
    auto it = groups.find(mask);
    if (it == groups.end())
      return Status::error("rank " + std::to_string(rank_) + ": " + what +
                           ": no NCCL communicator for axes mask " +
                           std::to_string(mask));
    if (!ncclType(dtype, c.type))
      return Status::error("rank " + std::to_string(rank_) + ": " + what +
                           ": NCCL cannot reduce or move element type " +
                           dtypeName(dtype));
    c.comm = it->second;
    c.members = groupSize(mask);
    c.elemSize = dtypeSize(dtype);
    return Status::ok();
  }

  /// Scratch for `outer` blocks per member, or null when there is one
  /// outer index (the two layouts below are then the same).
  char *scratch(const Call &c, int64_t outer, size_t block) {
    return outer > 1 ? static_cast<char *>(
                           cuda::allocate(c.members * outer * block))
                     : nullptr;
  }

  /// Moves `outer` x members blocks of `block` bytes between the program's
  /// layout (per outer index, every member's block) and NCCL's (per member,
  /// every outer index's block), one strided copy per member.
  Status regroup(const char *from, char *to, bool toNccl, const Call &c,
                 int64_t outer, size_t block) {
    size_t wide = c.members * block, tall = outer * block;
    for (size_t j = 0; j < c.members; ++j) {
      size_t inProgram = j * block, inNccl = j * tall;
      cudaError_t e = cudaMemcpy2DAsync(
          to + (toNccl ? inNccl : inProgram), toNccl ? block : wide,
          from + (toNccl ? inProgram : inNccl), toNccl ? wide : block, block,
          size_t(outer), cudaMemcpyDefault, stream);
      if (e != cudaSuccess)
        return Status::error(std::string("rearranging blocks on the GPU: ") +
                             cudaGetErrorString(e));
    }
    return Status::ok();
  }

  /// Polls the stream until the collective is done, NCCL reports an error,
  /// or the deadline passes (then every communicator is aborted).
  Status wait(const std::string &what) {
    auto deadline = std::chrono::steady_clock::now() + timeout_;
    while (true) {
      cudaError_t e = cudaStreamQuery(stream);
      if (e == cudaSuccess)
        return Status::ok();
      if (e != cudaErrorNotReady)
        return Status::error("rank " + std::to_string(rank_) + ": " + what +
                             ": " + cudaGetErrorString(e));
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(world, &async);
      if (async != ncclSuccess && async != ncclInProgress)
        return nccl(async, what);
      if (std::chrono::steady_clock::now() > deadline) {
        for (auto &[mask, c] : groups)
          ncclCommAbort(c);
        groups.clear();
        ncclCommAbort(world);
        world = nullptr;
        return Status::error("rank " + std::to_string(rank_) + ": " + what +
                             " timed out after " + formatSeconds(timeout_) +
                             ": a rank of its group never arrived");
      }
      std::this_thread::yield();
    }
  }
};

} // namespace

Status cuda::makeNcclId(NcclId &id) {
  ncclUniqueId uid;
  if (ncclResult_t r = ncclGetUniqueId(&uid); r != ncclSuccess)
    return Status::error(std::string("ncclGetUniqueId: ") +
                         ncclGetErrorString(r));
  std::memcpy(id.data(), &uid, sizeof uid);
  return Status::ok();
}

std::unique_ptr<Communicator>
cuda::createNcclCommunicator(const Mesh &mesh,
                             const std::vector<int64_t> &masks, int rank,
                             const NcclId &id, std::string &error) {
  auto comm = std::make_unique<NcclCommunicator>(rank, mesh);
  if (Status s = comm->init(masks, id); !s) {
    error = s.message();
    return nullptr;
  }
  return comm;
}
