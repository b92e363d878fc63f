"""parallelize_module and the compiled module it returns."""
import collections
import functools
import os
import sys
import threading
import warnings

import numpy as np

from . import _tprt, compiler, ranks
from .compiler import log
from ._tprt import Error
from .mesh import DeviceMesh
from .styles import plan_entries

IncompatibleKeys = collections.namedtuple("IncompatibleKeys",
                                          ["missing_keys", "unexpected_keys"])


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def to_numpy(value, what):
    """A numpy array of a numpy array, torch tensor or nested list, without
    a copy where the layout allows; (array, whether it was a torch tensor)."""
    # A torch tensor exists only where torch was imported (and importing it
    # here would cost a numpy-only caller a second).
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        if value.dtype == torch.bfloat16:
            # numpy has no bfloat16: its bit patterns, as uint16 (what the
            # runtime reads for a bf16 tensor).
            return value.detach().cpu().view(torch.int16).numpy().view(
                np.uint16), True
        return value.detach().cpu().numpy(), True
    if isinstance(value, np.ndarray):
        return value, False
    return np.asarray(value), False


def one_call_at_a_time(method):
    """Runs a method of a CompiledModule (or of its training step) under
    the module's lock: calls from several threads run one after another,
    each with its own inputs, and a forward during a training step sees the
    weights of one step or the other, never a mix."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return locked


def train_mode_modules(module):
    """The modules whose behaviour depends on train() / eval(): BatchNorm
    layers (batch or running statistics; SyncBatchNorm over the whole
    batch) and Dropout layers with p > 0, as (batchnorm names, sync
    batchnorm names, [(dropout name, p)])."""
    import torch
    batchnorm, sync, dropout = [], [], []
    for name, m in module.named_modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            batchnorm.append(name)
            if isinstance(m, torch.nn.SyncBatchNorm):
                sync.append(name)
        elif isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0:
            dropout.append((name, m.p))
    return batchnorm, sync, dropout


class Program:
    """A compiled program loaded with its ranks (a _tprt.Session), seen in
    PyTorch's names: state_dict(), load_state_dict(), save()."""

    def __init__(self, session, as_torch):
        self._session = session
        self._as_torch = as_torch
        self._arguments = session.arguments()
        self._results = session.results()
        self._params = [a for a in self._arguments if a["kind"] == "param"]

    def _output(self, array, as_torch):
        if as_torch:
            import torch
            if array.dtype == np.uint16:  # a bf16 tensor's bit patterns
                return torch.from_numpy(array.view(np.int16)).view(
                    torch.bfloat16)
            return torch.from_numpy(array)
        return array

    def _argument(self, name):
        for a in self._arguments:
            if a["name"] == name:
                return a
        return None

    def _torch_value(self, param, array):
        """An initializer's value in PyTorch's layout."""
        return np.ascontiguousarray(array.T) if param["torch_transposed"] \
            else array

    def state_dict(self):
        """Every weight by its PyTorch names (a tied weight under each), in
        PyTorch's layout, as torch tensors when the module came from
        PyTorch (numpy arrays otherwise)."""
        out = collections.OrderedDict()
        for p in self._params:
            value = self._torch_value(p, self._session.get(p["name"],
                                                           argument=True))
            for name in p["torch_names"]:
                out[name] = self._output(value, self._as_torch)
        return out

    def load_state_dict(self, state_dict, strict=True):
        """Sets the weights from PyTorch's state_dict() (numpy arrays or
        tensors). strict: every weight must be given and every key used."""
        used = set()
        missing = []
        for p in self._params:
            names = [n for n in p["torch_names"] if n in state_dict]
            if not names:
                missing.append(p["torch_names"][0])
                continue
            used.update(names)
            value, _ = to_numpy(state_dict[names[0]], "state_dict['%s']" % names[0])
            if p["torch_transposed"] and value.ndim == 2:
                value = value.T
            try:
                self._session.set(p["name"], value)
            except Error as e:
                raise Error("state_dict['%s']: %s" % (names[0], e)) from None
        unexpected = [k for k in state_dict if k not in used]
        if strict and (missing or unexpected):
            raise Error("load_state_dict: %s%s%s" % (
                "missing keys: %s" % ", ".join(missing) if missing else "",
                "; " if missing and unexpected else "",
                "unexpected keys: %s" % ", ".join(unexpected) if unexpected else ""))
        return IncompatibleKeys(missing, unexpected)

    def save(self, path):
        """Writes the model (binary ONNX) with the current weights, as
        tp-run --save does; rank 0 writes under MPI."""
        self._session.save(os.path.abspath(path))

    @property
    def outputs(self):
        """The graph's outputs: the results that are not the next value of
        an argument (running statistics, Dropout's run counter)."""
        fed_back = {a["name"] for a in self._arguments
                    if a["kind"] in ("param", "state")}
        return [r for r in self._results if r["name"] not in fed_back]

    @property
    def input_names(self):
        return [a["name"] for a in self._arguments if a["kind"] == "input"]

    def _feed(self, values, names, what):
        """Scatters values (in `names` order) into the ranks; returns
        whether any was a torch tensor."""
        if len(values) != len(names):
            raise Error("%s takes %d input(s) (%s), got %d" % (
                what, len(names), ", ".join(names), len(values)))
        any_torch = False
        for name, value in zip(names, values):
            array, was_torch = to_numpy(value, "input '%s'" % name)
            any_torch |= was_torch
            self._session.set(name, array)
        return any_torch


