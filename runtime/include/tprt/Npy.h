//===- Npy.h - numpy .npy files --------------------------------*- C++ -*-===//
#ifndef TPRT_NPY_H
#define TPRT_NPY_H

#include "tprt/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tprt {

struct NpyArray {
  int32_t dtype = -1; // TPRT_* code
  std::vector<int64_t> shape;
  std::vector<char> data;
  std::string shapeString() const;
};

/// Reads a C-order .npy file of f32, f64, f16, i64, i32, i16, i8 or bool.
Status readNpy(const std::string &path, NpyArray &out);
/// The header dict of a .npy file: dtype and shape into `out` (no data),
/// the element count into `elements`. `what` names the file in messages.
Status parseNpyHeader(const std::string &what, const std::string &header,
                      NpyArray &out, int64_t &elements);
Status writeNpy(const std::string &path, const NpyArray &array);

} // namespace tprt

#endif // TPRT_NPY_H
