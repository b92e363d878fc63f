//===- ThreadsCommunicator.cpp - ranks as threads, shared memory ----------===//
//
// A collective is a rendezvous of its group: every member publishes its
// source pointer, waits until all have, computes its own result by reading
// the others' sources directly, and waits again so that no source buffer is
// reused before every member has read it. send / recv go through a
// mailbox per ordered pair of ranks: send copies the message in and returns,
// recv waits for the oldest one.
//
//===----------------------------------------------------------------------===//
#include "tprt/Communicator.h"
#include "tprt/Watchdog.h"
#include "tprt/DType.h"

#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

using namespace tprt;

namespace tprt {

struct GroupState {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<int> members;
  std::vector<const void *> sources;
  std::vector<bool> arrived;
  int count = 0;
  uint64_t generation = 0;
};

/// The messages from one rank to another, oldest first.
struct Mailbox {
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::vector<char>> messages;
};

class ThreadsWorld {
public:
  explicit ThreadsWorld(Mesh mesh) : mesh(std::move(mesh)) {}
  Mesh mesh;

  Mailbox &mailbox(int from, int to) {
    std::lock_guard<std::mutex> lock(mutex);
    auto &box = mailboxes[{from, to}];
    if (!box)
      box = std::make_unique<Mailbox>();
    return *box;
  }

  GroupState &group(int rank, int64_t mask) {
    std::vector<int> members = mesh.group(rank, mask);
    std::lock_guard<std::mutex> lock(mutex);
    auto &g = groups[{mask, members.front()}];
    if (!g) {
      g = std::make_unique<GroupState>();
      g->members = members;
      g->sources.resize(members.size());
      g->arrived.resize(members.size());
    }
    return *g;
  }

private:
  std::mutex mutex;
  std::map<std::pair<int64_t, int>, std::unique_ptr<GroupState>> groups;
  std::map<std::pair<int, int>, std::unique_ptr<Mailbox>> mailboxes;
};

} // namespace tprt

namespace {

class ThreadsCommunicator : public Communicator {
public:
  ThreadsCommunicator(std::shared_ptr<ThreadsWorld> world, int rank)
      : Communicator(rank, world->mesh), world(std::move(world)) {}

  Status allReduce(const void *src, void *dst, int64_t count, int32_t dtype,
                   int32_t reduction, int64_t mask,
                   const std::string &what) override {
    size_t bytes = count * dtypeSize(dtype);
    return rendezvous(src, mask, what, [&](const std::vector<const void *> &all) {
      std::memcpy(dst, all[0], bytes);
      for (size_t i = 1; i < all.size(); ++i)
        reduceInto(dst, all[i], count, dtype, reduction);
    });
  }

  Status allGather(const void *src, void *dst, int64_t outer, int64_t chunk,
                   int32_t dtype, int64_t mask,
                   const std::string &what) override {
    size_t block = chunk * dtypeSize(dtype);
    return rendezvous(src, mask, what, [&](const std::vector<const void *> &all) {
      char *out = static_cast<char *>(dst);
      for (int64_t o = 0; o < outer; ++o)
        for (const void *s : all) {
          std::memcpy(out, static_cast<const char *>(s) + o * block, block);
          out += block;
        }
    });
  }

  Status reduceScatter(const void *src, void *dst, int64_t outer,
                       int64_t chunk, int32_t dtype, int64_t mask,
                       const std::string &what) override {
    size_t block = chunk * dtypeSize(dtype);
    int64_t me = mesh_.indexAlong(rank_, mask);
    return rendezvous(src, mask, what, [&](const std::vector<const void *> &all) {
      int64_t n = all.size();
      for (int64_t o = 0; o < outer; ++o) {
        char *out = static_cast<char *>(dst) + o * block;
        size_t at = (o * n + me) * block;
        std::memcpy(out, static_cast<const char *>(all[0]) + at, block);
        for (int64_t i = 1; i < n; ++i)
          reduceInto(out, static_cast<const char *>(all[i]) + at, chunk,
                     dtype, TPRT_SUM);
      }
    });
  }

