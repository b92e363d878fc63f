//===- WeightLoader.cpp - a rank's shards of the ONNX weights -------------===//
#include "tprt/WeightLoader.h"
#include "tprt/AtomicFile.h"
#include "tprt/Blocks.h"
#include "tprt/DType.h"
#include "tprt/ExternalData.h"
#include "tprt/OnnxText.h"
#include "tprt/Paths.h"
#include "tprt/UntieMerged.h"
#include "tprt/Sha256.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "onnx/onnx_pb.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string_view>

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
  bool released = false, untieMerged = false;

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
    if (t.dtype == TPRT_BF16 &&
        tensor.data_type() == onnx::TensorProto::FLOAT) {
      // A bf16 program's weight (tp-compile --precision bf16, forward
      // only) from an f32 initializer: rounded as it is loaded.
      TensorSpec f32 = t;
      f32.dtype = TPRT_F32;
      std::vector<float> block(t.localElements());
      if (Status s = loadBlock(f32, mesh, rank, block.data()); !s)
        return s;
      auto *out = static_cast<uint16_t *>(local);
      for (size_t i = 0; i < block.size(); ++i)
        out[i] = floatToBf16(block[i]);
      return Status::ok();
    }
    size_t es = dtypeSize(t.dtype);
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
      ExternalDataRange range;
      if (Status s = resolveExternalData(tensor, dir, t.numElements() * es,
                                         range);
          !s)
        return s;
      std::ifstream in(range.path, std::ios::binary);
      if (!in)
        return Status::error("weight '" + t.name + "': cannot open its "
                             "external data " + range.path);
      // Only this rank's block: one read per contiguous run.
      bool ok = true;
      forEachBlockRun(t, mesh, rank, [&](int64_t g, int64_t l, int64_t n) {
        in.seekg(int64_t(range.offset) + g * es);
        in.read(static_cast<char *>(local) + l * es, n * es);
        ok &= bool(in);
      });
      return ok ? Status::ok()
                : Status::error("weight '" + t.name + "': " + range.path +
                                " is shorter than the tensor");
    }
    // A view of the tensor's data: each rank copies out only its block.
    std::string_view bytes;
    if (tensor.has_raw_data()) {
      bytes = tensor.raw_data();
    } else if (t.dtype == TPRT_F32 && tensor.float_data_size()) {
      bytes = std::string_view(
          reinterpret_cast<const char *>(tensor.float_data().data()),
          tensor.float_data_size() * 4);
    } else if (t.dtype == TPRT_F64 && tensor.double_data_size()) {
      bytes = std::string_view(
          reinterpret_cast<const char *>(tensor.double_data().data()),
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
      if (Status s = WeightSource::open(this->path, again, untieMerged); !s)
        return s;
      copy.Swap(&static_cast<OnnxWeights &>(*again).model);
    } else {
      copy = model;
    }
    std::map<std::string, const std::vector<char> *> trained;
    for (const auto &[weight, bytes] : weights)
      trained[weight] = &bytes;
    // Every tensor that holds weights: initializers, and the Constant nodes
    // other exporters store them in (they stay Constant nodes).
    std::vector<std::pair<onnx::TensorProto *, std::string>> tensors;
    for (auto &init : *copy.mutable_graph()->mutable_initializer())
      tensors.emplace_back(&init, init.name());
    for (auto &node : *copy.mutable_graph()->mutable_node())
      if (onnx::TensorProto *value = constantValue(node))
        tensors.emplace_back(value, node.output(0));
    bool hadExternal = false;
    uint64_t inlineBytes = 0;
    for (auto &[tensor, name] : tensors) {
      hadExternal |= tensor->data_location() == onnx::TensorProto::EXTERNAL;
      auto it = trained.find(name);
      inlineBytes += it != trained.end() ? it->second->size()
                                         : tensor->ByteSizeLong();
    }
    bool external = hadExternal || inlineBytes > saveInlineLimit();
    AtomicFile data;
    std::string dataName;
    if (external) {
      // One file beside the model, as onnx's save_model with
      // save_as_external_data writes it.
      dataName = fileNameOf(path) + ".data";
      if (Status s = data.open(folderOf(path) + "/" + dataName); !s)
        return s;
    }
    uint64_t offset = 0;
    for (auto &[tensor, name] : tensors) {
      auto it = trained.find(name);
      // What the tensor will hold: a view of the trained bytes or of its
      // own, not a copy (a deep model's weights are gigabytes).
      std::string fromFile, ownBytes;
      std::string_view bytes;
      if (it != trained.end()) {
        bytes = std::string_view(it->second->data(), it->second->size());
      } else if (tensor->data_location() == onnx::TensorProto::EXTERNAL) {
        // Copied from this model's external data into the new file.
        if (Status s = readExternal(*tensor, fromFile); !s)
          return s;
        bytes = fromFile;
      } else if (!external || !tensor->has_raw_data() ||
                 tensor->raw_data().size() < kExternalMinBytes) {
        continue; // kept as it is, inline
      } else {
        // Moved out of the tensor, which keeps it no longer.
        ownBytes = std::move(*tensor->mutable_raw_data());
        bytes = ownBytes;
      }
      tensor->clear_float_data();
      tensor->clear_double_data();
      tensor->clear_int32_data();
      tensor->clear_int64_data();
      tensor->clear_external_data();
      tensor->clear_data_location();
      if (!external || bytes.size() < kExternalMinBytes) {
        tensor->set_raw_data(bytes.data(), bytes.size());
        continue;
      }
      tensor->clear_raw_data();
      tensor->set_data_location(onnx::TensorProto::EXTERNAL);
      auto entry = [&](const char *key, const std::string &value) {
        auto *kv = tensor->add_external_data();
        kv->set_key(key);
        kv->set_value(value);
      };
      entry("location", dataName);
      entry("offset", std::to_string(offset));
      entry("length", std::to_string(bytes.size()));
      data.write(bytes.data(), bytes.size());
      offset += bytes.size();
    }
    if (!external && copy.ByteSizeLong() > uint64_t(INT32_MAX))
      return Status::error(path + ": the trained model is over protobuf's 2 "
                           "GiB limit");
    // The data file first: until the model is renamed over its name, the
    // previous model reads the previous data, or (saving over itself) the
    // same tensors at the same offsets.
    if (external)
      if (Status s = data.commit(); !s)
        return s;
    AtomicFile out;
    if (Status s = out.open(path); !s)
      return s;
    {
      google::protobuf::io::FileOutputStream stream(out.fd());
      if (!copy.SerializeToZeroCopyStream(&stream) || !stream.Flush())
        out.fail(stream.GetErrno());
      stream.SetCloseOnDelete(false);
    }
    return out.commit();
  }

