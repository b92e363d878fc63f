//===- UntieMerged.cpp - parameters the exporter merged, apart again ------===//
#include "tprt/UntieMerged.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <set>
#include <string>

using namespace tprt;

int tprt::untieMergedInitializers(
    onnx::ModelProto &model,
    const std::function<void(const onnx::TensorProto &, onnx::TensorProto &)>
        &copied) {
  onnx::GraphProto &graph = *model.mutable_graph();
  std::map<std::string, int> initializer;
  for (int i = 0; i < graph.initializer_size(); ++i)
    initializer[graph.initializer(i).name()] = i;
  std::set<std::string> graphOutputs;
  for (const auto &o : graph.output())
    graphOutputs.insert(o.name());
  // An Identity of an initializer is how torch.onnx.export records a
  // parameter it merged into another of equal value: its output is the
  // merged parameter's own name. It becomes that parameter again.
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  int copies = 0;
  for (onnx::NodeProto &node : *graph.mutable_node()) {
    auto source = node.op_type() == "Identity" && node.input_size() == 1 &&
                          node.output_size() == 1
                      ? initializer.find(node.input(0))
                      : initializer.end();
    if (source == initializer.end() || initializer.count(node.output(0)) ||
        graphOutputs.count(node.output(0))) {
      kept.Add()->Swap(&node);
      continue;
    }
    onnx::TensorProto *copy = graph.add_initializer();
    const onnx::TensorProto &original = graph.initializer(source->second);
    *copy = original;
    copy->set_name(node.output(0));
    if (copied)
      copied(original, *copy);
    initializer[copy->name()] = graph.initializer_size() - 1;
    ++copies;
  }
  graph.mutable_node()->Swap(&kept);
  return copies;
}
