"""Writes malformed .npy files into the folder given (for npy-errors.test)."""
import os
import sys

out = sys.argv[1]


def npy(name, header, data=b"", header_len=None):
    header = header + " " * (118 - len(header)) + "\n"
    length = len(header) if header_len is None else header_len
    with open(os.path.join(out, name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + length.to_bytes(2, "little") +
                header.encode() + data)


def header(shape, descr="<f4"):
    return "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)


npy("huge_dim.npy", header("(8, 99999999999999999999)"))
npy("claims_256g.npy", header("(8, 64000000000)"), b"\0" * 4000)
npy("overflow.npy", header("(4000000000000, 4000000000000, 4000000000000)"))
npy("negative.npy", header("(8, -1)"), b"\0" * 4000)
npy("no_shape.npy", "{'descr': '<f4', 'fortran_order': False, }", b"\0" * 4000)
npy("no_descr.npy", "{'fortran_order': False, 'shape': (8, 64), }", b"\0" * 4000)
npy("cut_header.npy", header("(8, 64)"), header_len=60000)
npy("cut_data.npy", header("(8, 64)"), b"\0" * 2000)
npy("complex.npy", header("(8, 64)", "<c8"), b"\0" * 4096)
