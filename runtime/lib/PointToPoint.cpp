//===- PointToPoint.cpp - what every backend's send / recv shares ---------===//
#include "tprt/Communicator.h"

using namespace tprt;

Status Communicator::checkPeer(int peer, const std::string &what) const {
  if (peer >= 0 && peer < mesh_.numRanks())
    return Status::ok();
  return Status::error("rank " + std::to_string(rank_) + ": " + what +
                       ": no rank " + std::to_string(peer) + " in mesh " +
                       mesh_.describe());
}

Status Communicator::sizeMismatch(int peer, size_t expected, size_t sent,
                                  const std::string &what) const {
  return Status::error("rank " + std::to_string(rank_) + ": " + what +
                       ": expected " + std::to_string(expected) +
                       " bytes from rank " + std::to_string(peer) +
                       ", which sent " + std::to_string(sent));
}
