//===- MpiCommunicatorTest.cpp - the MPI communicator under mpirun -np 4 --===//
//
// Run as `mpirun -np 4 tprt-mpi-tests` (test/runtime/mpi-collectives.test):
// every process is one rank of a 2x2 mesh and runs the same checks as the
// threads communicator, send / recv among them.
//
//===----------------------------------------------------------------------===//
#include "CollectiveChecks.h"

#include <mpi.h>
#include <thread>

using namespace tprt;
using namespace tprt::testing;

namespace {
std::unique_ptr<Communicator> comm;
Mesh worldMesh;

void onThisRank(const Mesh &, const std::function<void(Communicator &)> &body) {
  body(*comm);
}
} // namespace

TEST(MpiCommunicator, EveryCollectiveDtypeAndGroup) {
  checkEveryCollective(onThisRank, worldMesh);
}

TEST(MpiCommunicator, UnevenBlocks) {
  checkUnevenCollectives(onThisRank, worldMesh);
}

TEST(MpiCommunicator, SendRecvInOrder) { checkSendRecv(onThisRank, worldMesh); }

/// `--recv-timeout-path`: rank 0 never sends; rank 1's recv gives up after
/// its 0.5 s timeout, naming both ranks and what it waited for.
int recvTimeoutPath() {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string error;
  auto c = createMpiCommunicator(mesh({2}), {1}, error);
  if (rank == 0) {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    return 0;
  }
  c->setTimeout(std::chrono::milliseconds(500));
  float x[4];
  Status s = c->recv(x, 4, TPRT_F32, 0,
                     "recv of stage 0's /layers.1/Add_output_0 for "
                     "microbatch 3 (site 2)");
  std::printf("%s\n", s.message().c_str());
  std::fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, s.failed() ? 3 : 0);
  return 0;
}

/// `--timeout-path`: rank 1 never joins the all_reduce; rank 0 must give up
/// after its 0.5 s timeout with a message naming it and the collective.
int timeoutPath() {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string error;
  Mesh m = mesh({2});
  auto c = createMpiCommunicator(m, {1}, error);
  if (rank == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    return 0;
  }
  c->setTimeout(std::chrono::milliseconds(500));
  float x = 1, y = 0;
  auto start = std::chrono::steady_clock::now();
  Status s = c->allReduce(&x, &y, 1, TPRT_F32, TPRT_SUM, 1,
                          "all_reduce at /fc2/Gemm (site 0)");
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  std::printf("%s\nreturned after %.1f s\n", s.message().c_str(), seconds);
  std::fflush(stdout);
  // What tp-run does on a failed collective: stop every rank.
  MPI_Abort(MPI_COMM_WORLD, s.failed() ? 3 : 0);
  return 0;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TP_LEAK_SANITIZER 1
#include <unistd.h>
#endif
#endif

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc > 1 && std::string(argv[1]) == "--timeout-path")
    return timeoutPath();
  if (argc > 1 && std::string(argv[1]) == "--recv-timeout-path")
    return recvTimeoutPath();
  ::testing::InitGoogleTest(&argc, argv);
  worldMesh = mesh({2, 2});
  std::string error;
  comm = createMpiCommunicator(worldMesh, {1, 2, 3}, error);
  if (!comm) {
    std::fprintf(stderr, "%s\n", error.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int rc = RUN_ALL_TESTS();
  // Every rank must pass: a failure anywhere fails the run.
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  comm.reset();
  MPI_Finalize();
#if TP_LEAK_SANITIZER
  // As tp-run: OpenMPI's leaks have no stacks a suppression could match
  // (scripts/lsan-suppressions.txt).
  std::fflush(nullptr);
  _exit(worst);
#endif
  return worst;
}