private:
  /// Below this size a tensor stays inline (onnx's size_threshold).
  static constexpr size_t kExternalMinBytes = 1024;

  /// The size past which a saved model keeps its weights in a data file:
  /// protobuf's 2 GiB; TP_SAVE_INLINE_LIMIT lowers it for tests.
  static uint64_t saveInlineLimit() {
    if (const char *env = std::getenv("TP_SAVE_INLINE_LIMIT"))
      return std::strtoull(env, nullptr, 10);
    return uint64_t(INT32_MAX) - (uint64_t(64) << 20);
  }

  /// The whole of an external tensor of this model, read from its folder.
  Status readExternal(const onnx::TensorProto &tensor,
                      std::string &bytes) const {
    uint64_t size;
    if (!onnxTensorBytes(tensor, size))
      return Status::error("weight '" + tensor.name() +
                           "': external data of no fixed size");
    ExternalDataRange range;
    if (Status s = resolveExternalData(tensor, dir, size, range); !s)
      return s;
    std::ifstream in(range.path, std::ios::binary);
    bytes.resize(range.length);
    in.seekg(int64_t(range.offset));
    in.read(bytes.data(), int64_t(bytes.size()));
    return in ? Status::ok()
              : Status::error("weight '" + tensor.name() + "': cannot read " +
                              range.path);
  }
};

} // namespace

Status WeightSource::open(const std::string &path,
                          std::unique_ptr<WeightSource> &out,
                          bool untieMerged) {
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
  weights->untieMerged = untieMerged;
  if (untieMerged)
    untieMergedInitializers(weights->model);
  weights->dir = folderOf(path);
  for (const auto &init : weights->model.graph().initializer())
    weights->byName[init.name()] = &init;
  for (auto &node : *weights->model.mutable_graph()->mutable_node())
    if (const onnx::TensorProto *value = constantValue(node))
      weights->byName.emplace(node.output(0), value);
  out = std::move(weights);
  return Status::ok();
}