class CompiledModule:
    """What parallelize_module returns: call it as the module it compiles.

    Inputs are global tensors (numpy arrays or torch tensors); tp scatters
    each rank's block and gathers the outputs, returned in the same kind.
    """

    def __init__(self, source, mesh, entries, data_parallel, backend,
                 workdir, timeout, shapes, seed=0, trace=None,
                 precision="f32"):
        self._torch_module = None if isinstance(source, (str, os.PathLike)) \
            else source
        self._source_path = None if self._torch_module is not None \
            else os.path.abspath(os.fspath(source))
        self.mesh = mesh
        self.entries = entries
        self.data_parallel = data_parallel
        self.backend = backend
        self.timeout = timeout
        self.shapes = shapes or {}
        self.workdir = ranks.make_workdir(backend, workdir)
        self._model_path = self._source_path
        # One forward program per mode (train() / eval(), where the module
        # has BatchNorm or Dropout); _forward is the one called last.
        self._forwards = {}
        self._forward = None
        self._trainer = None
        self._synced_step = 0
        self._forward_updated_buffers = False
        self._batchnorm, self._sync_batchnorm, self._dropout = \
            ([], [], []) if self._torch_module is None \
            else train_mode_modules(self._torch_module)
        self.seed = seed
        self.precision = precision
        self.trace = os.path.abspath(trace) if trace else None
        # Held through every call that reads or writes the ranks' buffers
        # (one_call_at_a_time); reentrant, as compiling and syncing nest.
        self._lock = threading.RLock()

    # -- compiling ---------------------------------------------------------
    def _ensure_model(self, example_inputs):
        if self._model_path:
            return self._model_path
        if example_inputs is None:
            raise Error("the module is exported on its first call; give "
                        "example_inputs= or call it first")
        path = os.path.join(self.workdir, "model.onnx")

        def export():
            torch = _torch()
            examples = tuple(v if isinstance(v, torch.Tensor)
                             else torch.from_numpy(np.asarray(v))
                             for v in example_inputs)
            # One export serves both modes where the mode matters.
            compiler.export(self._torch_module, examples, path,
                            training=bool(self._batchnorm or self._dropout))
            return path
        self._model_path = ranks.on_leader(self.backend, export)
        return self._model_path

    def compile_program(self, kind, extra, example_inputs=None):
        """Compiles (once per options) and loads a program: a Program."""
        model = self._ensure_model(example_inputs)
        flags = list(extra) + ["--shape=%s=%s" % (n, "x".join(map(str, s)))
                               for n, s in self.shapes.items()]
        key = compiler.program_key(model, self.mesh.axes, self.entries,
                                   self.data_parallel, flags)
        out = os.path.join(self.workdir, "%s-%s" % (kind, key))

        def build():
            if not os.path.exists(os.path.join(out, "manifest.json")):
                compiler.compile_program(model, out, self.mesh, self.entries,
                                         self.data_parallel, flags)
            return out
        ranks.on_leader(self.backend, build)
        session = _tprt.Session(out, self.backend, self.timeout)
        if session.size != self.mesh.size():
            raise Error("the program runs on %d ranks, the mesh %s has %d"
                        % (session.size, self.mesh, self.mesh.size()))
        return Program(session, self._torch_module is not None)

    def run_traced(self, program, trace):
        """Runs `program` once; with a trace path, records the run and
        rewrites the file with every run traced so far."""
        if trace and not getattr(program, "_tracing", False):
            program._session.start_trace()
            program._tracing = True
        seconds = program._session.run()
        if trace:
            program._session.write_trace(trace)
        return seconds

    def mode_flags(self):
        """tp-compile's flags for the module's current mode: in train(),
        BatchNorm normalizes with batch statistics (the whole batch's for
        SyncBatchNorm, each data-parallel rank's otherwise, as DDP) and
        updates its running ones, and Dropout drops (masks keyed by the
        seed); in eval(), running statistics and no Dropout."""
        if self._torch_module is None:
            return []
        training = self._torch_module.training
        flags = []
        if self._batchnorm:
            flags.append("--batchnorm=" + ("train" if training else "eval"))
            if training and self._sync_batchnorm:
                flags.append("--sync-batchnorm")
        if self._dropout:
            flags.append("--seed=%d" % self.seed if training
                         else "--dropout=eval")
        return flags

    def announce_dropout(self):
        """Says, once per program, what each Dropout does in it."""
        if not self._dropout:
            return
        what = ", ".join("%s (p=%g)" % d for d in self._dropout)
        if self._torch_module.training:
            log.info("train(): Dropout %s draws masks from tp's generator "
                     "(Philox, seed %d; tp.dropout_mask computes them), not "
                     "from torch's", what, self.seed)
        else:
            log.info("eval(): Dropout %s is the identity", what)

    def _forward_for_mode(self, example_inputs=None):
        """The forward program of the module's current mode, compiled on
        first use, with the weights of the one called before."""
        flags = self.mode_flags()
        key = tuple(flags)
        program = self._forwards.get(key)
        if program is None:
            # The forward shares its weights with the training steps: f32.
            precision = ["--precision=bf16", "--keep-f32-weights"] \
                if self.precision == "bf16" else []
            program = self.compile_program("forward", flags + precision,
                                           example_inputs)
            self.announce_dropout()
            if self._forward is None and (self._batchnorm or self._dropout):
                # The module's own values: a training-mode export ran the
                # module, and its file may hold running statistics updated
                # on the example batch.
                program.load_state_dict(self._torch_module.state_dict(),
                                        strict=False)
            self._forwards[key] = program
        if program is not self._forward:
            previous, self._forward = self._forward, program
            if previous is not None:
                for p in program._params:
                    program._session.set(p["name"], previous._session.get(
                        p["name"], argument=True))
            self._synced_step = -1  # and the trainer's, if it has run
        return program

    @property
    def program(self):
        """The forward program (compiled on first use)."""
        with self._lock:
            return self._forward_for_mode()

    # -- running -----------------------------------------------------------
    @one_call_at_a_time
    def __call__(self, *inputs):
        program = self._forward_for_mode(inputs)
        self._sync_from_trainer()
        any_torch = program._feed(inputs, program.input_names, "the module")
        # The seconds the program itself ran (bench/python_call.py).
        program.last_step_seconds = self.run_traced(program, self.trace)
        # A train() forward updated running statistics: the next training
        # step reads them (one module state, as in PyTorch).
        self._forward_updated_buffers = len(program.outputs) < len(
            program._results)
        outputs = [program._output(program._session.get(r["name"]),
                                   any_torch)
                   for r in program.outputs]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _sync_from_trainer(self):
        """After training steps, the forward reads the trained weights (the
        module's parameters are the optimizer's, as in PyTorch)."""
        t = self._trainer
        if t is None or t._program._session.steps == self._synced_step:
            return
        for p in self._forward._params:
            self._forward._session.set(
                p["name"], t._program._session.get(p["name"], argument=True))
        self._synced_step = t._program._session.steps

    @one_call_at_a_time
    def state_dict(self):
        self._sync_from_trainer()
        return self.program.state_dict()

    @one_call_at_a_time
    def load_state_dict(self, state_dict, strict=True):
        result = self.program.load_state_dict(state_dict, strict)
        for other in self._forwards.values():
            if other is not self._forward:
                other.load_state_dict(state_dict, strict)
        if self._trainer is not None:
            self._trainer._program.load_state_dict(state_dict, strict)
        return result

    @one_call_at_a_time
    def save(self, path):
        self._sync_from_trainer()
        self.program.save(path)

    def __repr__(self):
        what = type(self._torch_module).__name__ if self._torch_module \
            is not None else self._source_path
        return "CompiledModule(%s, mesh=%s, plan=%s)" % (what, self.mesh,
                                                          self.entries)


