//===- MpiCommunicator.cpp - one process per rank, OpenMPI ----------------===//
//
// Group communicators are split from MPI_COMM_WORLD for every axes mask the
// program uses, up front (MPI_Comm_split is collective). Collectives are
// non-blocking MPI calls polled against the deadline, so a missing rank
// turns into an error instead of a hang. f16 / bf16 are reduced in float.
//
// A rank that times out asks the rest of its group, on a control
// communicator, what they are doing; ranks waiting in a collective answer
// (their watchdog slot's description), so the message names the ranks that
// did not arrive and what each was last seen doing, or that it did not
// answer (computing outside the runtime's calls, frozen, or gone).
//
// send / recv use a communicator of their own: sends are copied and posted
// without waiting (two stages sending to each other cannot deadlock), recv
// probes until the message is there, so its size is checked and a missing
// sender times out like a missing rank in a collective.
//
//===----------------------------------------------------------------------===//
#include "tprt/Communicator.h"
#include "tprt/DType.h"
#include "tprt/Watchdog.h"

#include <algorithm>

#include <cstring>
#include <deque>
#include <map>
#include <mpi.h>
#include <thread>
#include <vector>

using namespace tprt;

namespace {

MPI_Datatype mpiType(int32_t dtype) {
  switch (dtype) {
  case TPRT_F32:
    return MPI_FLOAT;
  case TPRT_F64:
    return MPI_DOUBLE;
  case TPRT_I64:
    return MPI_INT64_T;
  case TPRT_I32:
    return MPI_INT32_T;
  default: // f16 / bf16 move as raw 16-bit words
    return MPI_UINT16_T;
  }
}

constexpr int kAskTag = 7001, kAnswerTag = 7002, kDataTag = 7003;

class MpiCommunicator : public Communicator {
public:
  MpiCommunicator(int rank, Mesh mesh) : Communicator(rank, std::move(mesh)) {}
  std::map<int64_t, MPI_Comm> groups;
  /// World ranks, for the status questions of a timed-out rank.
  MPI_Comm control = MPI_COMM_NULL;

  Status allReduce(const void *src, void *dst, int64_t count, int32_t dtype,
                   int32_t reduction, int64_t mask,
                   const std::string &what) override {
    MPI_Op op = reduction == TPRT_MAX ? MPI_MAX : MPI_SUM;
    if (dtype == TPRT_F16 || dtype == TPRT_BF16) {
      std::vector<float> in(count), out(count);
      auto *s = static_cast<const uint16_t *>(src);
      for (int64_t i = 0; i < count; ++i)
        in[i] = dtype == TPRT_F16 ? halfToFloat(s[i]) : bf16ToFloat(s[i]);
      MPI_Request req;
      MPI_Iallreduce(in.data(), out.data(), int(count), MPI_FLOAT, op,
                     comm(mask), &req);
      if (Status st = finish(req, mask, what); !st)
        return st;
      auto *d = static_cast<uint16_t *>(dst);
      for (int64_t i = 0; i < count; ++i)
        d[i] = dtype == TPRT_F16 ? floatToHalf(out[i]) : floatToBf16(out[i]);
      return Status::ok();
    }
    MPI_Request req;
    MPI_Iallreduce(src, dst, int(count), mpiType(dtype), op, comm(mask), &req);
    return finish(req, mask, what);
  }

  Status allGather(const void *src, void *dst, int64_t outer, int64_t chunk,
                   int32_t dtype, int64_t mask,
                   const std::string &what) override {
    int n = groupSize(mask);
    size_t block = chunk * dtypeSize(dtype), mine = outer * block;
    // MPI gathers [member][outer][chunk]; the program wants
    // [outer][member][chunk].
    std::vector<char> gathered(mine * n);
    MPI_Request req;
    MPI_Iallgather(src, int(mine), MPI_BYTE, gathered.data(), int(mine),
                   MPI_BYTE, comm(mask), &req);
    if (Status st = finish(req, mask, what); !st)
      return st;
    char *out = static_cast<char *>(dst);
    for (int64_t o = 0; o < outer; ++o)
      for (int m = 0; m < n; ++m) {
        std::memcpy(out, gathered.data() + m * mine + o * block, block);
        out += block;
      }
    return Status::ok();
  }

