//===- Compare.h - tp-run's comparisons with references ---------*- C++ -*-===//
//
// --compare and --compare-grads (the largest difference against the largest
// reference value) and --test-data (numpy's assert_allclose per element,
// on the ONNX test case's tensors read here). Each prints one line per
// tensor.
//
//===----------------------------------------------------------------------===//
#ifndef TP_TOOLS_TP_RUN_COMPARE_H
#define TP_TOOLS_TP_RUN_COMPARE_H

#include "tprt/Npy.h"

#include <optional>
#include <string>
#include <vector>

namespace tprt {

/// Element `p` of a tensor of `dtype` as a double.
double toDouble(const char *p, int32_t dtype);

/// `got` against the .npy `file`: passes when max|got - ref| <=
/// absTolerance + tolerance * max|ref|. Nothing (with `error` set) when the
/// file cannot be read or has another shape.
std::optional<bool> compareWithFile(const std::string &name,
                                    const NpyArray &got,
                                    const std::string &file, double tolerance,
                                    double absTolerance, int numRanks,
                                    std::string &error);

/// numpy.testing.assert_allclose's rule per element (NaNs equal, infinities
/// equal when they are the same); true when it holds.
bool compareElementwise(const std::string &what, const NpyArray &got,
                        const NpyArray &ref, double tolerance,
                        double absTolerance);

/// The file name (without .npy) of a weight's gradient in --dump-grads /
/// --compare-grads folders: the initializer's name with '%' written %25 and
/// '/' written %2F (other exporters name weights like TensorFlow's
/// `sequential/dense/MatMul/ReadVariableOp:0`); and back.
std::string gradFileStem(const std::string &weight);
std::string weightOfGradFile(const std::string &stem);

/// "a, b, c": names in messages.
std::string joinNames(const std::vector<std::string> &names);

/// An ONNX test case's tensors <dir>/<prefix>_0.pb, _1.pb, ... in order,
/// each with the index in `names` (graph inputs or outputs) it stands for:
/// by its own name, else by its position (ONNX's graph order). Tensors
/// named in `skip` (inputs bound at compile time) are left out.
struct TestTensor {
  std::string file;
  size_t index;
  NpyArray data;
};
Status readTestTensors(const std::string &dir, const std::string &prefix,
                       const std::vector<std::string> &names,
                       std::vector<TestTensor> &out,
                       const std::vector<std::string> &skip = {});

} // namespace tprt

#endif // TP_TOOLS_TP_RUN_COMPARE_H