def parallelize_module(module, device_mesh, parallelize_plan=None, *,
                       example_inputs=None, data_parallel=None, backend=None,
                       workdir=None, timeout=60.0, shapes=None, seed=0,
                       trace=None, precision="f32"):
    """Compiles `module` for `device_mesh` with `parallelize_plan`
    ({module name: style}) and returns a CompiledModule.

    module: a torch.nn.Module (exported with torch.onnx.export when
      example_inputs are given, else on its first call) or an ONNX file.
    data_parallel: the mesh axis that splits every input's batch (DDP).
    backend: "threads" (in-process ranks; the default) or "mpi" (the
      default under mpirun: this process is one rank).
    workdir: where the export and programs go (default: a temporary
      folder removed at exit).
    shapes: {input: shape} for an ONNX file with dynamic dims.
    seed: keys the masks of Dropout in train() (tp-compile --seed): the
      same seed gives the same masks on any mesh (tp.dropout_mask).
    trace: a file to write the forward calls' timeline to (tp-run --trace's
      Chrome trace; rewritten after each call).
    precision: "f32", or "bf16" (torch.autocast's mixed precision: matmuls
      and convolutions on bf16 operands summed in f32, everything else and
      the weights f32; tp-compile --precision bf16). Training steps of the
      module use it too unless train_step says otherwise.
    """
    if not isinstance(device_mesh, DeviceMesh):
        raise Error("device_mesh: give a tp.DeviceMesh (e.g. "
                    "tp.DeviceMesh({'tp': 2})), got %s"
                    % type(device_mesh).__name__)
    if isinstance(module, (str, os.PathLike)):
        if not os.path.exists(module):
            raise Error("%s: no such file" % os.fspath(module))
    else:
        torch = _torch()
        if torch is None or not isinstance(module, torch.nn.Module):
            raise Error("parallelize_module takes a torch.nn.Module or the "
                        "path of an ONNX file, got %s" % type(module).__name__)
    if data_parallel is not None and data_parallel not in device_mesh.axes:
        raise Error("data_parallel='%s' is not an axis of the mesh %s"
                    % (data_parallel, device_mesh))
    if precision not in ("f32", "bf16"):
        raise Error("precision='%s': f32 or bf16" % precision)
    entries = plan_entries(parallelize_plan or {})
    backend = ranks.check_backend(backend)
    compiled = CompiledModule(module, device_mesh, entries, data_parallel,
                              backend, workdir, timeout, shapes, int(seed),
                              trace, precision)
    if example_inputs is not None or compiled._source_path:
        if not isinstance(example_inputs, (tuple, type(None))):
            example_inputs = (example_inputs,)
        compiled._forward_for_mode(example_inputs)
    return compiled
