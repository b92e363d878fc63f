//===- UnevenCollectives.cpp - all_gather / reduce_scatter of unequal blocks -===//
//
// For every communicator: the blocks are padded to the largest one, the
// equal-block collective runs, and the real elements are packed (or, for a
// reduce_scatter, this member's block is cut out). Padding is zeros, so a
// reduction over it adds nothing.
//
//===----------------------------------------------------------------------===//
#include "tprt/Communicator.h"
#include "tprt/DType.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <numeric>

using namespace tprt;

void *Communicator::allocateScratch(size_t bytes) {
  return std::malloc(std::max<size_t>(bytes, 1));
}

void Communicator::releaseScratch(void *ptr) { std::free(ptr); }

Status Communicator::copyBytes(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
  return Status::ok();
}

namespace {
/// Scratch memory released on every path.
struct Scratch {
  Communicator *comm;
  void *ptr;
  void (*release)(Communicator *, void *);
  ~Scratch() { release(comm, ptr); }
  char *data() const { return static_cast<char *>(ptr); }
};
} // namespace

/// Checks the counts against the group; returns the largest block.
static Status checkCounts(const Communicator &c, const std::vector<int64_t> &counts,
                          int64_t mask, const std::string &what,
                          int64_t &largest) {
  if (int64_t(counts.size()) != c.groupSize(mask))
    return Status::error("rank " + std::to_string(c.rank()) + ": " + what +
                         ": " + std::to_string(counts.size()) +
                         " block sizes for a group of " +
                         std::to_string(c.groupSize(mask)));
  largest = 0;
  for (int64_t n : counts) {
    if (n < 0)
      return Status::error("rank " + std::to_string(c.rank()) + ": " + what +
                           ": a negative block size");
    largest = std::max(largest, n);
  }
  return Status::ok();
}

Status Communicator::allGatherV(const void *src, void *dst,
                                const std::vector<int64_t> &counts,
                                int32_t dtype, int64_t mask,
                                const std::string &what) {
  int64_t largest;
  if (Status s = checkCounts(*this, counts, mask, what, largest); !s)
    return s;
  size_t es = dtypeSize(dtype), block = largest * es;
  int64_t me = mesh_.indexAlong(rank_, mask), n = int64_t(counts.size());
  auto release = [](Communicator *c, void *p) { c->releaseScratch(p); };
  Scratch mine{this, allocateScratch(block), release};
  Scratch all{this, allocateScratch(block * n), release};
  std::vector<char> zeros(block, 0);
  if (Status s = copyBytes(mine.data(), zeros.data(), block); !s)
    return s;
  if (Status s = copyBytes(mine.data(), src, counts[me] * es); !s)
    return s;
  if (Status s = allGather(mine.data(), all.data(), 1, largest, dtype, mask,
                           what);
      !s)
    return s;
  size_t at = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (Status s = copyBytes(static_cast<char *>(dst) + at,
                             all.data() + i * block, counts[i] * es);
        !s)
      return s;
    at += counts[i] * es;
  }
  return Status::ok();
}

Status Communicator::reduceScatterV(const void *src, void *dst,
                                    const std::vector<int64_t> &counts,
                                    int32_t dtype, int64_t mask,
                                    const std::string &what) {
  int64_t largest;
  if (Status s = checkCounts(*this, counts, mask, what, largest); !s)
    return s;
  size_t es = dtypeSize(dtype), block = largest * es;
  int64_t me = mesh_.indexAlong(rank_, mask), n = int64_t(counts.size());
  auto release = [](Communicator *c, void *p) { c->releaseScratch(p); };
  Scratch padded{this, allocateScratch(block * n), release};
  Scratch mine{this, allocateScratch(block), release};
  std::vector<char> zeros(block * n, 0);
  if (Status s = copyBytes(padded.data(), zeros.data(), block * n); !s)
    return s;
  size_t at = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (Status s = copyBytes(padded.data() + i * block,
                             static_cast<const char *>(src) + at,
                             counts[i] * es);
        !s)
      return s;
    at += counts[i] * es;
  }
  if (Status s = reduceScatter(padded.data(), mine.data(), 1, largest, dtype,
                               mask, what);
      !s)
    return s;
  return copyBytes(dst, mine.data(), counts[me] * es);
}
