//===- WeightLoader.cpp - a rank's shards of the ONNX weights -------------===//
#include "tprt/WeightLoader.h"
#include "tprt/Blocks.h"
#include "tprt/DType.h"
#include "tprt/OnnxText.h"
#include "tprt/Sha256.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "onnx/onnx_pb.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include <malloc.h>

using namespace tprt;

Status tprt::sha256File(const std::string &path, std::string &hex) {
  if (!sha256OfFile(path, hex))
    return Status::error(path + ": cannot read the model file");
  return Status::ok();
}

namespace {

/// The tensor of a `Constant` node (`value` attribute), which other
/// exporters than torch use for weights (tp-compile reads it as one).
onnx::TensorProto *constantValue(onnx::NodeProto &node) {
  if (node.op_type() != "Constant" || node.output_size() != 1)
    return nullptr;
  for (int i = 0; i < node.attribute_size(); ++i)
    if (node.attribute(i).name() == "value" && node.attribute(i).has_t())
      return node.mutable_attribute(i)->mutable_t();
  return nullptr;
}

class OnnxWeights : public WeightSource {
public:
  onnx::ModelProto model;
  std::string path, dir;
  std::map<std::string, const onnx::TensorProto *> byName;
  bool released = false;

  void release() override {
    byName.clear();
    onnx::ModelProto().Swap(&model);
    released = true;
    // The freed weights lie in malloc's heap, which the step's large
    // buffers (mmap'd) would not reuse: give the pages back.
    malloc_trim(0);
  }

  Status loadBlock(const TensorSpec &t, const Mesh &mesh, int rank,
                   void *local) const override {
    auto it = byName.find(t.name);
    if (released)
      return Status::error("internal: weight '" + t.name +
                           "' read after the model was released");
    if (it == byName.end())
      return Status::error("weight '" + t.name +
                           "' is not an initializer or Constant of the model");
    const onnx::TensorProto &tensor = *it->second;
    size_t es = dtypeSize(t.dtype);
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
      std::string file;
      int64_t offset = 0;
      for (const auto &kv : tensor.external_data()) {
        if (kv.key() == "location")
          file = dir + "/" + kv.value();
        else if (kv.key() == "offset")
          offset = std::stoll(kv.value());
      }
      std::ifstream in(file, std::ios::binary);
      if (!in)
        return Status::error("weight '" + t.name + "': cannot open its "
                             "external data " + file);
      // Only this rank's block: one read per contiguous run.
      bool ok = true;
      forEachBlockRun(t, mesh, rank, [&](int64_t g, int64_t l, int64_t n) {
        in.seekg(offset + g * es);
        in.read(static_cast<char *>(local) + l * es, n * es);
        ok &= bool(in);
      });
      return ok ? Status::ok()
                : Status::error("weight '" + t.name + "': " + file +
                                " is shorter than the tensor");
    }
    std::string bytes;
    if (tensor.has_raw_data()) {
      bytes = tensor.raw_data();
    } else if (t.dtype == TPRT_F32 && tensor.float_data_size()) {
      bytes.assign(reinterpret_cast<const char *>(tensor.float_data().data()),
                   tensor.float_data_size() * 4);
    } else if (t.dtype == TPRT_F64 && tensor.double_data_size()) {
      bytes.assign(reinterpret_cast<const char *>(tensor.double_data().data()),
                   tensor.double_data_size() * 8);
    }
    if (int64_t(bytes.size()) != t.numElements() * int64_t(es))
      return Status::error("weight '" + t.name + "' holds " +
                           std::to_string(bytes.size()) + " bytes, expected " +
                           std::to_string(t.numElements() * es) + " for " +
                           t.shapeString() + " " + dtypeName(t.dtype));
    extractBlock(t, mesh, rank, bytes.data(), local, es);
    return Status::ok();
  }

  Status saveWithWeights(
      const std::string &path,
      const std::vector<std::pair<std::string, std::vector<char>>> &weights)
      const override {
    onnx::ModelProto copy;
    if (released) {
      std::unique_ptr<WeightSource> again;
      if (Status s = WeightSource::open(this->path, again); !s)
        return s;
      copy.Swap(&static_cast<OnnxWeights &>(*again).model);
    } else {
      copy = model;
    }
    auto store = [&](onnx::TensorProto &tensor, const std::string &name) {
      for (const auto &[weight, bytes] : weights) {
        if (weight != name)
          continue;
        tensor.clear_float_data();
        tensor.clear_double_data();
        tensor.clear_external_data();
        tensor.clear_data_location();
        tensor.set_raw_data(bytes.data(), bytes.size());
      }
    };
    for (auto &init : *copy.mutable_graph()->mutable_initializer())
      store(init, init.name());
    // Weights the exporter stored as Constant nodes stay Constant nodes.
    for (auto &node : *copy.mutable_graph()->mutable_node())
      if (onnx::TensorProto *value = constantValue(node))
        store(*value, node.output(0));
    std::ofstream out(path, std::ios::binary);
    if (!out || !copy.SerializeToOstream(&out))
      return Status::error(path + ": cannot write the trained model");
    return Status::ok();
  }
};

} // namespace

Status WeightSource::open(const std::string &path,
                          std::unique_ptr<WeightSource> &out) {
  auto weights = std::make_unique<OnnxWeights>();
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path + ": cannot read the ONNX model");
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  std::string error;
  bool parsed = looksLikeOnnxText(bytes)
                    ? parseOnnxText(bytes, weights->model, error)
                    : weights->model.ParseFromString(bytes);
  if (!parsed)
    return Status::error(path + ": cannot read the ONNX model");
  weights->path = path;
  size_t slash = path.rfind('/');
  weights->dir = slash == std::string::npos ? "." : path.substr(0, slash);
  for (const auto &init : weights->model.graph().initializer())
    weights->byName[init.name()] = &init;
  for (auto &node : *weights->model.mutable_graph()->mutable_node())
    if (const onnx::TensorProto *value = constantValue(node))
      weights->byName.emplace(node.output(0), value);
  out = std::move(weights);
  return Status::ok();
}
