//===- CommunicatorTest.cpp - collectives of the threads communicator -----===//
//
// Every collective on meshes of 1, 3 (odd group) and 2x2 ranks (sub-groups
// along each axis and both), counts that do not divide by the group size,
// f32 / f16 / bf16 / i64, and the timeout path: one rank never arrives and
// the others fail with a message that names the rank and the collective.
// send / recv: order, sizes, a recv whose sender never sends.
//
//===----------------------------------------------------------------------===//
#include "CollectiveChecks.h"

#include <gtest/gtest.h>
#include <cmath>
#include <thread>

using namespace tprt;
using namespace tprt::testing;

namespace {

/// Runs `body(comm)` on every rank of `m`, each on its own thread.
void onThreads(const Mesh &m, const std::function<void(Communicator &)> &body) {
  auto world = createThreadsWorld(m);
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < m.numRanks(); ++r)
    comms.push_back(createThreadsCommunicator(world, r));
  std::vector<std::thread> threads;
  for (auto &c : comms)
    threads.emplace_back([&body, &c] { body(*c); });
  for (auto &t : threads)
    t.join();
}

} // namespace

TEST(Mesh, GroupsAndIndices) {
  Mesh m = mesh({2, 3});
  EXPECT_EQ(m.numRanks(), 6);
  EXPECT_EQ(m.group(4, 0b01), (std::vector<int>{1, 4}));    // along axis 0
  EXPECT_EQ(m.group(4, 0b10), (std::vector<int>{3, 4, 5})); // along axis 1
  EXPECT_EQ(m.group(4, 0b11).size(), 6u);
  EXPECT_EQ(m.indexAlong(4, 0b01), 1);
  EXPECT_EQ(m.indexAlong(4, 0b10), 1);
  EXPECT_EQ(m.indexAlong(4, 0b11), 4);
}

// Meshes of 1, 3 (an odd group) and 2x2 ranks (sub-groups along each axis
// and both); counts that no group size divides; f32, f16, bf16, i64.
TEST(ThreadsCommunicator, EveryCollectiveDtypeAndGroup) {
  for (auto sizes : std::vector<std::vector<int64_t>>{{1}, {3}, {2, 2}})
    checkEveryCollective(onThreads, mesh(sizes));
}

// Unequal blocks (an uneven split's), a member holding none among them.
TEST(ThreadsCommunicator, UnevenBlocks) {
  for (auto sizes : std::vector<std::vector<int64_t>>{{1}, {3}, {2, 2}, {4}})
    checkUnevenCollectives(onThreads, mesh(sizes));
}

TEST(ThreadsCommunicator, MissingRankTimesOut) {
  Mesh m = mesh({3});
  auto world = createThreadsWorld(m);
  std::vector<std::unique_ptr<Communicator>> comms;
  for (int r = 0; r < 3; ++r) {
    comms.push_back(createThreadsCommunicator(world, r));
    comms.back()->setTimeout(std::chrono::milliseconds(200));
  }
  // Ranks 0 and 1 reduce; rank 2 never arrives.
  std::vector<Status> results(2);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      float x = 1, y = 0;
      results[r] = comms[r]->allReduce(&x, &y, 1, TPRT_F32, TPRT_SUM, 1,
                                       "all_reduce at /fc2/Gemm (site 0)");
    });
  for (auto &t : threads)
    t.join();
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  EXPECT_LT(seconds, 5.0); // fails within the timeout, no hang
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(results[r].failed());
    EXPECT_EQ(results[r].message(),
              "rank " + std::to_string(r) +
                  ": all_reduce at /fc2/Gemm (site 0) timed out after 0.2 s "
                  "waiting for the group: rank(s) 2 never arrived");
  }
}

TEST(ThreadsCommunicator, SendRecvInOrder) {
  for (auto sizes : std::vector<std::vector<int64_t>>{{1}, {2}, {3}, {2, 2}})
    checkSendRecv(onThreads, mesh(sizes));
}

// A stage waits for an activation its peer never sends: the error names
// both ranks and what was awaited; a message of the wrong size is refused.
TEST(ThreadsCommunicator, RecvTimesOutAndChecksTheSize) {
  Mesh m = mesh({2});
  auto world = createThreadsWorld(m);
  auto c0 = createThreadsCommunicator(world, 0);
  auto c1 = createThreadsCommunicator(world, 1);
  c1->setTimeout(std::chrono::milliseconds(200));
  float x[4] = {1, 2, 3, 4};
  auto start = std::chrono::steady_clock::now();
  Status s = c1->recv(x, 4, TPRT_F32, 0,
                      "recv of stage 0's /layers.1/Add_output_0 for "
                      "microbatch 3 (site 2)");
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  EXPECT_LT(seconds, 5.0);
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(s.message(), "rank 1: recv of stage 0's /layers.1/Add_output_0 "
                         "for microbatch 3 (site 2) timed out after 0.2 s: "
                         "rank 0 never sent");
  ASSERT_TRUE(c0->send(x, 3, TPRT_F32, 1, "send (site 1)"));
  s = c1->recv(x, 4, TPRT_F32, 0, "recv (site 2)");
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(s.message(),
            "rank 1: recv (site 2): expected 16 bytes from rank 0, which sent 12");
  s = c0->send(x, 1, TPRT_F32, 2, "send (site 1)");
  ASSERT_TRUE(s.failed());
  EXPECT_EQ(s.message(), "rank 0: send (site 1): no rank 2 in mesh " +
                             m.describe());
}

TEST(DType, HalfAndBf16RoundTrip) {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 0.000061035156f, 3.140625f}) {
    EXPECT_EQ(halfToFloat(floatToHalf(v)), v);
  }
  for (float v : {0.0f, 1.0f, -2.5f, 3.140625f, 1.0e30f})
    EXPECT_NEAR(bf16ToFloat(floatToBf16(v)), v, std::fabs(v) / 128);
}
