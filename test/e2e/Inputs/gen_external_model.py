#!/usr/bin/python3
"""Writes, into the folder given as argv[1], an ONNX model whose weights live
in an external-data file (as large models are saved), plus an input and the
numpy reference output:

  model.pbtxt   ModelProto in protobuf text format (protoc --encode makes
                model.onnx of it); initializers fc.weight [8, 4] and fc.bias
                [8] point into weights.bin at their offsets
  weights.bin   the raw little-endian f32 data
  x.npy, y.npy  input [2, 4] and y = x @ fc.weight.T + fc.bias

--weight-location and --weight-offset replace fc.weight's location and
offset (external-data-confined.test: locations that lead out of the folder).
"""
import argparse
import os

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("--weight-location", default="weights.bin")
parser.add_argument("--weight-offset", default="0")
args = parser.parse_args()
out = args.out
rng = np.random.default_rng(3)
w = rng.standard_normal((8, 4)).astype(np.float32)
b = rng.standard_normal(8).astype(np.float32)
x = rng.standard_normal((2, 4)).astype(np.float32)
pad = np.zeros(5, dtype=np.float32)  # so that fc.bias does not start at w's end
with open(os.path.join(out, "weights.bin"), "wb") as f:
    f.write(w.tobytes())
    f.write(pad.tobytes())
    f.write(b.tobytes())
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "y.npy"), x @ w.T + b)


def initializer(name, dims, offset, length, location="weights.bin"):
    dims_text = " ".join(f"dims: {d}" for d in dims)
    location = location.replace("\\", "\\\\").replace('"', '\\"')
    return f"""
  initializer {{
    name: "{name}" {dims_text} data_type: 1 data_location: EXTERNAL
    external_data {{ key: "location" value: "{location}" }}
    external_data {{ key: "offset" value: "{offset}" }}
    external_data {{ key: "length" value: "{length}" }}
  }}"""


def value_info(kind, name, dims):
    shape = " ".join(f"dim {{ dim_value: {d} }}" for d in dims)
    return f"""
  {kind} {{ name: "{name}" type {{ tensor_type {{ elem_type: 1 shape {{ {shape} }} }} }} }}"""


text = f"""ir_version: 8
opset_import {{ domain: "" version: 13 }}
graph {{
  name: "external"
  node {{
    input: "x" input: "fc.weight" input: "fc.bias" output: "y" name: "/fc/Gemm" op_type: "Gemm"
    attribute {{ name: "transB" i: 1 type: INT }}
  }}{initializer("fc.weight", [8, 4], args.weight_offset, 128,
                                                args.weight_location)}{initializer("fc.bias", [8], 148, 32)}{value_info("input", "x", [2, 4])}{value_info("output", "y", [2, 8])}
}}
"""
with open(os.path.join(out, "model.pbtxt"), "w") as f:
    f.write(text)