  Status reduceScatter(const void *src, void *dst, int64_t outer,
                       int64_t chunk, int32_t dtype, int64_t mask,
                       const std::string &what) override {
    int n = groupSize(mask);
    int64_t count = outer * chunk * n;
    size_t esize = dtypeSize(dtype), block = chunk * esize;
    // Reorder [outer][member][chunk] -> [member][outer][chunk], then each
    // member's block is contiguous; reduce it in float for 16-bit types.
    bool half = dtype == TPRT_F16 || dtype == TPRT_BF16;
    size_t workSize = half ? 4 : esize;
    std::vector<char> ordered(count * workSize), result(outer * chunk * workSize);
    auto *in = static_cast<const char *>(src);
    for (int m = 0; m < n; ++m)
      for (int64_t o = 0; o < outer; ++o) {
        const char *from = in + (o * n + m) * block;
        char *to = ordered.data() + (m * outer + o) * chunk * workSize;
        if (!half) {
          std::memcpy(to, from, block);
          continue;
        }
        auto *h = reinterpret_cast<const uint16_t *>(from);
        auto *f = reinterpret_cast<float *>(to);
        for (int64_t i = 0; i < chunk; ++i)
          f[i] = dtype == TPRT_F16 ? halfToFloat(h[i]) : bf16ToFloat(h[i]);
      }
    MPI_Request req;
    MPI_Ireduce_scatter_block(ordered.data(), result.data(), int(outer * chunk),
                              half ? MPI_FLOAT : mpiType(dtype), MPI_SUM,
                              comm(mask), &req);
    if (Status st = finish(req, mask, what); !st)
      return st;
    if (!half) {
      std::memcpy(dst, result.data(), outer * block);
      return Status::ok();
    }
    auto *f = reinterpret_cast<const float *>(result.data());
    auto *d = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < outer * chunk; ++i)
      d[i] = dtype == TPRT_F16 ? floatToHalf(f[i]) : floatToBf16(f[i]);
    return Status::ok();
  }

  /// Sends are buffered: the message is copied and posted, and completes
  /// while this rank goes on (progressed by its later MPI calls).
  Status send(const void *src, int64_t count, int32_t dtype, int peer,
              const std::string &what) override {
    if (Status s = checkPeer(peer, what); !s)
      return s;
    const char *bytes = static_cast<const char *>(src);
    pending.push_back({MPI_REQUEST_NULL,
                       std::vector<char>(bytes, bytes + count * dtypeSize(dtype)),
                       peer, what});
    PendingSend &p = pending.back();
    MPI_Isend(p.data.data(), int(p.data.size()), MPI_BYTE, peer, kDataTag,
              p2p, &p.request);
    retireSends();
    return Status::ok();
  }

  Status recv(void *dst, int64_t count, int32_t dtype, int peer,
              const std::string &what) override {
    if (Status s = checkPeer(peer, what); !s)
      return s;
    auto deadline = std::chrono::steady_clock::now() + timeout_;
    MPI_Status status;
    while (true) {
      int ready = 0;
      MPI_Iprobe(peer, kDataTag, p2p, &ready, &status);
      if (ready)
        break;
      retireSends();
      answerQuestions();
      if (std::chrono::steady_clock::now() > deadline) {
        auto window = askWindow();
        std::map<int, std::string> answers = ask({peer}, window);
        std::string who = "rank " + std::to_string(peer);
        return Status::error(
            "rank " + std::to_string(rank_) + ": " + what +
            " timed out after " + formatSeconds(timeout_) + ": " + who +
            " never sent; " + who +
            (answers.count(peer) ? " is at: " + answers[peer]
                                 : silent(window)));
      }
      std::this_thread::yield();
    }
    int length = 0;
    MPI_Get_count(&status, MPI_BYTE, &length);
    size_t want = count * dtypeSize(dtype);
    if (size_t(length) != want) {
      std::vector<char> drop(size_t(std::max(length, 0)));
      MPI_Recv(drop.data(), length, MPI_BYTE, peer, kDataTag, p2p,
               MPI_STATUS_IGNORE);
      return sizeMismatch(peer, want, size_t(length), what);
    }
    MPI_Recv(dst, length, MPI_BYTE, peer, kDataTag, p2p, MPI_STATUS_IGNORE);
    return Status::ok();
  }

  Status finishSends() override {
    auto deadline = std::chrono::steady_clock::now() + timeout_;
    while (retireSends()) {
      answerQuestions();
      if (std::chrono::steady_clock::now() > deadline) {
        const PendingSend &p = pending.front();
        return Status::error("rank " + std::to_string(rank_) + ": " + p.what +
                             " was not received within " +
                             formatSeconds(timeout_) + ": rank " +
                             std::to_string(p.peer) + " never took it");
      }
      std::this_thread::yield();
    }
    return Status::ok();
  }

  /// World ranks, for send / recv.
  MPI_Comm p2p = MPI_COMM_NULL;

private:
  struct PendingSend {
    MPI_Request request;
    std::vector<char> data;
    int peer;
    std::string what;
  };
  std::deque<PendingSend> pending;

  /// Frees the buffers of delivered sends; the number still in flight.
  size_t retireSends() {
    for (auto it = pending.begin(); it != pending.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      it = done ? pending.erase(it) : std::next(it);
    }
    return pending.size();
  }

