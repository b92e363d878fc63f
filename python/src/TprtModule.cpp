//===- TprtModule.cpp - the runtime as the Python module tp._tprt ---------===//
//
// A Session is a compiled program loaded into this process with its ranks:
// every rank on the threads backend, or this process's one rank under
// mpirun. Python hands it whole (global) arrays; the session scatters each
// rank's block straight out of the array's buffer (no conversion copy),
// runs one step on every local rank with the GIL released (one call at a
// time: concurrent callers wait), feeds a training
// step's updated weights back as tp-run --steps does, and gathers whole
// results straight into new numpy arrays. Failures are tp._tprt.Error with
// the runtime's messages.
//
//===----------------------------------------------------------------------===//
#include "tprt/Blocks.h"
#include "tprt/DType.h"
#include "tprt/Program.h"
#include "tprt/Trace.h"
#include "tprt/WeightLoader.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mpi.h>
#include <mutex>
#include <thread>
#include <utility>

namespace py = pybind11;
using namespace tprt;

namespace {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(const Status &s) {
  if (!s)
    throw Error(s.message());
}

/// A library this module was linked with, loaded again with RTLD_GLOBAL:
/// Python loads extensions with RTLD_LOCAL, but program.so resolves tprt_*
/// against the process's global symbols (as in tp-run), and OpenMPI's
/// components resolve MPI_* the same way.
void promoteToGlobal(const void *symbolInLibrary) {
  Dl_info info;
  if (dladdr(symbolInLibrary, &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

/// Numpy's dtype of a runtime dtype code.
py::dtype numpyDtype(int32_t dtype) {
  switch (dtype) {
  case TPRT_F32: return py::dtype("float32");
  case TPRT_F64: return py::dtype("float64");
  case TPRT_F16: return py::dtype("float16");
  case TPRT_I64: return py::dtype("int64");
  case TPRT_I32: return py::dtype("int32");
  case TPRT_I16: return py::dtype("int16");
  case TPRT_I8: return py::dtype("int8");
  case TPRT_BOOL: return py::dtype("bool");
  // numpy has no bfloat16: a bf16 tensor is its bit patterns as uint16
  // (tp-run's .npy convention); tp.module converts torch.bfloat16.
  case TPRT_BF16: return py::dtype("uint16");
  default:
    throw Error(std::string("the program has a ") + dtypeName(dtype) +
                " tensor, which numpy has no dtype for");
  }
}

/// The runtime's dtype code of a numpy dtype, -1 for dtypes tp does not
/// take (complex, unsigned, strings, objects, ...).
int32_t runtimeDtype(const py::dtype &dt) {
  for (int32_t code : {TPRT_F32, TPRT_F64, TPRT_F16, TPRT_I64, TPRT_I32,
                       TPRT_I16, TPRT_I8, TPRT_BOOL})
    if (dt.is(numpyDtype(code)) || dt.equal(numpyDtype(code)))
      return code;
  return -1;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}

/// One rank's buffers, in the manifest's order.
struct RankBuffers {
  std::vector<std::vector<char>> args, results;
  std::vector<SiteStats> stats;
  /// With trace=: the rank's timeline.
  std::unique_ptr<TraceRecorder> trace;
};

class Session {
public:
  Session(const std::string &dir, const std::string &backend, double timeout,
          const std::string &modelPath) {
    mpi = backend == "mpi";
    if (!mpi && backend != "threads")
      throw Error("unknown backend '" + backend + "' (threads or mpi)");
    check(Manifest::load(dir, m));
    if (m.target != "cpu")
      throw Error(dir + ": the program was compiled for target '" + m.target +
                  "'; the Python package runs 'cpu' programs (tp-run "
                  "--backend nccl runs CUDA programs)");
    if (m.stageAxis >= 0)
      throw Error(dir + ": a pipeline program (stages over mesh axis '" +
                  m.mesh.names[m.stageAxis] +
                  "'); the Python package does not run pipelines yet, "
                  "tp-run does");
    check(Program::load(m, program));
    if (!modelPath.empty())
      m.modelPath = modelPath;
    std::string sha;
    check(sha256File(m.modelPath, sha));
    if (sha != m.modelSha256)
      throw Error(m.modelPath + " is not the model the program was compiled "
                                "from (its SHA-256 differs from the "
                                "manifest's); recompile it");
    check(WeightSource::open(m.modelPath, weights, m.untieMerged));
    numRanks = m.mesh.numRanks();
    auto ms = std::chrono::milliseconds(int64_t(timeout * 1000));
    if (mpi) {
      int size;
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
      if (size != numRanks)
        throw Error("the program's mesh " + m.mesh.describe() + " has " +
                    std::to_string(numRanks) + " devices, but mpirun started " +
                    std::to_string(size) + " processes");
      std::string error;
      // The whole world too: a trace's events go to rank 0 over it.
      std::vector<int64_t> masks = m.axisMasks;
      masks.push_back((int64_t(1) << m.mesh.names.size()) - 1);
      comms.push_back(createMpiCommunicator(m.mesh, masks, error));
      if (!comms.back())
        throw Error(error);
      localRanks = {worldRank};
    } else {
      auto world = createThreadsWorld(m.mesh);
      for (int r = 0; r < numRanks; ++r) {
        comms.push_back(createThreadsCommunicator(world, r));
        localRanks.push_back(r);
      }
    }
    for (auto &c : comms)
      c->setTimeout(ms);
    ranks.resize(localRanks.size());
    for (size_t i = 0; i < localRanks.size(); ++i) {
      RankBuffers &b = ranks[i];
      for (const TensorSpec &t : m.arguments) {
        // Inputs and optimizer state start at zero.
        b.args.emplace_back(t.localElements() * dtypeSize(t.dtype));
        if (t.kind == "param")
          check(weights->loadBlock(t, m.mesh, localRanks[i],
                                   b.args.back().data()));
      }
      b.results = makeResultBuffers(m, b.args);
      b.stats.resize(m.collectiveSites.size());
    }
    // The ranks hold their blocks: one copy of the weights, as in PyTorch.
    weights->release();
    for (size_t r = 0; r < m.results.size(); ++r)
      for (size_t a = 0; a < m.arguments.size(); ++a)
        if ((m.arguments[a].kind == "param" ||
             m.arguments[a].kind == "state") &&
            m.arguments[a].name == m.results[r].name) {
          if (m.inPlaceArgument(r) >= 0)
            sharedResult[a] = int(r);
          else
            feedback.emplace_back(r, a);
        }
  }

  py::list describe(bool arguments) const {
    py::list out;
    for (const TensorSpec &t : arguments ? m.arguments : m.results) {
      py::dict d;
      d["name"] = t.name;
      d["kind"] = t.kind;
      d["dtype"] = dtypeName(t.dtype);
      d["shape"] = t.shape;
      d["onnx_shape"] = t.onnxShape.empty() ? t.shape : t.onnxShape;
      std::vector<std::string> torchNames = t.torchNames;
      if (torchNames.empty())
        torchNames.push_back(t.torchName.empty() ? t.name : t.torchName);
      d["torch_names"] = torchNames;
      d["torch_transposed"] = t.torchTransposed;
      out.append(d);
    }
    return out;
  }

  /// Scatters a whole array into argument `name` on every local rank.
  void set(const std::string &name, const py::array &array) {
    int index = find(m.arguments, name);
    if (index < 0)
      throw Error("the program takes no argument '" + name + "'");
    const TensorSpec &t = m.arguments[index];
    std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
    const std::vector<int64_t> &want =
        t.onnxShape.empty() ? t.shape : t.onnxShape;
    int32_t dtype = runtimeDtype(array.dtype());
    if (array.dtype().equal(py::dtype("uint16")))
      dtype = TPRT_BF16; // bf16 bit patterns (tp takes no other uint16)
    std::string what = t.kind == "input" ? "input" : "weight";
    if (dtype < 0)
      throw Error(what + " '" + name + "': numpy dtype " +
                  std::string(py::str(array.dtype())) +
                  " is not a dtype tp takes (f32, f64, f16, i64, i32, i16, "
                  "i8, bool; uint16 as bf16 bits); the program expects " +
                  shapeText(want) + " " +
                  dtypeName(t.dtype));
    if (shape != want || dtype != t.dtype)
      throw Error(what + " '" + name + "': expected " + shapeText(want) + " " +
                  dtypeName(t.dtype) + ", the array has " + shapeText(shape) +
                  " " + dtypeName(dtype));
    // Row-major and aligned: read in place; otherwise one contiguous copy.
    py::array contiguous =
        py::array::ensure(array, py::array::c_style | py::array::forcecast);
    std::lock_guard<std::recursive_mutex> lock(mutex);
    for (size_t i = 0; i < localRanks.size(); ++i)
      extractBlock(t, m.mesh, localRanks[i], contiguous.data(),
                   argument(i, index).data(), dtypeSize(t.dtype));
  }

  /// One step on every local rank; returns the seconds the program ran
  /// (the slowest local rank).
  double run() {
    std::vector<double> seconds(localRanks.size());
    {
      // The lock is taken without the GIL and given back before it is
      // taken again: a thread waiting in set() or get() holds the GIL.
      py::gil_scoped_release release;
      std::lock_guard<std::recursive_mutex> lock(mutex);
      auto runOne = [&](size_t i) {
        RankContext ctx{comms[i].get(), &m.collectiveSites, &ranks[i].stats,
                        nullptr, ranks[i].trace.get()};
        setRankContext(&ctx);
        std::vector<void *> args, results;
        for (size_t a = 0; a < ranks[i].args.size(); ++a)
          args.push_back(argument(i, a).data());
        for (auto &r : ranks[i].results)
          results.push_back(r.data());
        int64_t stepStart = ranks[i].trace ? traceClockNs() : 0;
        seconds[i] = program->run(args, results);
        traceStep(steps + 1, stepStart);
        setRankContext(nullptr);
        // The next step reads the updated weights and optimizer state.
        for (auto [r, a] : feedback)
          std::memcpy(ranks[i].args[a].data(), ranks[i].results[r].data(),
                      ranks[i].args[a].size());
      };
      if (localRanks.size() == 1) {
        runOne(0);
      } else {
        // The ranks share this machine's cores: so do their GEMMs and loop nests.
        int cores = std::max(1u, std::thread::hardware_concurrency());
        setRankThreads(std::max(1, cores / int(localRanks.size())));
        std::vector<std::thread> threads;
        for (size_t i = 0; i < localRanks.size(); ++i)
          threads.emplace_back(runOne, i);
        for (auto &t : threads)
          t.join();
      }
    }
    ++steps;
    return *std::max_element(seconds.begin(), seconds.end());
  }

  /// The whole tensor of a result (or of an argument: a weight's current
  /// value), assembled from every rank's block; in the ONNX dims of a
  /// weight read as a view. Under MPI every process gets it.
  py::array get(const std::string &name, bool argument) const {
    const std::vector<TensorSpec> &specs = argument ? m.arguments : m.results;
    int index = find(specs, name);
    if (index < 0)
      throw Error(std::string("the program has no ") +
                  (argument ? "argument" : "result") + " '" + name + "'");
    const TensorSpec &t = specs[index];
    py::array out(numpyDtype(t.dtype),
                  t.onnxShape.empty() ? t.shape : t.onnxShape);
    auto local = [&](size_t i) -> const std::vector<char> & {
      return argument ? this->argument(i, index) : ranks[i].results[index];
    };
    size_t es = dtypeSize(t.dtype);
    std::lock_guard<std::recursive_mutex> lock(mutex);
    if (mpi) {
      size_t bytes = local(0).size();
      std::vector<char> all(bytes * numRanks);
      MPI_Allgather(local(0).data(), int(bytes), MPI_BYTE, all.data(),
                    int(bytes), MPI_BYTE, MPI_COMM_WORLD);
      for (int r = 0; r < numRanks; ++r)
        insertBlock(t, m.mesh, r, all.data() + r * bytes, out.mutable_data(),
                    es);
    } else {
      for (size_t i = 0; i < localRanks.size(); ++i)
        insertBlock(t, m.mesh, localRanks[i], local(i).data(),
                    out.mutable_data(), es);
    }
    return out;
  }

  /// Writes the model with the current weights (tp-run --save).
  void save(const std::string &path) const {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    std::vector<std::pair<std::string, std::vector<char>>> trained;
    for (const TensorSpec &t : m.arguments) {
      if (t.kind != "param")
        continue;
      py::array a = get(t.name, /*argument=*/true);
      const char *p = static_cast<const char *>(a.data());
      trained.emplace_back(t.name, std::vector<char>(p, p + a.nbytes()));
    }
    // The exporter's transposed copies of tied weights follow the weight.
    for (const auto &[copy, weight] : m.tiedCopies) {
      auto it = std::find_if(trained.begin(), trained.end(),
                             [&](const auto &w) { return w.first == weight; });
      const TensorSpec &t = m.arguments[find(m.arguments, weight)];
      if (it == trained.end() || t.shape.size() != 2)
        continue;
      size_t rows = t.shape[0], cols = t.shape[1], es = dtypeSize(t.dtype);
      std::vector<char> transposed(it->second.size());
      for (size_t i = 0; i < rows; ++i)
        for (size_t j = 0; j < cols; ++j)
          std::memcpy(&transposed[(j * rows + i) * es],
                      &it->second[(i * cols + j) * es], es);
      trained.emplace_back(copy, std::move(transposed));
    }
    if (mpi && worldRank != 0)
      return;
    check(weights->saveWithWeights(path, trained));
  }

  /// Calls and bytes per collective site on the first local rank.
  py::list collectives() const {
    py::list out;
    for (size_t i = 0; i < m.collectiveSites.size(); ++i) {
      py::dict d;
      d["site"] = m.collectiveSites[i];
      d["calls"] = ranks[0].stats[i].calls;
      d["bytes"] = ranks[0].stats[i].bytes;
      d["seconds"] = ranks[0].stats[i].seconds;
      out.append(d);
    }
    return out;
  }

  /// From the next run on, every local rank records its timeline (at most
  /// `events` events each).
  void startTrace(size_t events) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    for (RankBuffers &b : ranks)
      if (!b.trace)
        b.trace = std::make_unique<TraceRecorder>(events);
  }

  /// Writes the runs traced so far (tprt/Trace.h); under MPI every rank
  /// calls it and rank 0 writes.
  void writeTrace(const std::string &path) {
    py::gil_scoped_release release;
    std::lock_guard<std::recursive_mutex> lock(mutex);
    std::vector<const TraceRecorder *> traces;
    for (RankBuffers &b : ranks) {
      if (!b.trace)
        throw Error("write_trace: no trace was started");
      traces.push_back(b.trace.get());
    }
    check(writeChromeTrace(path, m, traces, localRanks,
                           mpi ? comms[0].get() : nullptr));
  }

  std::string mesh() const { return m.mesh.describe(); }
  std::string dir() const { return m.dir; }
  int rank() const { return worldRank; }
  int size() const { return numRanks; }
  int64_t stepCount() const { return steps; }

private:
  /// Argument `a`'s buffer on local rank `i`: the result's, when an
  /// in-place update's result owns it.
  std::vector<char> &argument(size_t i, size_t a) {
    auto it = sharedResult.find(a);
    return it == sharedResult.end() ? ranks[i].args[a]
                                    : ranks[i].results[it->second];
  }
  const std::vector<char> &argument(size_t i, size_t a) const {
    return const_cast<Session *>(this)->argument(i, a);
  }

  static int find(const std::vector<TensorSpec> &specs,
                  const std::string &name) {
    for (size_t i = 0; i < specs.size(); ++i)
      if (specs[i].name == name)
        return int(i);
    return -1;
  }

  Manifest m;
  std::unique_ptr<Program> program;
  std::unique_ptr<WeightSource> weights;
  bool mpi = false;
  int worldRank = 0, numRanks = 1;
  int64_t steps = 0;
  std::vector<int> localRanks;
  std::vector<std::unique_ptr<Communicator>> comms;
  std::vector<RankBuffers> ranks;
  std::vector<std::pair<size_t, size_t>> feedback;
  /// Argument -> the in-place result that owns its buffer.
  std::map<size_t, int> sharedResult;
  /// One call at a time on the ranks' buffers (Python threads may share a
  /// session; the package also orders whole calls, tp/module.py).
  mutable std::recursive_mutex mutex;
};

// MPI, for the package's process-per-rank mode (under mpirun).
bool mpiInit() {
  int initialized;
  MPI_Initialized(&initialized);
  if (!initialized) {
    promoteToGlobal(reinterpret_cast<const void *>(&MPI_Init));
    int provided;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  return true;
}

void mpiFinalize() {
  int initialized, finalized;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized)
    MPI_Finalize();
}

int mpiRank() {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int mpiSize() {
  int n;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

/// Rank 0's string on every rank (a compiled program's folder, or the
/// error that stopped its compile).
std::string mpiBroadcast(const std::string &value) {
  int64_t length = int64_t(value.size());
  MPI_Bcast(&length, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  std::string out = value;
  out.resize(size_t(length));
  MPI_Bcast(out.data(), int(length), MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
}

} // namespace

PYBIND11_MODULE(_tprt, mod) {
  mod.doc() = "tp's runtime: compiled programs loaded with their ranks";
  promoteToGlobal(reinterpret_cast<const void *>(&setRankContext));
  py::register_exception<Error>(mod, "Error");

  py::class_<Session>(mod, "Session")
      .def(py::init<const std::string &, const std::string &, double,
                    const std::string &>(),
           py::arg("program_dir"), py::arg("backend") = "threads",
           py::arg("timeout") = 60.0, py::arg("model") = "")
      .def("arguments", [](const Session &s) { return s.describe(true); })
      .def("results", [](const Session &s) { return s.describe(false); })
      .def("set", &Session::set, py::arg("name"), py::arg("array"))
      .def("run", &Session::run)
      .def("get", &Session::get, py::arg("name"), py::arg("argument") = false)
      .def("save", &Session::save, py::arg("path"))
      .def("collectives", &Session::collectives)
      .def("start_trace", &Session::startTrace, py::arg("events") = 1 << 18)
      .def("write_trace", &Session::writeTrace, py::arg("path"))
      .def_property_readonly("mesh", &Session::mesh)
      .def_property_readonly("program_dir", &Session::dir)
      .def_property_readonly("rank", &Session::rank)
      .def_property_readonly("size", &Session::size)
      .def_property_readonly("steps", &Session::stepCount);

  mod.def("mpi_init", &mpiInit);
  mod.def("mpi_finalize", &mpiFinalize);
  mod.def("mpi_rank", &mpiRank);
  mod.def("mpi_size", &mpiSize);
  mod.def("mpi_broadcast", &mpiBroadcast);
  mod.def("mpi_barrier", [] { MPI_Barrier(MPI_COMM_WORLD); });
}
