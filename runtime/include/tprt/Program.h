//===- Program.h - load and call a compiled program ------------*- C++ -*-===//
#ifndef TPRT_PROGRAM_H
#define TPRT_PROGRAM_H

#include "tprt/Communicator.h"
#include "tprt/Manifest.h"

#include <array>
#include <chrono>
#include <map>
#include <memory>

namespace tprt {

class TraceRecorder;

/// Calls, bytes and time per collective site of one rank (--profile).
struct SiteStats {
  int64_t calls = 0;
  int64_t bytes = 0;
  double seconds = 0;
};

/// What the C ABI needs to know on the calling thread: which rank it is.
struct RankContext {
  Communicator *comm = nullptr;
  const std::vector<std::string> *sites = nullptr;
  std::vector<SiteStats> *stats = nullptr;
  /// With --profile: calls and time per GEMM shape {m, n, k} (bytes unused).
  std::map<std::array<int64_t, 3>, SiteStats> *gemms = nullptr;
  /// With --trace: the rank's timeline (tprt/Trace.h).
  TraceRecorder *trace = nullptr;
  /// With --profile: seconds per kernel site (the manifest's kernel_sites).
  std::vector<double> *kernelSeconds = nullptr;
};

/// The calling thread's rank context (null outside a rank).
RankContext *currentRankContext();

/// Binds the calling thread to a rank; generated code then calls tprt_*.
void setRankContext(RankContext *context);

/// With --profile: `count` GEMMs of shape {m, n, k} ran on the calling rank
/// from `start` until now (nothing when not profiling).
void recordGemms(int64_t m, int64_t n, int64_t k, int64_t count,
                 std::chrono::steady_clock::time_point start);

/// tprt_sgemm_batched's `batch` > 1 products, on oneDNN's matmul.
void batchedSgemm(int64_t a, int64_t b, int64_t c, int64_t batch, int64_t m,
                  int64_t n, int64_t k, int32_t trans);

/// The buffers the program allocates on the calling thread (its rank's
/// temporaries), in bytes as the allocator hands them out: the most in use
/// at once since resetTemporaryPeak(). tp-run --profile compares it with the
/// manifest's peak_temporary_bytes (tp-plan-peak-memory's plan).
void resetTemporaryPeak();
int64_t temporaryPeak();
/// Host bytes the process's caching allocator holds (in use or cached for
/// reuse), for all ranks of the process.
int64_t reservedProgramBytes();

/// The most bytes any one thread's convolution workspace (tprt_conv's
/// reordered operands and oneDNN's scratchpad, kept between steps) has
/// held: memory beside the program's planned temporaries.
size_t convolutionWorkspaceBytes();

/// Threads each GEMM (OpenBLAS's) and each parallel loop nest (an OpenMP
/// team) of a rank may use; ranks that are threads share cores. Until it
/// is called, loop nests use as many as OpenBLAS does. `gemmThreads`, when
/// not 0, is the GEMMs' own count; `threads` 0 keeps the nests at
/// OpenBLAS's count from before the call.
void setRankThreads(int threads, int gemmThreads = 0);

/// The threads of a library kernel (an OpenBLAS GEMM, a oneDNN
/// convolution): the GEMMs' count that setRankThreads set. Their sums may
/// change order with it; the loop nests' do not.
int libraryThreads();

/// One rank's result buffers (zeroed, in the manifest's order), given its
/// argument buffers: an in-place update's result takes its argument's
/// buffer, which `args` then no longer holds (the step keeps one copy of
/// the weights), and the program gets that buffer for both. With `rank`,
/// a pipeline rank gets none for the results another stage writes.
std::vector<std::vector<char>>
makeResultBuffers(const Manifest &m, std::vector<std::vector<char>> &args,
                  int rank = -1);

class Program {
public:
  /// dlopen()s dir/program.so (its tprt_* references resolve against this
  /// library) and finds the entry point.
  static Status load(const Manifest &manifest, std::unique_ptr<Program> &out);
  ~Program();

  /// One step on the calling thread's rank: `args` and `results` are local
  /// host buffers, in the manifest's order. A CUDA program's buffers are
  /// copied to the rank's GPU and its results back. Returns the seconds
  /// the program itself ran (for CUDA: without those copies).
  double run(const std::vector<void *> &args,
             const std::vector<void *> &results) const;

  bool onGpu() const { return manifest.target == "cuda"; }

  /// run() for CUDA programs (cuda/ProgramOnGpu.cpp, in libtprt_cuda): the
  /// rank's buffers are staged through GPU memory around call().
  double runOnGpu(const std::vector<void *> &args,
                  const std::vector<void *> &results) const;

private:
  explicit Program(const Manifest &m) : manifest(m) {}
  /// Calls the entry point on buffers the program addresses directly.
  void call(const std::vector<void *> &args,
            const std::vector<void *> &results) const;
  const Manifest &manifest;
  void *handle = nullptr;
  void (*entry)(void **) = nullptr;
};

} // namespace tprt

#endif // TPRT_PROGRAM_H
