//===- tp-run.cpp - run a compiled tp program on N ranks ------------------===//
//
//   tp-run out/ --ranks 2 --input x=x.npy --output y.npy
//   mpirun -np 2 tp-run out/ --backend mpi --input x=x.npy --output y.npy
//   mpirun -np 2 tp-run out/ --backend nccl ...     (CUDA programs, a GPU each)
//
// Loads out/manifest.json and out/program.so, gives every rank its shard of
// the weights (read from the ONNX model) and of the inputs, runs the
// program on every rank, and assembles the full outputs.
//
//===----------------------------------------------------------------------===//
#include "tprt/AtomicFile.h"
#include "tprt/Blocks.h"
#include "tprt/DType.h"
#include "tprt/Npy.h"
#include "tprt/Program.h"
#include "tprt/Watchdog.h"
#include "tprt/WeightLoader.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mpi.h>
#include <set>
#include <thread>
#include <utility>
#include <unistd.h>
#include "Compare.h"
#include "FaultInjection.h"
#include "Profile.h"
#include "RankSteps.h"
#include "TraceFile.h"
#ifdef TPRT_HAVE_CUDA
#include "NcclRank.h"
#include "tprt/Cuda.h"
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TP_LEAK_SANITIZER 1
#endif
#endif

using namespace tprt;
namespace cl = llvm::cl;

