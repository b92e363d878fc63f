"""The generated training step (tp-compile --train) driven from Python."""
import os

from ._tprt import Error
from .module import CompiledModule, one_call_at_a_time

LOSSES = ("mse", "cross_entropy", "output")


class SGD:
    """torch.optim.SGD: lr, momentum, weight_decay (L2 in the gradient)."""

    def __init__(self, lr, momentum=0.0, weight_decay=0.0):
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay

    def flags(self):
        return ["--optimizer=sgd", "--lr=%r" % self.lr,
                "--momentum=%r" % self.momentum,
                "--weight-decay=%r" % self.weight_decay]


class AdamW:
    """torch.optim.AdamW: lr, eps, weight_decay (decoupled); betas 0.9 and
    0.999 (the generated step's)."""

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=0.01):
        if tuple(betas) != (0.9, 0.999):
            raise Error("AdamW(betas=%r): the generated step uses PyTorch's "
                        "default betas (0.9, 0.999)" % (tuple(betas),))
        self.lr, self.eps, self.weight_decay = lr, eps, weight_decay

    def flags(self):
        return ["--optimizer=adamw", "--lr=%r" % self.lr,
                "--adam-epsilon=%r" % self.eps,
                "--weight-decay=%r" % self.weight_decay]


class TrainStep:
    """One training step per call: step(inputs, labels) returns the loss.

    The weights and optimizer state stay in the ranks between steps; the
    compiled module's forward reads the trained weights.
    """

    def __init__(self, module, loss, optimizer, labels, frozen, bucket_mb,
                 recompute, loss_options=(), trace=None, precision="f32",
                 grad_reduce_dtype="f32"):
        self.module = module
        self.trace = os.path.abspath(trace) if trace else None
        self.loss = loss
        self.takes_labels = labels
        flags = ["--train", "--loss=" + loss] + list(loss_options)
        flags += optimizer.flags() if optimizer is not None \
            else ["--optimizer=none"]
        if labels and loss == "mse":
            flags.append("--labels")
        flags += ["--frozen=" + f for f in frozen]
        flags += ["--recompute=" + m for m in recompute]
        if bucket_mb is not None:
            flags.append("--bucket-mb=%r" % bucket_mb)
        flags += ["--precision=" + precision,
                  "--grad-reduce-dtype=" + grad_reduce_dtype]
        self._flags = flags
        self._program = None
        # The module's lock: its forward and this step share the weights.
        self._lock = module._lock

    def _ensure(self, example_inputs):
        mode = self.module.mode_flags()
        if self._program is not None:
            if mode != self._mode:
                def name(flags):
                    return "eval()" if "--batchnorm=eval" in flags or \
                        "--dropout=eval" in flags else "train()"
                raise Error(
                    "the module was in %s mode when its training step was "
                    "compiled and is in %s mode now (BatchNorm and Dropout "
                    "differ between them); call tp.train_step() again for "
                    "a step in this mode (it starts from the trained "
                    "weights, with fresh optimizer state)"
                    % (name(self._mode), name(mode)))
            return self._program
        self._mode = mode
        self._program = self.module.compile_program(
            "train", self._flags + mode, example_inputs)
        self.module.announce_dropout()
        # The step starts from the module's current weights.
        if self.module._forward is not None:
            self.module._sync_from_trainer()
            self._program.load_state_dict(self.module._forward.state_dict())
        self.module._trainer = self
        self.module._synced_step = 0
        return self._program

    def __call__(self, inputs, labels=None):
        return self.step(inputs, labels)

    @one_call_at_a_time
    def step(self, inputs, labels=None):
        """Runs one step on `inputs` (an array or a tuple of arrays, global
        batches) and `labels`; returns the loss as a float."""
        if not isinstance(inputs, (tuple, list)):
            inputs = (inputs,)
        program = self._ensure(tuple(inputs))
        module = self.module
        if module._forward_updated_buffers:
            # Running statistics the module's forward updated since.
            forward = module._forward._session
            updated = {r["name"] for r in module._forward._results}
            for p in program._params:
                if p["name"] in updated:
                    program._session.set(p["name"], forward.get(
                        p["name"], argument=True))
            module._forward_updated_buffers = False
        names = [n for n in program.input_names if n != "labels"]
        values = list(inputs)
        if self.takes_labels:
            if labels is None:
                raise Error("the %s loss compares with labels: step(inputs, "
                            "labels)" % self.loss)
            names.append("labels")
            values.append(labels)
        elif labels is not None:
            raise Error("this step takes no labels (loss '%s'%s)" % (
                self.loss, ", compiled with labels=False"
                if self.loss == "mse" else ""))
        program._feed(values, names, "the training step")
        self.module.run_traced(program, self.trace)
        return float(program._session.get("loss"))

    @one_call_at_a_time
    def get_gradients(self):
        """Every weight's gradient of the last step, by PyTorch name and in
        PyTorch's layout."""
        program = self._program
        if program is None or program._session.steps == 0:
            raise Error("get_gradients: run a step first")
        grads = {}
        for r in program._results:
            if not r["name"].startswith("grad_"):
                continue
            p = program._argument(r["name"][len("grad_"):])
            if p is None or p["kind"] != "param":
                continue
            value = program._torch_value(p, program._session.get(r["name"]))
            for name in p["torch_names"]:
                grads[name] = program._output(value, program._as_torch)
        return grads

    @one_call_at_a_time
    def state_dict(self):
        return self._require().state_dict()

    @one_call_at_a_time
    def load_state_dict(self, state_dict, strict=True):
        return self._require().load_state_dict(state_dict, strict)

    @one_call_at_a_time
    def save(self, path):
        self._require().save(path)

    @property
    def program_dir(self):
        """The compiled training step's folder (what tp-run runs)."""
        return self._require()._session.program_dir

    def _require(self):
        if self._program is None:
            raise Error("the training step is compiled on its first step(); "
                        "run one first")
        return self._program


