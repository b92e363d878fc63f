#!/usr/bin/python3
"""The benchmark model: a stack of pre-LayerNorm transformer blocks (GPT
style, like test/models/block scaled up), as an ONNX file for tp and as a
PyTorch module with the same weights.

Per layer l, with x [batch, seq, hidden]:
  h = x + o(attention(ln1(x)))      q, k, v, o: Linear hidden -> hidden
  y = h + fc2(gelu(fc1(ln2(h))))    fc1: hidden -> ffn, fc2: ffn -> hidden
Initializers are named like PyTorch's parameters (layers.<l>.attn.q.weight,
[out, in]) and Linear is exported as PyTorch does on 3-D input (Transpose
+ MatMul + Add), so the Megatron plan is the shared block's:
  layers.*.attn.q=colwise, ..., layers.*.attn.o=rowwise,
  layers.*.fc1=colwise, layers.*.fc2=rowwise
"""
import math
import os
import subprocess
import sys

import numpy as np

MEGATRON_PLAN = ("layers.*.attn.q=colwise,layers.*.attn.k=colwise,layers.*.attn.v=colwise,"
                 "layers.*.attn.o=rowwise,layers.*.fc1=colwise,layers.*.fc2=rowwise")


def add_model_arguments(parser, repeat):
    """The bench model's options, shared by bench/run.py and
    bench/python_call.py (defaults: the issue's 8 layers, hidden 1024, 2048
    tokens)."""
    parser.add_argument("--tp-bin", required=True)
    parser.add_argument("--workdir", default="build/bench")
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--ffn", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=repeat)


def prepare(args, log=None):
    """The bench model of `args` (written on first use) and an input batch:
    (model path, x.npy path, tag)."""
    import numpy as np
    L, D, H, F, B, S = args.layers, args.hidden, args.heads, args.ffn, args.batch, args.seq
    os.makedirs(args.workdir, exist_ok=True)
    tag = f"l{L}_d{D}_h{H}_f{F}_b{B}_s{S}"
    model = model_path(args.workdir, tag)
    if not os.path.exists(model):
        if log:
            log(f"writing {model}")
        write_onnx(model, weights(L, D, F), L, B, S, D, H, args.workdir)
    x_path = os.path.join(args.workdir, f"x_{tag}.npy")
    np.save(x_path, np.random.default_rng(1).standard_normal((B, S, D)).astype(np.float32))
    return model, x_path, tag


def model_path(workdir, tag):
    """Where the bench writes the ONNX file of a configuration; v2: scalars
    are Constant nodes (v1 stored them as initializers, which tp trains)."""
    return os.path.join(workdir, f"transformer_v2_{tag}.onnx")


def weights(layers, hidden, ffn, seed=0):
    """name -> float32 array, PyTorch's layouts."""
    rng = np.random.default_rng(seed)
    w = {}

    def linear(name, out, inp):
        bound = 1 / math.sqrt(inp)
        w[name + ".weight"] = rng.uniform(-bound, bound, (out, inp)).astype(np.float32)
        w[name + ".bias"] = rng.uniform(-bound, bound, out).astype(np.float32)

    for l in range(layers):
        p = f"layers.{l}."
        for ln in ("ln1", "ln2"):
            w[p + ln + ".weight"] = (1 + 0.1 * rng.standard_normal(hidden)).astype(np.float32)
            w[p + ln + ".bias"] = (0.1 * rng.standard_normal(hidden)).astype(np.float32)
        for name in ("q", "k", "v", "o"):
            linear(p + "attn." + name, hidden, hidden)
        linear(p + "fc1", ffn, hidden)
        linear(p + "fc2", hidden, ffn)
    return w


def onnx_classes(workdir):
    subprocess.run(["protoc", f"--python_out={workdir}", "-I/usr/include/onnx",
                    "/usr/include/onnx/onnx.proto"], check=True)
    sys.path.insert(0, workdir)
    import onnx_pb2
    return onnx_pb2


