//===- OnnxConstantWeights.cpp - weights stored as Constant nodes ---------===//
//
// torch.onnx.export stores parameters as initializers, but other exporters
// (tf2onnx, paddle2onnx, hand-written graphs) store a weight as a `Constant`
// node. Imported as a constant, such a weight could not be split by a plan
// nor trained. A float Constant is a weight when it is read where a layer
// reads its parameters (directly or through a Transpose): a MatMul's right
// operand, Gemm's B and C, Conv's / ConvTranspose's filter and bias, an
// embedding table (Gather's data), a normalization's scale, bias and
// statistics, PRelu's slope, or a bias added to a MatMul / Gemm / Conv
// result. Such Constants become initializers of the same name, in memory
// only: tp-run reads and --save writes them back in their Constant nodes.
//
//===----------------------------------------------------------------------===//
#include "OnnxModelLoader.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// The input positions of each op type that hold a layer's parameters.
bool isParameterInput(const onnx::NodeProto &node, int i) {
  const std::string &op = node.op_type();
  if (op == "MatMul")
    return i == 1;
  if (op == "Gemm")
    return i == 1 || i == 2;
  if (op == "Conv" || op == "ConvTranspose")
    return i == 1 || i == 2;
  if (op == "Gather")
    return i == 0;
  if (op == "BatchNormalization" || op == "LayerNormalization" ||
      op == "InstanceNormalization")
    return i >= 1;
  if (op == "PRelu")
    return i == 1;
  return false;
}

bool isContraction(const onnx::NodeProto *node) {
  return node && (node->op_type() == "MatMul" || node->op_type() == "Gemm" ||
                  node->op_type() == "Conv" ||
                  node->op_type() == "ConvTranspose");
}

/// A Constant node's `value` if it is a float tensor of rank 1 or more.
const onnx::TensorProto *floatTensorValue(const onnx::NodeProto &node) {
  if (node.op_type() != "Constant" || node.output_size() != 1)
    return nullptr;
  for (const auto &a : node.attribute())
    if (a.name() == "value" && a.has_t() && a.t().dims_size() > 0 &&
        (a.t().data_type() == onnx::TensorProto::FLOAT ||
         a.t().data_type() == onnx::TensorProto::DOUBLE ||
         a.t().data_type() == onnx::TensorProto::FLOAT16 ||
         a.t().data_type() == onnx::TensorProto::BFLOAT16))
      return &a.t();
  return nullptr;
}

} // namespace

void tp::promoteConstantWeights(onnx::GraphProto &graph) {
  llvm::StringMap<const onnx::NodeProto *> producer;
  for (const auto &node : graph.node())
    for (const auto &out : node.output())
      producer[out] = &node;
  llvm::StringSet<> outputs, weights;
  for (const auto &out : graph.output())
    outputs.insert(out.name());

  // Looks through Transposes back to the Constant that feeds them.
  auto constantBehind = [&](const std::string &name) -> const onnx::NodeProto * {
    const onnx::NodeProto *def = producer.lookup(name);
    while (def && def->op_type() == "Transpose" && def->input_size() == 1)
      def = producer.lookup(def->input(0));
    return def && floatTensorValue(*def) ? def : nullptr;
  };
  for (const auto &node : graph.node()) {
    for (int i = 0; i < node.input_size(); ++i) {
      bool parameter = isParameterInput(node, i);
      // A bias: the other operand of an Add is a layer's result.
      if (node.op_type() == "Add" && node.input_size() == 2)
        parameter = isContraction(producer.lookup(node.input(1 - i)));
      if (!parameter)
        continue;
      if (const onnx::NodeProto *c = constantBehind(node.input(i)))
        if (!outputs.contains(c->output(0)))
          weights.insert(c->output(0));
    }
  }
  if (weights.empty())
    return;

  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (auto &node : *graph.mutable_node()) {
    if (node.op_type() == "Constant" && node.output_size() == 1 &&
        weights.contains(node.output(0))) {
      onnx::TensorProto *init = graph.add_initializer();
      *init = *floatTensorValue(node);
      init->set_name(node.output(0));
      continue;
    }
    *kept.Add() = std::move(node);
  }
  graph.mutable_node()->Swap(&kept);
}
