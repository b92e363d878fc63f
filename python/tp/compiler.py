"""tp-compile and tp-run from Python: exporting a torch.nn.Module, compiling
it with a plan, and logging each compile stage (logger "tp")."""
import contextlib
import hashlib
import json
import logging
import os
import subprocess
import threading

from . import _config
from ._tprt import Error

log = logging.getLogger("tp")


def tool(name):
    path = os.path.join(_config.TOOLS_DIR, name)
    if not os.path.exists(path):
        raise Error("%s is not built (%s); build tp first (README)" % (name, path))
    return path


_export_lock = threading.Lock()


@contextlib.contextmanager
def _parameters_kept_apart(torch):
    """torch.onnx.export of a module in eval mode merges initializers of
    equal value into one (every fresh LayerNorm's ones and zeros, every
    zero bias), which tp would then train as one tied weight. In training
    mode the exporter merges only what is the same Parameter, which is what
    PyTorch ties: its deduplication is run as in training mode, and nothing
    else of the export changes."""
    c = torch._C
    dedup = getattr(c, "_jit_pass_onnx_deduplicate_initializers", None)
    if dedup is None:  # a torch whose exporter has no such pass
        yield
        return

    def by_identity(graph, params, is_train):
        return dedup(graph, params, True)
    with _export_lock:
        c._jit_pass_onnx_deduplicate_initializers = by_identity
        try:
            yield
        finally:
            c._jit_pass_onnx_deduplicate_initializers = dedup


@contextlib.contextmanager
def _sync_batchnorm_exportable(torch, model):
    """nn.SyncBatchNorm runs only on CUDA tensors under a process group,
    and the exporter runs the module: each one is swapped, for the export,
    for a BatchNorm holding the same parameters and buffers (the same ONNX
    node; tp-compile --sync-batchnorm gives it the whole batch's
    statistics)."""
    swapped = []
    for name, m in list(model.named_modules()):
        if not isinstance(m, torch.nn.SyncBatchNorm):
            continue

        class AnyRankBatchNorm(torch.nn.modules.batchnorm._BatchNorm):
            def _check_input_dim(self, input):
                pass
        plain = AnyRankBatchNorm(m.num_features, m.eps, m.momentum,
                                 m.affine, m.track_running_stats)
        plain.weight, plain.bias = m.weight, m.bias
        for buffer in ("running_mean", "running_var", "num_batches_tracked"):
            setattr(plain, buffer, getattr(m, buffer))
        plain.train(m.training)
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        setattr(parent, child, plain)
        swapped.append((parent, child, m))
    try:
        yield
    finally:
        for parent, child, m in swapped:
            setattr(parent, child, m)


def export(model, example_inputs, path, training=False):
    """torch.onnx.export as users export, but without constant folding, so
    that every parameter is an initializer named as state_dict() names it
    (tp plans by model.named_modules() either way). Every parameter keeps
    an initializer of its own (see _parameters_kept_apart),
    and the export runs with autograd on, as a user's does: under no_grad
    nn.MultiheadAttention takes a fused fast path the exporter refuses.
    training: export with TrainingMode.TRAINING, which keeps BatchNorm as a
    node of its own (an eval-mode export folds it into the convolution),
    so that one export serves both modes (tp-compile --batchnorm)."""
    import torch
    if not isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    log.info("exporting %s with torch.onnx.export%s", type(model).__name__,
             " (training mode: BatchNorm and Dropout kept)" if training else "")
    was_training = model.training
    mode = torch.onnx.TrainingMode.TRAINING if training \
        else torch.onnx.TrainingMode.EVAL
    # The exporter runs the module: in training mode BatchNorm updates its
    # running statistics on the example batch. The user's module keeps
    # them as they were.
    buffers = {name: b.detach().clone() for name, b in model.named_buffers()}
    try:
        with _parameters_kept_apart(torch), \
                _sync_batchnorm_exportable(torch, model):
            # Without constant folding every parameter stays an initializer
            # of its PyTorch name: a folded export gives a cross-attention's
            # in_proj_weight as two unnamed slices (q and kv) that no
            # state_dict() key maps back to. tp's GEMMs read transposed
            # weights as they are, and the slices run in the program.
            torch.onnx.export(model, example_inputs, path, training=mode,
                              do_constant_folding=False)
    except Exception as e:  # the exporter's own errors
        raise Error("torch.onnx.export failed: %s" % e) from e
    finally:
        model.train(was_training)
        with torch.no_grad():
            for name, b in model.named_buffers():
                if name in buffers:
                    b.copy_(buffers[name])


def compile_program(model_path, out_dir, mesh, entries, data_parallel=None,
                    extra=()):
    """tp-compile model_path --mesh ... --plan-entry ... -o out_dir/ [extra].
    Returns out_dir; a failed compile raises Error with tp-compile's
    message (which names the --plan-entry it refuses)."""
    os.makedirs(out_dir, exist_ok=True)
    command = [tool("tp-compile"), model_path, "--mesh", mesh.describe(),
               "-v", "-o", out_dir + "/"]
    command += ["--plan-entry=%s=%s" % kv for kv in entries.items()]
    if data_parallel:
        command.append("--data-parallel=" + data_parallel)
    command += list(extra)
    log.info("compiling %s on mesh %s", os.path.basename(model_path), mesh)
    process = subprocess.Popen(command, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    problems = []
    # One progress line per stage as it happens.
    for line in process.stderr:
        line = line.rstrip("\n")
        if line.startswith("tp-compile: ") and "error:" not in line \
                and "warning:" not in line:
            log.info("%s", line)
        elif "warning:" in line:
            log.warning("%s", line)
        else:
            problems.append(line)
    stdout = process.stdout.read()
    if process.wait() != 0:
        raise Error("\n".join(problems + [stdout.strip()]).strip() or
                    "tp-compile failed (exit %d)" % process.returncode)
    return out_dir


def program_key(model_path, *parts):
    """A folder name for one compile: the model's bytes and the options."""
    h = hashlib.sha256()
    with open(model_path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    h.update(json.dumps(parts, sort_keys=True).encode())
    return h.hexdigest()[:16]