def write_onnx(path, w, layers, batch, seq, hidden, heads, workdir):
    pb = onnx_classes(workdir)
    m = pb.ModelProto(ir_version=8)
    m.opset_import.add(domain="", version=17)
    g = m.graph
    g.name = "transformer"
    for k, v in w.items():
        t = g.initializer.add(name=k, data_type=pb.TensorProto.FLOAT, dims=list(v.shape))
        t.raw_data = v.tobytes()

    def value_info(field, name, shape):
        vi = field.add(name=name)
        vi.type.tensor_type.elem_type = pb.TensorProto.FLOAT
        for d in shape:
            vi.type.tensor_type.shape.dim.add(dim_value=d)

    def const(name, values, dtype=pb.TensorProto.INT64):
        """A Constant node, as torch.onnx.export writes Python numbers and
        shapes (an initializer would be a weight: trained)."""
        n = g.node.add(op_type="Constant", name=name, output=[name])
        a = n.attribute.add(name="value", type=pb.AttributeProto.TENSOR)
        a.t.data_type, a.t.dims[:] = dtype, [len(values)]
        arr = np.array(values, np.int64 if dtype == pb.TensorProto.INT64 else np.float32)
        a.t.raw_data = arr.tobytes()
        return name

    def node(op, inputs, output, name, **attrs):
        n = g.node.add(op_type=op, name=name, input=inputs, output=[output])
        for k, v in attrs.items():
            a = n.attribute.add(name=k)
            if isinstance(v, list):
                a.type, a.ints[:] = pb.AttributeProto.INTS, v
            elif isinstance(v, float):
                a.type, a.f = pb.AttributeProto.FLOAT, v
            else:
                a.type, a.i = pb.AttributeProto.INT, v
        return output

    value_info(g.input, "x", (batch, seq, hidden))
    value_info(g.output, "y", (batch, seq, hidden))
    dh = hidden // heads
    split = const("shape_heads", [batch, seq, heads, dh])
    merge = const("shape_merged", [batch, seq, hidden])
    scale = const("attn_scale", [1 / math.sqrt(dh)], pb.TensorProto.FLOAT)
    half = const("half", [0.5], pb.TensorProto.FLOAT)
    one = const("one", [1.0], pb.TensorProto.FLOAT)
    rsqrt2 = const("rsqrt2", [1 / math.sqrt(2)], pb.TensorProto.FLOAT)

    def linear(x, name):
        t = node("Transpose", [name + ".weight"], f"/{name}/t", f"/{name}/Transpose", perm=[1, 0])
        mm = node("MatMul", [x, t], f"/{name}/mm", f"/{name}/MatMul")
        return node("Add", [mm, name + ".bias"], f"/{name}/out", f"/{name}/Add")

    x = "x"
    for l in range(layers):
        p = f"layers.{l}."
        s = f"/layers.{l}"
        ln1 = node("LayerNormalization", [x, p + "ln1.weight", p + "ln1.bias"], s + "/ln1",
                   s + "/ln1/LayerNormalization", axis=-1, epsilon=1e-5)
        heads_of = {}
        for name in ("q", "k", "v"):
            v = linear(ln1, p + "attn." + name)
            r = node("Reshape", [v, split], f"{s}/{name}_heads", f"{s}/attn/{name}/Reshape")
            heads_of[name] = node("Transpose", [r], f"{s}/{name}_bhsd", f"{s}/attn/{name}/Transpose",
                                  perm=[0, 2, 1, 3])
        kt = node("Transpose", [heads_of["k"]], f"{s}/kt", f"{s}/attn/kt", perm=[0, 1, 3, 2])
        scores = node("MatMul", [heads_of["q"], kt], f"{s}/scores", f"{s}/attn/scores")
        scaled = node("Mul", [scores, scale], f"{s}/scaled", f"{s}/attn/scale")
        probs = node("Softmax", [scaled], f"{s}/probs", f"{s}/attn/Softmax", axis=-1)
        ctx = node("MatMul", [probs, heads_of["v"]], f"{s}/ctx", f"{s}/attn/ctx")
        ctx_t = node("Transpose", [ctx], f"{s}/ctx_t", f"{s}/attn/ctx/Transpose", perm=[0, 2, 1, 3])
        merged = node("Reshape", [ctx_t, merge], f"{s}/merged", f"{s}/attn/merge")
        o = linear(merged, p + "attn.o")
        h = node("Add", [x, o], f"{s}/h", f"{s}/residual1")
        ln2 = node("LayerNormalization", [h, p + "ln2.weight", p + "ln2.bias"], s + "/ln2",
                   s + "/ln2/LayerNormalization", axis=-1, epsilon=1e-5)
        f1 = linear(ln2, p + "fc1")
        # gelu(x) = 0.5 x (1 + erf(x / sqrt(2))), as torch exports it
        e = node("Erf", [node("Mul", [f1, rsqrt2], f"{s}/gs", f"{s}/gelu/scale")], f"{s}/ge", f"{s}/gelu/Erf")
        gelu = node("Mul", [node("Mul", [f1, half], f"{s}/gh", f"{s}/gelu/half"),
                            node("Add", [e, one], f"{s}/g1", f"{s}/gelu/one")],
                    f"{s}/gelu", f"{s}/gelu/Mul")
        f2 = linear(gelu, p + "fc2")
        x = node("Add", [h, f2], "y" if l == layers - 1 else f"{s}/y", f"{s}/residual2")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def torch_model(w, layers, hidden, heads, ffn, tp_rank=0, tp_size=1, group=None):
    """The same model in PyTorch; with tp_size > 1, Megatron's tensor
    parallelism written by hand: column-parallel q, k, v, fc1, row-parallel
    o, fc2, with the f / g all_reduce functions on `group`."""
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F

    class CopyToParallel(torch.autograd.Function):  # Megatron's f
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            g = g.clone()
            dist.all_reduce(g, group=group)
            return g

    class ReduceFromParallel(torch.autograd.Function):  # Megatron's g
        @staticmethod
        def forward(ctx, x):
            x = x.clone()
            dist.all_reduce(x, group=group)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    def param(a):
        return torch.nn.Parameter(torch.from_numpy(np.ascontiguousarray(a)))

    def shard(a, dim):
        if tp_size == 1:
            return a
        n = a.shape[dim] // tp_size
        return np.take(a, range(tp_rank * n, (tp_rank + 1) * n), axis=dim)

    class Block(torch.nn.Module):
        def __init__(self, p):
            super().__init__()
            self.ln1 = torch.nn.LayerNorm(hidden)
            self.ln2 = torch.nn.LayerNorm(hidden)
            with torch.no_grad():
                for ln in ("ln1", "ln2"):
                    getattr(self, ln).weight.copy_(torch.from_numpy(w[p + ln + ".weight"]))
                    getattr(self, ln).bias.copy_(torch.from_numpy(w[p + ln + ".bias"]))
            self.col = torch.nn.ParameterDict()
            for name in ("attn.q", "attn.k", "attn.v", "fc1"):
                self.col[name.replace(".", "_") + "_w"] = param(shard(w[p + name + ".weight"], 0))
                self.col[name.replace(".", "_") + "_b"] = param(shard(w[p + name + ".bias"], 0))
            self.o_w = param(shard(w[p + "attn.o.weight"], 1))
            self.o_b = param(w[p + "attn.o.bias"])
            self.fc2_w = param(shard(w[p + "fc2.weight"], 1))
            self.fc2_b = param(w[p + "fc2.bias"])

        def forward(self, x):
            b, s, _ = x.shape
            local_heads = heads // tp_size
            dh = hidden // heads
            a = self.ln1(x)
            if tp_size > 1:
                a = CopyToParallel.apply(a)
            q, k, v = (F.linear(a, self.col[n + "_w"], self.col[n + "_b"])
                       .view(b, s, local_heads, dh).transpose(1, 2)
                       for n in ("attn_q", "attn_k", "attn_v"))
            probs = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(dh), dim=-1)
            ctx = (probs @ v).transpose(1, 2).reshape(b, s, local_heads * dh)
            o = F.linear(ctx, self.o_w)
            if tp_size > 1:
                o = ReduceFromParallel.apply(o)
            h = x + o + self.o_b
            m = self.ln2(h)
            if tp_size > 1:
                m = CopyToParallel.apply(m)
            f = F.linear(F.gelu(F.linear(m, self.col["fc1_w"], self.col["fc1_b"])), self.fc2_w)
            if tp_size > 1:
                f = ReduceFromParallel.apply(f)
            return h + f + self.fc2_b

    return torch.nn.Sequential(*[Block(f"layers.{l}.") for l in range(layers)])


if __name__ == "__main__":
    # python3 bench/transformer.py out.onnx layers hidden heads ffn batch seq
    out, layers, hidden, heads, ffn, batch, seq = sys.argv[1], *map(int, sys.argv[2:8])
    w = weights(layers, hidden, ffn)
    write_onnx(out, w, layers, batch, seq, hidden, heads, os.path.dirname(os.path.abspath(out)))
