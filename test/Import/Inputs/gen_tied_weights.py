#!/usr/bin/python3
"""Writes, into the folder given as argv[1], two ONNX models in protobuf text
format (protoc --encode makes the binary models of them) whose weights are
large enough (64 KiB) that tp-compile leaves their data in the file:

  tied.pbtxt    an embedding wte.weight [256, 64] gathered by ids, and an LM
                head reading onnx::MatMul_7 [64, 256], exactly its transpose
                (what torch.onnx.export's constant folding writes for a tied
                weight), plus a bias [256]
  untied.pbtxt  the same, with one element of the copy changed
"""
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
wte = rng.standard_normal((256, 64)).astype(np.float32)
bias = rng.standard_normal(256).astype(np.float32)


def text_bytes(a):
    return "".join(f"\\{b:03o}" for b in a.tobytes())


def initializer(name, a):
    dims = " ".join(f"dims: {d}" for d in a.shape)
    return f'  initializer {{ name: "{name}" {dims} data_type: 1 raw_data: "{text_bytes(a)}" }}\n'


def model(copy):
    return ('ir_version: 8\nopset_import { domain: "" version: 17 }\ngraph {\n'
            '  name: "lm"\n'
            '  node { input: "wte.weight" input: "ids" output: "h" name: "/wte/Gather" op_type: "Gather" }\n'
            '  node { input: "h" input: "onnx::MatMul_7" output: "p" name: "/lm_head/MatMul" op_type: "MatMul" }\n'
            '  node { input: "p" input: "lm_head.bias" output: "logits" name: "/lm_head/Add" op_type: "Add" }\n'
            + initializer("wte.weight", wte) + initializer("onnx::MatMul_7", copy)
            + initializer("lm_head.bias", bias) +
            '  input { name: "ids" type { tensor_type { elem_type: 7 shape { dim { dim_value: 4 } } } } }\n'
            '  output { name: "logits" type { tensor_type { elem_type: 1 shape { dim { dim_value: 4 } dim { dim_value: 256 } } } } }\n'
            '}\n')


untied = np.ascontiguousarray(wte.T).copy()
untied[3, 5] += 1.0
for name, copy in (("tied", np.ascontiguousarray(wte.T)), ("untied", untied)):
    with open(os.path.join(out, f"{name}.pbtxt"), "w") as f:
        f.write(model(copy))