  MPI_Comm comm(int64_t mask) {
    auto it = groups.find(mask);
    return it == groups.end() ? MPI_COMM_NULL : it->second;
  }
  int groupSize(int64_t mask) {
    int n = 1;
    MPI_Comm_size(comm(mask), &n);
    return n;
  }
  /// Answers the questions of timed-out ranks: what this rank is doing.
  void answerQuestions() {
    int asked = 0;
    MPI_Status status;
    while (MPI_Iprobe(MPI_ANY_SOURCE, kAskTag, control, &asked, &status) ==
               MPI_SUCCESS &&
           asked) {
      MPI_Recv(nullptr, 0, MPI_BYTE, status.MPI_SOURCE, kAskTag, control,
               MPI_STATUS_IGNORE);
      std::string doing = describeRank(rank_);
      // A few hundred bytes go eagerly: this send does not wait.
      MPI_Send(doing.data(), int(doing.size()), MPI_CHAR, status.MPI_SOURCE,
               kAnswerTag, control);
    }
  }

  /// After a timeout: asks `ranks` what they are doing, for a short while;
  /// the answers of those that answered.
  std::map<int, std::string> ask(const std::vector<int> &ranks,
                                 std::chrono::milliseconds window) {
    std::map<int, std::string> answers;
    std::vector<MPI_Request> asks;
    for (int r : ranks) {
      asks.emplace_back();
      MPI_Isend(nullptr, 0, MPI_BYTE, r, kAskTag, control, &asks.back());
    }
    auto until = std::chrono::steady_clock::now() + window;
    while (answers.size() < ranks.size() &&
           std::chrono::steady_clock::now() < until) {
      answerQuestions();
      int ready = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kAnswerTag, control, &ready, &status);
      if (!ready) {
        std::this_thread::yield();
        continue;
      }
      int length = 0;
      MPI_Get_count(&status, MPI_CHAR, &length);
      std::string text(size_t(std::max(length, 0)), '\0');
      MPI_Recv(text.data(), length, MPI_CHAR, status.MPI_SOURCE, kAnswerTag,
               control, MPI_STATUS_IGNORE);
      answers[status.MPI_SOURCE] = text;
    }
    return answers;
  }

  std::chrono::milliseconds askWindow() const {
    return std::min<std::chrono::milliseconds>(timeout_ / 2,
                                               std::chrono::milliseconds(1000));
  }

  /// What a rank that did not answer may be doing.
  static std::string silent(std::chrono::milliseconds window) {
    return " did not answer within " + formatSeconds(window) +
           " (computing outside the runtime's calls, frozen, or gone)";
  }

  /// After a timeout in a collective: the other members of the group that
  /// are not where this rank is, and what each is doing.
  std::string missingRanks(int64_t mask) {
    std::vector<int> others;
    for (int r : mesh_.group(rank_, mask))
      if (r != rank_)
        others.push_back(r);
    auto window = askWindow();
    std::map<int, std::string> answers = ask(others, window);
    std::string mine = describeRank(rank_), names, seen;
    for (int r : others) {
      auto it = answers.find(r);
      if (it != answers.end() && it->second == mine)
        continue; // waiting in this same collective: it arrived
      names += (names.empty() ? "" : ", ") + std::to_string(r);
      seen += "; rank " + std::to_string(r) +
              (it != answers.end() ? " is at: " + it->second : silent(window));
    }
    return names.empty() ? "every rank arrived but the collective did not "
                           "complete (the network?)"
                         : "rank(s) " + names + " never arrived" + seen;
  }

  Status finish(MPI_Request &req, int64_t mask, const std::string &what) {
    auto deadline = std::chrono::steady_clock::now() + timeout_;
    int done = 0;
    while (true) {
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done)
        return Status::ok();
      answerQuestions();
      if (std::chrono::steady_clock::now() > deadline)
        return Status::error("rank " + std::to_string(rank_) + ": " + what +
                             " timed out after " + formatSeconds(timeout_) +
                             ": " + missingRanks(mask));
      std::this_thread::yield();
    }
  }
};

} // namespace

std::unique_ptr<Communicator>
tprt::createMpiCommunicator(const Mesh &mesh,
                            const std::vector<int64_t> &masks,
                            std::string &error) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != mesh.numRanks()) {
    error = "the program's mesh " + mesh.describe() + " has " +
            std::to_string(mesh.numRanks()) + " devices but mpirun started " +
            std::to_string(size) + " processes";
    return nullptr;
  }
  auto comm = std::make_unique<MpiCommunicator>(rank, mesh);
  MPI_Comm_dup(MPI_COMM_WORLD, &comm->control);
  MPI_Comm_dup(MPI_COMM_WORLD, &comm->p2p);
  for (int64_t mask : masks) {
    // Ranks with equal coordinates outside the mask form one group.
    std::vector<int> members = mesh.group(rank, mask);
    MPI_Comm group;
    MPI_Comm_split(MPI_COMM_WORLD, members.front(),
                   int(mesh.indexAlong(rank, mask)), &group);
    comm->groups[mask] = group;
  }
  return comm;
}