namespace {
cl::OptionCategory category("tp-run options");
cl::opt<std::string> programDir(cl::Positional,
                                cl::desc("<program dir (tp-compile -o)>"),
                                cl::cat(category));
cl::opt<int> ranksOpt("ranks",
                      cl::desc("In-process ranks (threads backend); default: "
                               "the program's mesh size"),
                      cl::init(0), cl::cat(category));
cl::opt<int> threadsOpt(
    "threads-per-rank",
    cl::desc("Threads per rank for its GEMMs (OpenBLAS) and its parallel "
             "loop nests (OpenMP); default: the machine's cores divided "
             "among the in-process ranks (threads backend), else "
             "OpenBLAS's own count (OPENBLAS_NUM_THREADS, or every core)"),
    cl::init(0), cl::cat(category));
cl::opt<int> gemmThreadsOpt(
    "gemm-threads",
    cl::desc("Threads of each library kernel (OpenBLAS GEMM, oneDNN "
             "convolution) when not --threads-per-rank's. tp's loop nests "
             "give the same bits on any thread count; the libraries' sums "
             "may change order with theirs"),
    cl::init(0), cl::cat(category));
cl::opt<std::string> backend("backend",
                             cl::desc("threads (ranks are threads of this "
                                      "process; CUDA programs share GPU 0), "
                                      "mpi (one process per rank, under "
                                      "mpirun) or nccl (CUDA programs: one "
                                      "process per GPU, under mpirun or with "
                                      "--rendezvous)"),
                             cl::init("threads"), cl::cat(category));
cl::list<std::string> inputs("input",
                             cl::desc("A graph input: name=file.npy (or "
                                      "file.npy if the graph has one input)"),
                             cl::cat(category));
cl::opt<std::string> labelsFile(
    "labels", cl::desc("Training programs compiled with --labels or --loss "
                       "cross_entropy: the labels (same as --input "
                       "labels=file.npy)"),
    cl::value_desc("labels.npy"), cl::cat(category));
cl::list<std::string> outputs("output",
                              cl::desc("Write a graph output: name=file.npy "
                                       "(or file.npy if it has one)"),
                              cl::cat(category));
cl::list<std::string> compares(
    "compare",
    cl::desc("Compare an output with a reference: name=ref.npy (or ref.npy); "
             "prints the difference, fails above --tolerance"),
    cl::cat(category));
cl::opt<std::string> testData(
    "test-data",
    cl::desc("An ONNX backend test case's data folder (test_data_set_0/): "
             "its input_<i>.pb are the inputs, its output_<i>.pb are "
             "compared elementwise with the outputs, as numpy's allclose: "
             "|out - ref| <= atol + tolerance * |ref|, NaNs equal"),
    cl::value_desc("dir"), cl::cat(category));
cl::opt<double> tolerance(
    "tolerance",
    cl::desc("Relative tolerance: --compare passes when max|out-ref| <= "
             "atol + tolerance * max|ref|"),
    cl::init(1e-4), cl::cat(category));
cl::opt<double> absTolerance("atol",
                     cl::desc("Absolute tolerance for --compare (for "
                              "references that are all about zero)"),
                     cl::init(1e-7), cl::cat(category));
cl::opt<int> repeat("repeat", cl::desc("Run the step K times"), cl::init(1),
                    cl::cat(category));
cl::opt<int> steps("steps",
                   cl::desc("Training programs (tp-compile --train): run N "
                            "steps, each on the previous step's updated "
                            "weights, printing the loss. An input file whose "
                            "leading dim is N times the batch feeds one "
                            "batch per step; a single batch is reused"),
                   cl::init(1), cl::cat(category));
cl::opt<std::string> dumpGrads(
    "dump-grads",
    cl::desc("Training programs: write each weight's full gradient (last "
             "step) as <dir>/<initializer>.npy ('/' in a name written "
             "%2F), and <dir>/names.tsv with the PyTorch name of each "
             "weight the exporter renamed"),
    cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> compareGrads(
    "compare-grads",
    cl::desc("Training programs: compare every weight's gradient with "
             "DIR/<initializer>.npy (the layout --dump-grads writes); every "
             "file there must be a weight's gradient"),
    cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> saveModel(
    "save",
    cl::desc("Training programs: write the model with the trained weights "
             "as an ONNX file"),
    cl::value_desc("trained.onnx"), cl::cat(category));
cl::opt<std::string> modelFile(
    "model",
    cl::desc("The ONNX file to read the weights from, when the program has "
             "moved to another machine or folder (default: the path it was "
             "compiled from); it must be the same model (SHA-256)"),
    cl::value_desc("model.onnx"), cl::cat(category));
cl::opt<double> timeoutSeconds(
    "timeout", cl::desc("Seconds a collective waits for its group"),
    cl::init(60), cl::cat(category));
cl::opt<std::string> rendezvous(
    "rendezvous",
    cl::desc("--backend nccl without mpirun: a file path every process "
             "names; rank 0 writes the NCCL id there, the others read it. "
             "Each process gives its --rank (or $RANK)"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<int> rankOpt("rank",
                     cl::desc("--backend nccl with --rendezvous: this "
                              "process's rank"),
                     cl::init(-1), cl::cat(category));
cl::opt<bool> allowTf32(
    "tf32",
    cl::desc("CUDA programs: let f32 GEMMs use TF32 tensor cores (10-bit "
             "mantissa products, as PyTorch's allow_tf32)"),
    cl::cat(category));
cl::opt<bool> listCudaDevices(
    "cuda-devices",
    cl::desc("Print the CUDA devices (or why there are none) and exit: 0 "
             "when there is at least one"),
    cl::cat(category));
cl::opt<std::string> traceFile(
    "trace",
    cl::desc("Write a timeline of every rank's steps to this file, in the "
             "Chrome trace format Perfetto (ui.perfetto.dev) and "
             "chrome://tracing open: each step, loop nest (by ONNX node), "
             "GEMM (shape, GFLOP/s) and collective (bytes, time waiting for "
             "peers and moving data), and the program's buffers in use"),
    cl::value_desc("trace.json"), cl::cat(category));
cl::opt<unsigned> traceEvents(
    "trace-events",
    cl::desc("With --trace: the events each rank keeps (reserved before "
             "the first step; later ones are counted as dropped)"),
    cl::init(1u << 18), cl::cat(category));
cl::opt<bool> profile("profile",
                      cl::desc("Print per-step time, time by kernel family "
                               "(gemm, convolution, reduction, elementwise, "
                               "copy, collectives), memory, bytes per "
                               "collective and GFLOP/s per GEMM shape"),
                      cl::cat(category));

int fail(const std::string &msg) {
  llvm::errs() << "tp-run: error: " << msg << "\n";
  return 1;
}

/// name=file, or file alone when there is exactly one candidate name.
bool splitAssignment(const std::string &s, const std::vector<std::string> &names,
                     std::string &name, std::string &file) {
  size_t eq = s.find('=');
  if (eq != std::string::npos) {
    name = s.substr(0, eq);
    file = s.substr(eq + 1);
    return true;
  }
  if (names.size() != 1)
    return false;
  name = names[0];
  file = s;
  return true;
}


/// Ranks on several machines: mpirun and its daemons learn of a lost link
/// only from TCP keepalive (OpenMPI's default: 300 s idle + 9 probes of
/// 20 s), and until then the run does not end on every host, whatever
/// --timeout says (docs/Runtime.md). mpirun exports its MCA settings to the
/// ranks, so rank 0 can tell (settings from mca-params.conf excepted).
void warnIfLinkLossOutlivesTimeout() {
  const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const char *world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!local || !world || std::atoi(local) >= std::atoi(world))
    return;
  auto mca = [](const char *name, double fallback) {
    const char *v = std::getenv(name);
    return v ? std::atof(v) : fallback;
  };
  double idle = mca("OMPI_MCA_oob_tcp_keepalive_time", 300);
  double detect = idle <= 0 ? INFINITY
                            : idle + mca("OMPI_MCA_oob_tcp_keepalive_intvl", 20) *
                                         mca("OMPI_MCA_oob_tcp_keepalive_probes", 9);
  if (detect < timeoutSeconds)
    return;
  llvm::errs() << llvm::format(
      "tp-run: warning: ranks on several machines: mpirun notices a lost "
      "link only after %g s (TCP keepalive), not within --timeout %g s; "
      "give mpirun --mca oob_tcp_keepalive_time 5 --mca "
      "oob_tcp_keepalive_intvl 2 --mca oob_tcp_keepalive_probes 5 "
      "(docs/Runtime.md, \"Ranks on several machines\")\n",
      detect, timeoutSeconds.getValue());
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // A write past `ulimit -f` is then an error message, not a signal.
  ignoreFileSizeSignal();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "tp-run: run a program compiled by tp-compile on N ranks\n\n"
      "  tp-run out/ --ranks 2 --input x=x.npy --output y.npy\n"
      "  tp-run out/ --input x.npy --compare ref.npy --profile --repeat 10\n"
      "  mpirun -np 2 tp-run out/ --backend mpi --input x=x.npy --output y.npy\n");

  if (listCudaDevices) {
#ifdef TPRT_HAVE_CUDA
    int n;
    std::string why;
    const cuda::CudaApi *api = cuda::cudaApi(&why);
    if (!api) {
      llvm::outs() << "no CUDA: " << why << "\n";
      return 1;
    }
    if (Status s = api->deviceCount(n); !s) {
      llvm::outs() << s.message() << "\n";
      return 1;
    }
    for (int d = 0; d < n; ++d)
      llvm::outs() << "GPU " << d << ": " << api->deviceDescription(d)
                   << "\n";
    return 0;
#else
    llvm::outs() << "no CUDA: tp-run was built without the CUDA toolkit\n";
    return 1;
#endif
  }
  if (programDir.empty())
    return fail("no program directory (tp-compile -o out/); see --help");
  if (!std::isfinite(timeoutSeconds) || timeoutSeconds <= 0 ||
      timeoutSeconds > 1e6)
    return fail(llvm::formatv("--timeout {0}", llvm::format("%g", timeoutSeconds.getValue())).str() +
                ": give seconds, more than 0 and at most 1e6");
  if (repeat < 1)
    return fail("--repeat " + std::to_string(repeat) + ": runs the step K "
                "times, K >= 1");
  if (steps < 1)
    return fail("--steps " + std::to_string(steps) + ": N >= 1");
  if (ranksOpt.getNumOccurrences() && ranksOpt < 1)
    return fail("--ranks " + std::to_string(ranksOpt) + ": N >= 1");
  if (threadsOpt.getNumOccurrences() && threadsOpt < 1)
    return fail("--threads-per-rank " + std::to_string(threadsOpt) +
                ": N >= 1");
  if (gemmThreadsOpt.getNumOccurrences() && gemmThreadsOpt < 1)
    return fail("--gemm-threads " + std::to_string(gemmThreadsOpt) +
                ": N >= 1");
  bool nccl = backend == "nccl";
  if (backend != "mpi" && backend != "threads" && !nccl)
    return fail("unknown --backend '" + backend + "' (threads, mpi or nccl)");
  if (!traceFile.empty() && nccl)
    return fail("--trace: not with --backend nccl yet (kernels run "
                "asynchronously on the GPU; the threads and mpi backends "
                "trace)");
  if (traceFile.getNumOccurrences() && traceFile.empty())
    return fail("--trace: give the file to write (trace.json)");
#ifndef TPRT_HAVE_CUDA
  if (nccl)
    return fail("--backend nccl: this tp-run was built without the CUDA "
                "toolkit");
#else
  // Only CUDA programs load the CUDA runtime (libtprt_cuda.so).
  if (allowTf32)
    if (const cuda::CudaApi *api = cuda::cudaApi())
      api->setAllowTf32(true);
#endif
  // MPI runs the processes of --backend mpi, and of nccl unless a
  // rendezvous file replaces it.
  bool mpi = backend == "mpi" || (nccl && rendezvous.empty());
  int worldRank = 0;
  if (mpi)
    MPI_Init(&argc, &argv);
  auto finish = [&](int rc) {
    if (mpi) {
      if (rc != 0)
        MPI_Abort(MPI_COMM_WORLD, rc);
      MPI_Finalize();
#if TP_LEAK_SANITIZER
      // OpenMPI's own leaks come without usable stacks (its components
      // are built without frame pointers), so no suppression can name
      // them: MPI processes skip LeakSanitizer's exit check
      // (scripts/lsan-suppressions.txt); threads runs keep it.
      std::fflush(nullptr);
      _exit(rc);
#endif
    }
    return rc;
  };
  if (mpi)
    MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  if (mpi && worldRank == 0)
    warnIfLinkLossOutlivesTimeout();

  Manifest m;
  if (Status s = Manifest::load(programDir, m); !s)
    return finish(fail(s.message()));
#ifdef TPRT_HAVE_CUDA
  // NCCL: bind this process to its GPU before the program's kernels load.
  NcclRank ncclRank;
  int64_t worldMask = (int64_t(1) << m.mesh.sizes.size()) - 1;
  if (nccl) {
    if (m.target != "cuda")
      return finish(fail("--backend nccl runs CUDA programs; " + m.dir +
                         " was compiled for '" + m.target +
                         "' (tp-compile --target cuda)"));
    auto timeout = std::chrono::milliseconds(int64_t(timeoutSeconds * 1000));
    if (Status s = setUpNcclRank(m, mpi, rendezvous, rankOpt, worldMask,
                                 timeout, ncclRank);
        !s)
      return finish(fail(s.message()));
    worldRank = ncclRank.rank;
  }
#endif
  std::unique_ptr<Program> program;
  if (Status s = Program::load(m, program); !s)
    return finish(fail(s.message()));
  int numRanks = m.mesh.numRanks();
  if (!mpi && ranksOpt && ranksOpt != numRanks)
    return finish(fail("--ranks " + std::to_string(ranksOpt) +
                       " does not match the program's mesh " +
                       m.mesh.describe() + " (" + std::to_string(numRanks) +
                       " devices); recompile with another --mesh"));

  if (steps.getNumOccurrences() && weightFeedback(m).empty())
    return finish(fail(
        "--steps runs training programs that update their weights; " + m.dir +
        (resultNamed(m, "loss") >= 0
             ? " computes gradients but updates no weight (tp-compile "
               "--train --optimizer sgd)"
             : " is a forward program (--repeat K runs it K times)")));
  if (!modelFile.empty())
    m.modelPath = modelFile;
  std::string sha;
  if (Status s = sha256File(m.modelPath, sha); !s)
    return finish(fail(s.message() +
                       (modelFile.empty()
                            ? " (the program reads its weights from there; "
                              "--model names where the model is now)"
                            : "")));
  if (sha != m.modelSha256)
    return finish(fail(
        m.modelPath +
        (modelFile.empty()
             ? " has changed since the program was compiled (its SHA-256 "
               "differs from the manifest's); recompile it"
             : " is not the model the program was compiled from (its "
               "SHA-256 differs from the manifest's)")));

  // Inputs by name.
  std::vector<std::string> inputNames, outputNames;
  for (const auto &t : m.arguments)
    if (t.kind == "input")
      inputNames.push_back(t.name);
  // The graph's outputs: not the results fed back to the next run (running
  // statistics, Dropout's run counter, optimizer state), which --output
  // and --compare take by name only.
  std::set<size_t> fedBack;
  for (auto [r, a] : weightFeedback(m))
    fedBack.insert(r);
  for (size_t r = 0; r < m.results.size(); ++r)
    if (!fedBack.count(r))
      outputNames.push_back(m.results[r].name);
  std::map<std::string, NpyArray> feeds;
  std::vector<std::string> inputSpecs(inputs.begin(), inputs.end());
  if (!labelsFile.empty())
    inputSpecs.push_back("labels=" + labelsFile);
  for (const std::string &spec : inputSpecs) {
    std::string name, file;
    if (!splitAssignment(spec, inputNames, name, file))
      return finish(fail("--input " + spec + ": name the input (inputs: " +
                         joinNames(inputNames) + ")"));
    if (std::count(m.constantInputs.begin(), m.constantInputs.end(), name))
      return finish(fail("--input names '" + name + "', which tp-compile "
                         "--constant-input bound to a value: the program "
                         "does not take it"));
    if (!std::count(inputNames.begin(), inputNames.end(), name))
      return finish(fail("--input names '" + name +
                         "', which is not a graph input (inputs: " +
                         joinNames(inputNames) + ")"));
    if (feeds.count(name))
      return finish(fail("--input " + name + " is given twice"));
    NpyArray a;
    if (Status s = readNpy(file, a); !s)
      return finish(fail(s.message()));
    feeds[name] = std::move(a);
  }
  if (!testData.empty()) {
    std::vector<TestTensor> tensors;
    if (Status s = readTestTensors(testData, "input", inputNames, tensors,
                                   m.constantInputs);
        !s)
      return finish(fail(s.message()));
    for (TestTensor &t : tensors)
      feeds[inputNames[t.index]] = std::move(t.data);
  }
  for (const auto &t : m.arguments) {
    if (t.kind != "input")
      continue;
    auto it = feeds.find(t.name);
    if (it == feeds.end())
      return finish(fail("missing input '" + t.name + "' (" +
                         t.shapeString() + " " + dtypeName(t.dtype) +
                         "): give --input " + t.name + "=file.npy"));
    // One batch per step: the leading dim is --steps times the batch.
    std::vector<int64_t> perStep = it->second.shape;
    bool batched = steps > 1 && !perStep.empty() && !t.shape.empty() &&
                   perStep[0] == int64_t(steps) * t.shape[0];
    if (batched)
      perStep[0] = t.shape[0];
    if (perStep != t.shape || it->second.dtype != t.dtype)
      return finish(fail(
          "input '" + t.name + "': expected " + t.shapeString() + " " +
          dtypeName(t.dtype) +
          (t.shape.empty() || weightFeedback(m).empty()
               ? ""
               : " (or, with --steps N, N batches of it along the leading "
                 "dim)") +
          ", the file has " + it->second.shapeString() + " " +
          dtypeName(it->second.dtype)));
  }

  std::unique_ptr<WeightSource> weights;
  if (Status s = WeightSource::open(m.modelPath, weights, m.untieMerged); !s)
    return finish(fail(s.message()));

  // Run.
  std::vector<RankState> states(mpi || nccl ? 1 : numRanks);
  // The world ranks of this process's states.
  std::vector<int> localRanks;
  for (size_t i = 0; i < states.size(); ++i)
    localRanks.push_back(mpi || nccl ? worldRank : int(i));
  if (!traceFile.empty())
    writeTraceIfRunEndsEarly(traceFile, m, states, localRanks, mpi);
  StepOptions stepOptions;
  stepOptions.repeat = repeat;
  stepOptions.steps = steps;
  stepOptions.printLoss = steps.getNumOccurrences() > 0;
  stepOptions.profile = profile;
  stepOptions.threadsBackend = backend == "threads";
  stepOptions.traceEvents = traceFile.empty() ? 0 : traceEvents;
  auto timeout = std::chrono::milliseconds(int64_t(timeoutSeconds * 1000));
  // A rank that stops anywhere (not only in a collective) ends the run
  // after --timeout, as Ctrl-C does at once.
  if ((mpi || nccl) && (threadsOpt || gemmThreadsOpt))
    setRankThreads(threadsOpt, gemmThreadsOpt);
  if (mpi || nccl)
    startWatchdog(worldRank, 1, timeout, stepCount(m, stepOptions));
  else
    startWatchdog(0, numRanks, timeout, stepCount(m, stepOptions));
  if (nccl) {
#ifdef TPRT_HAVE_CUDA
    if (Status s = prepareRank(m, worldRank, feeds, *weights, stepOptions, states[0]); !s)
      return finish(fail("rank " + std::to_string(worldRank) + ": " +
                         s.message()));
    weights->release();
    runRank(*program, *ncclRank.comm, m, stepOptions, states[0]);
#endif
  } else if (mpi) {
    std::string error;
    // The trace's events go to rank 0 over the whole world.
    std::vector<int64_t> masks = m.axisMasks;
    if (!traceFile.empty())
      masks.push_back(worldMask);
    auto comm = createMpiCommunicator(m.mesh, masks, error);
    if (!comm)
      return finish(fail(error));
    comm->setTimeout(timeout);
    if (Status s = prepareRank(m, worldRank, feeds, *weights, stepOptions, states[0]); !s)
      return finish(fail("rank " + std::to_string(worldRank) + ": " +
                         s.message()));
    weights->release();
    runRank(*program, *comm, m, stepOptions, states[0]);
    if (!traceFile.empty())
      if (Status s =
              writeRunTrace(traceFile, m, states, localRanks, comm.get());
          !s)
        return finish(fail("--trace " + traceFile + ": " + s.message()));
  } else {
    // The ranks share this machine's cores: so do their GEMMs and loop nests.
    int cores = std::max(1u, std::thread::hardware_concurrency());
    setRankThreads(threadsOpt ? int(threadsOpt) : std::max(1, cores / numRanks),
                   gemmThreadsOpt);
    auto world = createThreadsWorld(m.mesh);
    for (int r = 0; r < numRanks; ++r)
      if (Status s = prepareRank(m, r, feeds, *weights, stepOptions,
                                     states[r]); !s)
        return finish(fail("rank " + std::to_string(r) + ": " + s.message()));
    // Every rank has its blocks: the step holds one copy of the weights.
    weights->release();
    std::vector<std::thread> threads;
    std::vector<std::unique_ptr<Communicator>> comms;
    for (int r = 0; r < numRanks; ++r) {
      comms.push_back(createThreadsCommunicator(world, r));
      comms.back()->setTimeout(timeout);
    }
    for (int r = 0; r < numRanks; ++r)
      threads.emplace_back([&, r] {
        runRank(*program, *comms[r], m, stepOptions, states[r]);
      });
    for (auto &t : threads)
      t.join();
    if (!traceFile.empty())
      if (Status s = writeRunTrace(traceFile, m, states, localRanks, nullptr);
          !s)
        return finish(fail("--trace " + traceFile + ": " + s.message()));
  }

  // Assemble every output from the ranks' blocks (on rank 0 under MPI).
  std::vector<NpyArray> results;
  for (size_t i = 0; i < m.results.size(); ++i) {
    const TensorSpec &t = m.results[i];
    NpyArray a;
    a.dtype = t.dtype;
    a.shape = t.shape;
    a.data.resize(t.numElements() * dtypeSize(t.dtype));
    // A weight read as a view is reported in its ONNX dims.
    if (!t.onnxShape.empty())
      a.shape = t.onnxShape;
    size_t bytes = t.localElements() * dtypeSize(t.dtype);
    // A pipeline rank without this result (another stage writes it) sends
    // a stand-in of the same size.
    std::vector<char> standIn;
    const char *block = states[0].results[i].data();
    if (states[0].results[i].size() != bytes) {
      standIn.resize(bytes);
      block = standIn.data();
    }
    if (nccl && !mpi) {
#ifdef TPRT_HAVE_CUDA
      // No MPI: gather every rank's block over NCCL.
      const cuda::CudaApi *api = cuda::cudaApi();
      char *mine = static_cast<char *>(api->allocate(bytes));
      char *all = static_cast<char *>(api->allocate(bytes * numRanks));
      std::memcpy(mine, block, bytes);
      Status s = ncclRank.comm->allGather(mine, all, 1, int64_t(bytes),
                                          TPRT_I8, worldMask,
                                          "gathering output " + t.name);
      if (s && worldRank == 0)
        for (int r = 0; r < numRanks; ++r)
          if (m.holdsResult(t, r))
            insertBlock(t, m.mesh, r, all + r * bytes, a.data.data(),
                        dtypeSize(t.dtype));
      api->release(mine);
      api->release(all);
      if (!s)
        return finish(fail(s.message()));
#endif
    } else if (mpi) {
      std::vector<char> all(worldRank == 0 ? bytes * numRanks : 0);
      MPI_Gather(block, int(bytes), MPI_BYTE, all.data(),
                 int(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
      if (worldRank == 0)
        for (int r = 0; r < numRanks; ++r)
          if (m.holdsResult(t, r))
            insertBlock(t, m.mesh, r, all.data() + r * bytes, a.data.data(),
                        dtypeSize(t.dtype));
    } else {
      for (int r = 0; r < numRanks; ++r)
        if (m.holdsResult(t, r))
          insertBlock(t, m.mesh, r, states[r].results[i].data(),
                      a.data.data(), dtypeSize(t.dtype));
    }
    results.push_back(std::move(a));
  }
  if (worldRank != 0)
    return finish(0);

  if (!dumpGrads.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpGrads))
      return finish(fail("--dump-grads " + dumpGrads + ": cannot create the "
                         "folder: " + ec.message()));
    // Files are named after the initializers (what the model and
    // --compare-grads use); names.tsv gives PyTorch's name of each weight
    // the exporter renamed.
    std::string names;
    for (const TensorSpec &a : m.arguments)
      if (a.kind == "param" && !a.torchName.empty())
        names += a.name + "\t" + a.torchName + "\n";
    if (!names.empty()) {
      if (Status s = writeFileAtomically(dumpGrads + "/names.tsv", names); !s)
        return finish(fail(s.message()));
    }
    for (size_t i = 0; i < m.results.size(); ++i) {
      llvm::StringRef name = m.results[i].name;
      if (!name.consume_front("grad_"))
        continue;
      if (Status s = writeNpy(dumpGrads + "/" + gradFileStem(name.str()) + ".npy",
                              results[i]);
          !s)
        return finish(fail(s.message()));
    }
  }
  if (!saveModel.empty()) {
    std::vector<std::pair<std::string, std::vector<char>>> trained;
    for (auto [r, a] : weightFeedback(m))
      if (m.arguments[a].kind == "param")
        trained.emplace_back(m.results[r].name, results[r].data);
    if (trained.empty())
      return finish(fail("--save needs a training program (tp-compile "
                         "--train with an optimizer)"));
    // The exporter's transposed copies of tied weights follow the weight.
    for (const auto &[copy, weight] : m.tiedCopies) {
      int r = resultNamed(m, weight);
      if (r < 0 || results[r].shape.size() != 2)
        continue;
      const NpyArray &w = results[r];
      size_t rows = w.shape[0], cols = w.shape[1], es = dtypeSize(w.dtype);
      std::vector<char> t(w.data.size());
      for (size_t i = 0; i < rows; ++i)
        for (size_t j = 0; j < cols; ++j)
          std::memcpy(&t[(j * rows + i) * es], &w.data[(i * cols + j) * es], es);
      trained.emplace_back(copy, std::move(t));
    }
    if (Status s = weights->saveWithWeights(saveModel, trained); !s)
      return finish(fail(s.message()));
  }

  int rc = 0;
  for (const std::string &spec : outputs) {
    std::string name, file;
    if (!splitAssignment(spec, outputNames, name, file) || resultNamed(m, name) < 0)
      return finish(fail("--output " + spec + ": name a graph output (" +
                         joinNames(outputNames) + ")"));
    if (Status s = writeNpy(file, results[resultNamed(m, name)]); !s)
      return finish(fail(s.message()));
  }
  for (const std::string &spec : compares) {
    std::string name, file;
    if (!splitAssignment(spec, outputNames, name, file) || resultNamed(m, name) < 0)
      return finish(fail("--compare " + spec + ": name a graph output (" +
                         joinNames(outputNames) + ")"));
    std::string error;
    std::optional<bool> ok =
        compareWithFile(name, results[resultNamed(m, name)], file, tolerance,
                        absTolerance, numRanks, error);
    if (!ok)
      return finish(fail(error));
    if (!*ok)
      rc = 1;
  }
  if (!compareGrads.empty()) {
    // Sorted, so that the output reads the same on every file system.
    std::vector<std::string> files;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(compareGrads, ec), end;
         !ec && it != end; it.increment(ec))
      if (llvm::StringRef(it->path()).ends_with(".npy"))
        files.push_back(it->path());
    if (ec || files.empty())
      return finish(fail("--compare-grads " + compareGrads + ": " +
                         (ec ? ec.message() : "no .npy files")));
    std::sort(files.begin(), files.end());
    for (const std::string &file : files) {
      std::string weight =
          weightOfGradFile(llvm::sys::path::stem(file).str());
      int r = resultNamed(m, "grad_" + weight);
      if (r < 0)
        return finish(fail("--compare-grads: " + file +
                           " is not the gradient of a weight of the "
                           "program (no output grad_" + weight + ")"));
      std::string error;
      std::optional<bool> ok = compareWithFile("grad_" + weight, results[r], file,
                                               tolerance, absTolerance,
                                               numRanks, error);
      if (!ok)
        return finish(fail(error));
      if (!*ok)
        rc = 1;
    }
    llvm::outs() << "gradients: " << files.size() << " compared\n";
  }
  if (!testData.empty()) {
    std::vector<TestTensor> refs;
    if (Status s = readTestTensors(testData, "output", outputNames, refs); !s)
      return finish(fail(s.message()));
    for (const TestTensor &ref : refs)
      if (!compareElementwise(ref.file + " (" + outputNames[ref.index] + ")",
                              results[resultNamed(m, outputNames[ref.index])],
                              ref.data, tolerance,
                              absTolerance))
        rc = 1;
  }
  if (profile)
    printProfile(m, states, numRanks, backend);
  return finish(rc);
}
