# lit configuration for tp: tests mirror lib/, one file per pass or feature.
import os

import lit.formats

config.name = "tp"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test", ".onnxtxt"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "models", "Inputs",
                   "conformance.py"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tp_obj_root, "test")

# tp's tools first, then FileCheck / not from Debian's LLVM 22.
config.environment["PATH"] = os.pathsep.join(
    [config.tp_tools_dir, config.llvm_tools_dir, os.environ.get("PATH", "")]
)
config.substitutions.append(("%tp_src", config.tp_src_root))
config.substitutions.append(("%tp_bin", config.tp_tools_dir))
config.substitutions.append(("%tp_obj", config.tp_obj_root))
config.substitutions.append(("%models", config.models_dir))

# mlir-runner's support libraries (printing) from Debian's MLIR.
config.substitutions.append((
    "%mlir_runner_libs",
    ",".join(os.path.join(config.llvm_lib_dir, lib)
             for lib in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    # libtprt: the GEMMs (tprt_sgemm) that compiled matmuls call.
    + "," + os.path.join(config.tp_obj_root, "lib", "libtprt.so")))

# The sanitizer build (scripts/sanitize.sh): ASan reserves terabytes of
# shadow address space, so runs under `ulimit -v` cannot start there.
# mlir-runner is not instrumented: to load the instrumented libtprt it needs
# the sanitizer runtime preloaded.
mlir_runner = "mlir-runner"
if config.tp_sanitize:
    config.available_features.add("asan")
    import subprocess as _sp
    asan_rt = _sp.run([config.cxx_compiler,
                       "-print-file-name=libclang_rt.asan-x86_64.so"],
                      stdout=_sp.PIPE, text=True).stdout.strip()
    mlir_runner = "env LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0 mlir-runner" % asan_rt
config.substitutions.append(("%mlir_runner", mlir_runner))
# FileCheck prefix of checks that depend on the Python package (built
# everywhere but in the sanitizer build).
config.substitutions.append(
    ("%python_prefix", "PYTHON" if config.tp_have_python else "NO-PYTHON"))

# MPI tests need mpirun (Debian's openmpi-bin).
import shutil
import subprocess
if shutil.which("mpirun"):
    config.available_features.add("mpirun")


# `netns`: two hosts can be made of network namespaces joined by a veth
# pair (test/e2e/mpi-two-hosts.test); needs root and a kernel and container
# that allow it. Probed by making (and removing) one such pair.
def probe_netns():
    if os.geteuid() != 0:
        return "not root"
    ip = shutil.which("ip")
    if not ip:
        return "no `ip` command (Debian's iproute2)"
    ns, veth = "tpprobe%d" % os.getpid(), "tpprobe%d" % os.getpid()
    def run(*args):
        r = subprocess.run([ip] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return None if r.returncode == 0 else \
            "`ip %s` says: %s" % (" ".join(args), r.stdout.strip())
    why = run("netns", "add", ns)
    if why:
        return why
    why = run("link", "add", veth + "a", "type", "veth", "peer", "name",
              veth + "b", "netns", ns)
    run("link", "del", veth + "a")
    run("netns", "del", ns)
    return why


netns_missing = probe_netns()
if netns_missing:
    lit_config.note("two-host MPI tests are UNSUPPORTED (skipped): cannot "
                    "make network namespaces: " + netns_missing)
else:
    config.available_features.add("netns")

# The ONNX backend test suite (Debian's libonnx-testdata, installed by
# scripts/setup.sh); without it the conformance tests report UNSUPPORTED.
onnx_testdata = "/usr/share/libonnx-testdata/data"
if os.path.isdir(onnx_testdata):
    config.available_features.add("onnx-testdata")
config.substitutions.append(("%onnx_testdata", onnx_testdata))

# The widest vectors of this x86-64 host, for the FileCheck prefix of
# test/Target/host-vector-width.test: program.so is compiled for the host
# CPU, whose loop nests LLVM vectorizes at the width it prefers there.
host_flags = set()
if os.path.exists("/proc/cpuinfo"):
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                host_flags = set(line.split(":", 1)[1].split())
                break
host_vectors = ("AVX512" if "avx512f" in host_flags else
                "AVX2" if "avx2" in host_flags else "SSE")
config.substitutions.append(("%host_vectors", host_vectors))
# FileCheck flags that refuse registers wider than the host has.
config.substitutions.append(("%host_absent_registers", {
    "AVX512": "", "AVX2": "--implicit-check-not=%zmm",
    "SSE": "--implicit-check-not=%ymm --implicit-check-not=%zmm"}[host_vectors]))

# CUDA (docs/GPU.md). Compiling for the GPU needs only MLIR; ptxas checks the
# PTX; `cuda-runtime`: libtprt has the CUDA runtime, so CUDA programs link;
# `cuda-gpu`: a GPU is here to run them. Without one, every GPU test is
# UNSUPPORTED (skipped, not passed), and this says why.
import subprocess
ptxas = shutil.which("ptxas") or (
    os.path.join(config.cuda_bin_dir, "ptxas") if config.cuda_bin_dir else None)
if ptxas and os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
if config.tp_have_cuda:
    config.available_features.add("cuda-runtime")
    probe = subprocess.run(
        [os.path.join(config.tp_tools_dir, "tp-run"), "--cuda-devices"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    gpus = [l for l in probe.stdout.splitlines() if l.startswith("GPU ")]
    if probe.returncode == 0 and gpus:
        config.available_features.add("cuda-gpu")
        if len(gpus) >= 2:
            config.available_features.add("cuda-gpus-2")
        lit_config.note("CUDA GPUs: " + "; ".join(gpus))
    else:
        lit_config.note("GPU tests are UNSUPPORTED (skipped): tp-run "
                        "--cuda-devices says: " + probe.stdout.strip())
else:
    lit_config.note("GPU tests are UNSUPPORTED (skipped): libtprt was built "
                    "without the CUDA toolkit")