def train_step(module, loss="mse", optimizer=None, *, labels=None,
               frozen=(), bucket_mb=None, recompute=(), ignore_index=-100,
               reduction="mean", label_smoothing=0.0, trace=None,
               precision=None, grad_reduce_dtype="f32"):
    """Compiles the training step of a compiled module (tp-autodiff: loss,
    every gradient, the optimizer's update).

    loss: "mse" (mean of the squared output, or against labels),
      "cross_entropy" (logits against integer labels) or "output" (the
      model's scalar output).
    ignore_index, reduction, label_smoothing: F.cross_entropy's: labels
      equal to ignore_index (default -100, how padded positions are
      labelled) count neither in the sum nor in the mean's denominator,
      which is the global count of the others on any mesh; reduction
      "mean" or "sum".
    optimizer: tp.SGD(...), tp.AdamW(...), or None (gradients only).
    labels: whether step() takes labels (default: yes for mse and
      cross_entropy).
    frozen: weights not to train (globs over PyTorch or ONNX names).
    bucket_mb: DDP's bucket_cap_mb for the gradient all_reduces.
    recompute: modules (named as model.named_modules() prints them, `*`
      for one part: "layers.*") whose activations the backward pass
      recomputes instead of keeping, as torch.utils.checkpoint around each.
    trace: a file to write the steps' timeline to (tp-run --trace's Chrome
      trace: kernels, GEMMs, collectives per rank; rewritten after each
      step).
    precision: "f32" or "bf16" (mixed precision, as torch.autocast: bf16
      products, f32 master weights and optimizer); default: the module's
      (parallelize_module's precision=).
    grad_reduce_dtype: "f32", or "bf16": the data-parallel gradient
      all-reduces move bf16 (DDP's bf16_compress_hook).
    """
    if not isinstance(module, CompiledModule):
        raise Error("train_step takes what tp.parallelize_module returned, "
                    "got %s" % type(module).__name__)
    if loss not in LOSSES:
        raise Error("loss '%s': mse, cross_entropy or output" % loss)
    if labels is None:
        labels = loss != "output"
    if loss == "cross_entropy" and not labels:
        raise Error("the cross_entropy loss needs labels")
    if loss == "output" and labels:
        raise Error("the output loss takes no labels")
    if optimizer is not None and not isinstance(optimizer, (SGD, AdamW)):
        raise Error("optimizer: tp.SGD(...) or tp.AdamW(...), got %s"
                    % type(optimizer).__name__)
    if isinstance(recompute, str):
        recompute = [recompute]
    if precision is None:
        precision = module.precision
    for name, value in (("precision", precision),
                        ("grad_reduce_dtype", grad_reduce_dtype)):
        if value not in ("f32", "bf16"):
            raise Error("%s='%s': f32 or bf16" % (name, value))
    loss_options = []
    if loss == "cross_entropy":
        if reduction not in ("mean", "sum"):
            raise Error("reduction='%s': mean or sum (reduction='none' has "
                        "no scalar loss to differentiate)" % reduction)
        if not 0.0 <= float(label_smoothing) <= 1.0:
            raise Error("label_smoothing=%r: give a value in [0, 1]"
                        % label_smoothing)
        loss_options = ["--ignore-index=%d" % int(ignore_index),
                        "--reduction=" + reduction,
                        "--label-smoothing=%r" % float(label_smoothing)]
    elif (ignore_index, reduction, label_smoothing) != (-100, "mean", 0.0):
        raise Error("ignore_index, reduction and label_smoothing go with "
                    "loss='cross_entropy'")
    return TrainStep(module, loss, optimizer, labels, list(frozen), bucket_mb,
                     list(recompute), loss_options, trace, precision,
                     grad_reduce_dtype)
