//===- MpiCommunicatorTest.cpp - the MPI communicator under mpirun -np 4 --===//
//
// Run as `mpirun -np 4 tprt-mpi-tests` (test/runtime/mpi-collectives.test):
// every process is one rank of a 2x2 mesh and runs the same checks as the
// threads communicator.
//
//===----------------------------------------------------------------------===//
#include "CollectiveChecks.h"

#include <mpi.h>

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

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
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
  return worst;
}