  Status send(const void *src, int64_t count, int32_t dtype, int peer,
              const std::string &what) override {
    if (Status s = checkPeer(peer, what); !s)
      return s;
    const char *bytes = static_cast<const char *>(src);
    Mailbox &box = world->mailbox(rank_, peer);
    std::lock_guard<std::mutex> lock(box.mutex);
    box.messages.emplace_back(bytes, bytes + count * dtypeSize(dtype));
    box.cv.notify_all();
    return Status::ok();
  }

  Status recv(void *dst, int64_t count, int32_t dtype, int peer,
              const std::string &what) override {
    if (Status s = checkPeer(peer, what); !s)
      return s;
    Mailbox &box = world->mailbox(peer, rank_);
    std::unique_lock<std::mutex> lock(box.mutex);
    auto deadline = std::chrono::steady_clock::now() + timeout_;
    if (!box.cv.wait_until(lock, deadline,
                           [&] { return !box.messages.empty(); })) {
      std::string doing = describeRank(peer);
      return Status::error(
          "rank " + std::to_string(rank_) + ": " + what + " timed out after " +
          formatSeconds(timeout_) + ": rank " + std::to_string(peer) +
          " never sent" +
          (doing.empty() ? "" : "; rank " + std::to_string(peer) +
                                    " was last seen: " + doing));
    }
    std::vector<char> message = std::move(box.messages.front());
    box.messages.pop_front();
    size_t want = count * dtypeSize(dtype);
    if (message.size() != want)
      return sizeMismatch(peer, want, message.size(), what);
    std::memcpy(dst, message.data(), want);
    return Status::ok();
  }

private:
  std::shared_ptr<ThreadsWorld> world;

  /// Waits until every member of the group has arrived (phase 1: sources
  /// published; phase 2: sources read), or fails at the deadline.
  Status wait(GroupState &g, std::unique_lock<std::mutex> &lock, int me,
              const std::string &what, const char *phase) {
    uint64_t gen = g.generation;
    g.arrived[me] = true;
    if (++g.count == int(g.members.size())) {
      g.count = 0;
      std::fill(g.arrived.begin(), g.arrived.end(), false);
      ++g.generation;
      g.cv.notify_all();
      return Status::ok();
    }
    auto deadline = std::chrono::steady_clock::now() + timeout_;
    if (g.cv.wait_until(lock, deadline, [&] { return g.generation != gen; }))
      return Status::ok();
    std::string missing, seen;
    for (size_t i = 0; i < g.members.size(); ++i)
      if (!g.arrived[i]) {
        int r = int(g.members[i]);
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        if (std::string doing = describeRank(r); !doing.empty())
          seen += "; rank " + std::to_string(r) + " was last seen: " + doing;
      }
    return Status::error(
        "rank " + std::to_string(rank_) + ": " + what + " timed out after " +
        formatSeconds(timeout_) + " " + phase + ": rank(s) " + missing +
        " never arrived" + seen);
  }

  template <typename Fn>
  Status rendezvous(const void *src, int64_t mask, const std::string &what,
                    Fn compute) {
    GroupState &g = world->group(rank_, mask);
    int me = int(mesh_.indexAlong(rank_, mask));
    std::unique_lock<std::mutex> lock(g.mutex);
    g.sources[me] = src;
    if (Status s = wait(g, lock, me, what, "waiting for the group"); !s)
      return s;
    std::vector<const void *> all = g.sources;
    lock.unlock();
    compute(all);
    lock.lock();
    return wait(g, lock, me, what, "waiting for the group to finish reading");
  }
};

} // namespace

std::shared_ptr<ThreadsWorld> tprt::createThreadsWorld(const Mesh &mesh) {
  return std::make_shared<ThreadsWorld>(mesh);
}

std::unique_ptr<Communicator>
tprt::createThreadsCommunicator(std::shared_ptr<ThreadsWorld> world,
                                int rank) {
  return std::make_unique<ThreadsCommunicator>(std::move(world), rank);
}
