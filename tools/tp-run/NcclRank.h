//===- NcclRank.h - this process as one rank of an NCCL run ----*- C++ -*-===//
//
// `tp-run --backend nccl`: one process per GPU. The rank comes from MPI
// (under mpirun) or from --rank / $RANK with a --rendezvous file, the GPU
// from the node-local rank; rank 0 makes the NCCL id and shares it over
// MPI or through the file. Built only with the CUDA runtime.
//
//===----------------------------------------------------------------------===//
#ifndef TP_TOOLS_TP_RUN_NCCLRANK_H
#define TP_TOOLS_TP_RUN_NCCLRANK_H

#include "tprt/Communicator.h"
#include "tprt/Manifest.h"

#include <chrono>
#include <memory>
#include <string>

namespace tprt {

struct NcclRank {
  int rank = 0;
  int device = 0;
  std::unique_ptr<Communicator> comm;
};

/// Binds this process to its GPU (before the program loads) and builds the
/// communicator for the program's axes masks and the whole mesh (`worldMask`,
/// for assembling outputs without MPI). `useMpi`: MPI is initialized.
Status setUpNcclRank(const Manifest &m, bool useMpi,
                     const std::string &rendezvous, int rankOpt,
                     int64_t worldMask, std::chrono::milliseconds timeout,
                     NcclRank &out);

} // namespace tprt

#endif // TP_TOOLS_TP_RUN_NCCLRANK_H
