//===- NcclRank.cpp - this process as one rank of an NCCL run -------------===//
#include "NcclRank.h"

#include "tprt/Cuda.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mpi.h>
#include <thread>

using namespace tprt;

static int envInt(const char *name, int otherwise) {
  const char *v = std::getenv(name);
  return v && *v ? std::atoi(v) : otherwise;
}

/// Rank 0 writes the id to `path` (a temporary renamed into place, so that
/// nobody reads half of it); the others wait for it.
static Status shareIdByFile(const std::string &path, int rank,
                            cuda::NcclId &id,
                            std::chrono::milliseconds timeout) {
  if (rank == 0) {
    std::string tmp = path + ".tmp";
    {
      std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
      f.write(id.data(), id.size());
      if (!f)
        return Status::error("--rendezvous " + path + ": cannot write " + tmp);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      return Status::error("--rendezvous " + path + ": cannot rename " + tmp);
    return Status::ok();
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::ifstream f(path, std::ios::binary);
    if (f && f.read(id.data(), id.size()))
      return Status::ok();
    if (std::chrono::steady_clock::now() > deadline)
      return Status::error("--rendezvous " + path + ": rank 0 did not write "
                           "the NCCL id within " + formatSeconds(timeout) +
                           " (is rank 0 running, with the same path?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status tprt::setUpNcclRank(const Manifest &m, bool useMpi,
                           const std::string &rendezvous, int rankOpt,
                           int64_t worldMask, std::chrono::milliseconds timeout,
                           NcclRank &out) {
  int numRanks = m.mesh.numRanks(), local;
  if (useMpi) {
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &out.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != numRanks)
      return Status::error("mpirun started " + std::to_string(size) +
                           " processes; the program's mesh " +
                           m.mesh.describe() + " has " +
                           std::to_string(numRanks) + " devices");
    local = envInt("OMPI_COMM_WORLD_LOCAL_RANK", out.rank);
  } else {
    out.rank = rankOpt >= 0 ? rankOpt : envInt("RANK", -1);
    if (out.rank < 0 || out.rank >= numRanks)
      return Status::error("--backend nccl with --rendezvous needs this "
                           "process's rank in 0.." +
                           std::to_string(numRanks - 1) +
                           " (--rank or $RANK)");
    local = envInt("LOCAL_RANK", out.rank);
  }
  int devices;
  std::string why;
  const cuda::CudaApi *api = cuda::cudaApi(&why);
  if (!api)
    return Status::error("--backend nccl: " + why);
  if (Status s = api->deviceCount(devices); !s)
    return s;
  out.device = local % devices;
  if (Status s = api->setDevice(out.device); !s)
    return s;

  cuda::NcclId id{};
  if (out.rank == 0)
    if (Status s = api->makeNcclId(id); !s)
      return s;
  if (useMpi)
    MPI_Bcast(id.data(), int(id.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
  else if (Status s = shareIdByFile(rendezvous, out.rank, id, timeout); !s)
    return s;

  std::vector<int64_t> masks = m.axisMasks;
  if (std::find(masks.begin(), masks.end(), worldMask) == masks.end())
    masks.push_back(worldMask);
  std::string error;
  out.comm = api->createNcclCommunicator(m.mesh, masks, out.rank, id, error);
  if (!out.comm)
    return Status::error("rank " + std::to_string(out.rank) + ": " + error);
  out.comm->setTimeout(timeout);
  return Status::ok();
}
