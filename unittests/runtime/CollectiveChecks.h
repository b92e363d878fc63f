//===- CollectiveChecks.h - collective checks for any backend --*- C++ -*-===//
//
// Each check runs a collective on every rank through `onEveryRank` (threads:
// one thread per rank; MPI: this process's rank) and compares every
// element with the value computed from the group's inputs.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_UNITTESTS_COLLECTIVECHECKS_H
#define TPRT_UNITTESTS_COLLECTIVECHECKS_H

#include "tprt/Communicator.h"
#include "tprt/DType.h"

#include <algorithm>
#include <functional>
#include <gtest/gtest.h>

namespace tprt::testing {

using RankRunner =
    std::function<void(const Mesh &, const std::function<void(Communicator &)> &)>;

inline Mesh mesh(std::vector<int64_t> sizes) {
  Mesh m;
  m.sizes = sizes;
  for (size_t i = 0; i < sizes.size(); ++i)
    m.names.push_back("a" + std::to_string(i));
  return m;
}

/// A value that depends on rank and index, exact in every dtype tested.
inline double value(int rank, int64_t i) { return rank * 8 + i % 5 - 2; }

template <typename T> T encode(double v, int32_t dtype) {
  if constexpr (sizeof(T) == 2)
    return dtype == TPRT_F16 ? floatToHalf(float(v)) : floatToBf16(float(v));
  else
    return T(v);
}

template <typename T> double decode(T v, int32_t dtype) {
  if constexpr (sizeof(T) == 2)
    return dtype == TPRT_F16 ? halfToFloat(v) : bf16ToFloat(v);
  else
    return double(v);
}

template <typename T>
void checkAllReduce(const RankRunner &onEveryRank, const Mesh &m, int64_t mask, int32_t dtype, int32_t op) {
  const int64_t count = 7; // not a multiple of any group size
  onEveryRank(m, [&](Communicator &c) {
    std::vector<T> src(count), dst(count);
    for (int64_t i = 0; i < count; ++i)
      src[i] = encode<T>(value(c.rank(), i), dtype);
    ASSERT_TRUE(c.allReduce(src.data(), dst.data(), count, dtype, op, mask,
                            "test all_reduce"));
    std::vector<int> group = m.group(c.rank(), mask);
    for (int64_t i = 0; i < count; ++i) {
      double want = op == TPRT_MAX ? -1e30 : 0;
      for (int r : group)
        want = op == TPRT_MAX ? std::max(want, value(r, i)) : want + value(r, i);
      EXPECT_EQ(decode<T>(dst[i], dtype), want)
          << "rank " << c.rank() << " element " << i;
    }
  });
}

template <typename T>
void checkAllGather(const RankRunner &onEveryRank, const Mesh &m, int64_t mask, int32_t dtype) {
  const int64_t outer = 2, chunk = 3;
  onEveryRank(m, [&](Communicator &c) {
    std::vector<int> group = m.group(c.rank(), mask);
    std::vector<T> src(outer * chunk), dst(outer * chunk * group.size());
    for (int64_t i = 0; i < outer * chunk; ++i)
      src[i] = encode<T>(value(c.rank(), i), dtype);
    ASSERT_TRUE(c.allGather(src.data(), dst.data(), outer, chunk, dtype, mask,
                            "test all_gather"));
    size_t k = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int r : group)
        for (int64_t j = 0; j < chunk; ++j, ++k)
          EXPECT_EQ(decode<T>(dst[k], dtype), value(r, o * chunk + j));
  });
}

