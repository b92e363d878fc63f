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
config.substitutions.append(("%models", config.models_dir))

# mlir-runner's support libraries (printing) from Debian's MLIR.
config.substitutions.append((
    "%mlir_runner_libs",
    ",".join(os.path.join(config.llvm_lib_dir, lib)
             for lib in ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    # libtprt: the GEMMs (tprt_sgemm) that compiled matmuls call.
    + "," + os.path.join(config.tp_obj_root, "lib", "libtprt.so")))

# MPI tests need mpirun (Debian's openmpi-bin).
import shutil
if shutil.which("mpirun"):
    config.available_features.add("mpirun")

# The ONNX backend test suite (Debian's libonnx-testdata, installed by
# scripts/setup.sh); without it the conformance tests report UNSUPPORTED.
onnx_testdata = "/usr/share/libonnx-testdata/data"
if os.path.isdir(onnx_testdata):
    config.available_features.add("onnx-testdata")
config.substitutions.append(("%onnx_testdata", onnx_testdata))
