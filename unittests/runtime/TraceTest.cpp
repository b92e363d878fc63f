//===- TraceTest.cpp - recording timelines and writing them ---------------===//
#include "tprt/Manifest.h"
#include "tprt/Program.h"
#include "tprt/Trace.h"
#include "tprt/tprt.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

using namespace tprt;

namespace {

Manifest twoRanks() {
  Manifest m;
  m.dir = "program";
  m.mesh.names = {"tp"};
  m.mesh.sizes = {2};
  m.collectiveSites = {"all_reduce at /fc2/Gemm"};
  m.kernelSites = {"/act/Relu"};
  return m;
}

const llvm::json::Object *eventNamed(const llvm::json::Array &events,
                                     llvm::StringRef name, int64_t pid) {
  for (const llvm::json::Value &v : events) {
    const llvm::json::Object *e = v.getAsObject();
    if (e->getString("name") == name && e->getInteger("pid") == pid)
      return e;
  }
  return nullptr;
}

TEST(Trace, CollectiveWaitIsUntilTheLastMemberArrives) {
  // Rank 0 enters the all_reduce at 1000 ns, rank 1 at 4000 ns; both leave
  // at 5000 ns: rank 0 waited 3 us for rank 1, and both moved data 1 us.
  TraceRecorder r0(8), r1(8);
  int64_t tp = 1;
  r0.add({TraceEvent::Collective, 0, 1000, 4000, 256, tp});
  r1.add({TraceEvent::Collective, 0, 4000, 1000, 256, tp});
  r0.add({TraceEvent::Kernel, 0, 500, 300});
  std::string text = chromeTrace(twoRanks(), {&r0, &r1}, {0, 1});
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Array &events =
      *parsed->getAsObject()->getArray("traceEvents");
  const llvm::json::Object *first = eventNamed(events, "all_reduce at /fc2/Gemm", 0);
  const llvm::json::Object *second = eventNamed(events, "all_reduce at /fc2/Gemm", 1);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(*first->getObject("args")->getNumber("waiting_for_peers_us"), 3.0);
  EXPECT_EQ(*first->getObject("args")->getNumber("moving_data_us"), 1.0);
  EXPECT_EQ(*second->getObject("args")->getNumber("waiting_for_peers_us"), 0.0);
  // Times start at the first event (500 ns), in microseconds.
  EXPECT_EQ(*first->getNumber("ts"), 0.5);
  EXPECT_EQ(*first->getNumber("dur"), 4.0);
  const llvm::json::Object *kernel = eventNamed(events, "/act/Relu", 0);
  ASSERT_TRUE(kernel);
  EXPECT_EQ(*kernel->getNumber("ts"), 0.0);
  EXPECT_EQ(*kernel->getString("cat"), "kernel");
}

TEST(Trace, FullRecorderCountsWhatItDrops) {
  TraceRecorder r(2);
  for (int i = 0; i < 5; ++i)
    r.add({TraceEvent::Step, i + 1, i * 10, 5});
  EXPECT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.dropped, 3);
  std::string text = chromeTrace(twoRanks(), {&r}, {0});
  EXPECT_NE(text.find("\"dropped_events\":3"), std::string::npos) << text;
}

TEST(Trace, HooksRecordNothingWithoutARecorder) {
  // No rank context: the kernel hooks return at once.
  tprt_kernel_begin(0);
  tprt_kernel_end(0);
  TraceRecorder r(8);
  RankContext ctx;
  ctx.trace = &r;
  setRankContext(&ctx);
  tprt_kernel_begin(3);
  tprt_kernel_end(3);
  traceStep(1, traceClockNs());
  setRankContext(nullptr);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].kind, TraceEvent::Kernel);
  EXPECT_EQ(r.events[0].id, 3);
  EXPECT_GE(r.events[0].durationNs, 0);
  EXPECT_EQ(r.events[1].kind, TraceEvent::Step);
}

} // namespace