template <typename T>
void checkReduceScatter(const RankRunner &onEveryRank, const Mesh &m, int64_t mask, int32_t dtype) {
  const int64_t outer = 2, chunk = 3;
  onEveryRank(m, [&](Communicator &c) {
    std::vector<int> group = m.group(c.rank(), mask);
    int64_t n = group.size(), me = m.indexAlong(c.rank(), mask);
    std::vector<T> src(outer * n * chunk), dst(outer * chunk);
    for (int64_t i = 0; i < int64_t(src.size()); ++i)
      src[i] = encode<T>(value(c.rank(), i), dtype);
    ASSERT_TRUE(c.reduceScatter(src.data(), dst.data(), outer, chunk, dtype,
                                mask, "test reduce_scatter"));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < chunk; ++j) {
        double want = 0;
        for (int r : group)
          want += value(r, (o * n + me) * chunk + j);
        EXPECT_EQ(decode<T>(dst[o * chunk + j], dtype), want);
      }
  });
}

/// torch.chunk's block sizes of `total` elements over `n` members: ceil
/// (total / n) each, the last ones fewer, possibly none.
inline std::vector<int64_t> chunkCounts(int64_t total, int64_t n) {
  int64_t block = (total + n - 1) / n;
  std::vector<int64_t> counts;
  for (int64_t i = 0; i < n; ++i)
    counts.push_back(std::clamp<int64_t>(total - i * block, 0, block));
  return counts;
}

/// Unequal blocks of `total` elements (some members may hold none).
template <typename T>
void checkAllGatherV(const RankRunner &onEveryRank, const Mesh &m, int64_t mask,
                     int32_t dtype, int64_t total) {
  onEveryRank(m, [&](Communicator &c) {
    std::vector<int> group = m.group(c.rank(), mask);
    std::vector<int64_t> counts = chunkCounts(total, group.size());
    int64_t me = m.indexAlong(c.rank(), mask);
    std::vector<T> src(counts[me]), dst(total);
    for (int64_t i = 0; i < counts[me]; ++i)
      src[i] = encode<T>(value(c.rank(), i), dtype);
    ASSERT_TRUE(c.allGatherV(src.data(), dst.data(), counts, dtype, mask,
                             "test all_gather of unequal blocks"));
    size_t k = 0;
    for (size_t g = 0; g < group.size(); ++g)
      for (int64_t j = 0; j < counts[g]; ++j, ++k)
        EXPECT_EQ(decode<T>(dst[k], dtype), value(group[g], j))
            << "rank " << c.rank() << " element " << k << " of " << total;
  });
}

template <typename T>
void checkReduceScatterV(const RankRunner &onEveryRank, const Mesh &m,
                         int64_t mask, int32_t dtype, int64_t total) {
  onEveryRank(m, [&](Communicator &c) {
    std::vector<int> group = m.group(c.rank(), mask);
    std::vector<int64_t> counts = chunkCounts(total, group.size());
    int64_t me = m.indexAlong(c.rank(), mask);
    int64_t first = 0;
    for (int64_t i = 0; i < me; ++i)
      first += counts[i];
    std::vector<T> src(total), dst(counts[me]);
    for (int64_t i = 0; i < total; ++i)
      src[i] = encode<T>(value(c.rank(), i), dtype);
    ASSERT_TRUE(c.reduceScatterV(src.data(), dst.data(), counts, dtype, mask,
                                 "test reduce_scatter of unequal blocks"));
    for (int64_t j = 0; j < counts[me]; ++j) {
      double want = 0;
      for (int r : group)
        want += value(r, first + j);
      EXPECT_EQ(decode<T>(dst[j], dtype), want)
          << "rank " << c.rank() << " element " << j << " of " << total;
    }
  });
}

/// Unequal blocks on every sub-group of `m`: torch.chunk's sizes of 1
/// element (only the first member holds one), 2 * (n - 1) (the last
/// member holds none from 3 members on) and 2n + 1.
inline void checkUnevenCollectives(const RankRunner &run, const Mesh &m) {
  for (int64_t mask = 1; mask < (int64_t(1) << m.sizes.size()); ++mask) {
    int64_t n = int64_t(m.group(0, mask).size());
    for (int64_t total : {int64_t(1), 2 * (n - 1), 2 * n + 1}) {
      if (total == 0)
        continue;
      checkAllGatherV<float>(run, m, mask, TPRT_F32, total);
      checkAllGatherV<int64_t>(run, m, mask, TPRT_I64, total);
      checkReduceScatterV<float>(run, m, mask, TPRT_F32, total);
      checkReduceScatterV<uint16_t>(run, m, mask, TPRT_BF16, total);
    }
  }
}

/// Every collective, every dtype, every sub-group of `m`.
inline void checkEveryCollective(const RankRunner &run, const Mesh &m) {
  for (int64_t mask = 1; mask < (int64_t(1) << m.sizes.size()); ++mask) {
    checkAllReduce<float>(run, m, mask, TPRT_F32, TPRT_SUM);
    checkAllReduce<float>(run, m, mask, TPRT_F32, TPRT_MAX);
    checkAllReduce<uint16_t>(run, m, mask, TPRT_F16, TPRT_SUM);
    checkAllReduce<uint16_t>(run, m, mask, TPRT_BF16, TPRT_SUM);
    checkAllReduce<int64_t>(run, m, mask, TPRT_I64, TPRT_SUM);
    checkAllReduce<int64_t>(run, m, mask, TPRT_I64, TPRT_MAX);
    checkAllGather<float>(run, m, mask, TPRT_F32);
    checkAllGather<uint16_t>(run, m, mask, TPRT_F16);
    checkAllGather<uint16_t>(run, m, mask, TPRT_BF16);
    checkAllGather<int64_t>(run, m, mask, TPRT_I64);
    checkReduceScatter<float>(run, m, mask, TPRT_F32);
    checkReduceScatter<uint16_t>(run, m, mask, TPRT_F16);
    checkReduceScatter<uint16_t>(run, m, mask, TPRT_BF16);
    checkReduceScatter<int64_t>(run, m, mask, TPRT_I64);
  }
}

/// send / recv: every rank sends two messages (f32, then i64, of other
/// sizes) to the next rank in a ring and one to the previous, before it
/// receives any (sends never wait for their receiver); each message arrives
/// whole and in order. On one rank the ring is the rank itself.
inline void checkSendRecv(const RankRunner &onEveryRank, const Mesh &m) {
  onEveryRank(m, [&](Communicator &c) {
    int n = m.numRanks(), me = c.rank();
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    auto message = [](int from, int64_t count, int64_t salt) {
      std::vector<int64_t> v(count);
      for (int64_t i = 0; i < count; ++i)
        v[i] = value(from, i) + salt;
      return v;
    };
    std::vector<int64_t> wide = message(me, 9, 0), back = message(me, 3, 50);
    std::vector<float> narrow;
    for (int64_t x : message(me, 5, 100))
      narrow.push_back(float(x));
    ASSERT_TRUE(c.send(narrow.data(), 5, TPRT_F32, next, "test send 1"));
    ASSERT_TRUE(c.send(wide.data(), 9, TPRT_I64, next, "test send 2"));
    ASSERT_TRUE(c.send(back.data(), 3, TPRT_I64, prev, "test send back"));
    narrow.assign(5, -1); // the sends copied their sources
    std::vector<float> gotNarrow(5);
    std::vector<int64_t> gotWide(9), gotBack(3);
    ASSERT_TRUE(c.recv(gotNarrow.data(), 5, TPRT_F32, prev, "test recv 1"));
    ASSERT_TRUE(c.recv(gotWide.data(), 9, TPRT_I64, prev, "test recv 2"));
    ASSERT_TRUE(c.recv(gotBack.data(), 3, TPRT_I64, next, "test recv back"));
    std::vector<float> wantNarrow;
    for (int64_t x : message(prev, 5, 100))
      wantNarrow.push_back(float(x));
    EXPECT_EQ(gotNarrow, wantNarrow) << "rank " << me;
    EXPECT_EQ(gotWide, message(prev, 9, 0)) << "rank " << me;
    EXPECT_EQ(gotBack, message(next, 3, 50)) << "rank " << me;
    EXPECT_TRUE(c.finishSends());
  });
}

} // namespace tprt::testing

#endif // TPRT_UNITTESTS_COLLECTIVECHECKS_H
