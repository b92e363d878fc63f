//===- Manifest.cpp - what a compiled program expects ---------------------===//
#include "tprt/Manifest.h"
#include "tprt/DType.h"

#include "llvm/Support/JSON.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>

using namespace tprt;

int64_t TensorSpec::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t TensorSpec::localElements() const {
  int64_t n = 1;
  for (int64_t d : localShape)
    n *= d;
  return n;
}

std::string TensorSpec::shapeString() const { return formatShape(shape); }

std::vector<int64_t> TensorSpec::blockOf(const Mesh &mesh, int rank) const {
  std::vector<int64_t> coords = mesh.coords(rank), block;
  for (const auto &axes : sharding) {
    int64_t idx = 0;
    for (int a : axes)
      idx = idx * mesh.sizes[a] + coords[a];
    block.push_back(idx);
  }
  return block;
}

Status Manifest::load(const std::string &dir, Manifest &m) {
  std::string path = dir + "/manifest.json";
  if (llvm::sys::fs::is_regular_file(dir))
    return Status::error(dir + " is a file, not a program folder (tp-compile -o "
                               "out/ writes program.so and manifest.json "
                               "into the folder out)");
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return Status::error(path + ": cannot read (is " + dir +
                         " a directory written by tp-compile -o?)");
  m.sha256 = llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(
                             (*buffer)->getBuffer())),
                         /*LowerCase=*/true);
  return parse(path, (*buffer)->getBuffer().str(), dir, m);
}

namespace {
/// Reads manifest.json's fields, checking every type and size on the way:
/// the file is input, and a wrong size would index out of a buffer later.
class ManifestParser {
public:
  ManifestParser(const std::string &path, Manifest &m) : path(path), m(m) {}

  Status parse(const llvm::json::Object &root);

private:
  Status bad(const std::string &what) const {
    return Status::error(path + ": malformed manifest (" + what + ")");
  }
  static bool isSize(const llvm::json::Value &v, int64_t max) {
    std::optional<int64_t> i = v.getAsInteger();
    return i && *i >= 0 && *i <= max;
  }
  Status readSizes(const llvm::json::Object &o, llvm::StringRef key,
                   const std::string &what, std::vector<int64_t> &out) const;
  Status readTensor(const llvm::json::Value &v, TensorSpec &t) const;
  Status readTensors(const llvm::json::Object &root, const char *key,
                     std::vector<TensorSpec> &out) const;

  const std::string &path;
  Manifest &m;
};
} // namespace

// Dims and element counts stay far below what int64 products overflow at.
static constexpr int64_t kMaxElements = int64_t(1) << 48;

Status ManifestParser::readSizes(const llvm::json::Object &o,
                                 llvm::StringRef key, const std::string &what,
                                 std::vector<int64_t> &out) const {
  const llvm::json::Array *list = o.getArray(key);
  if (!list)
    return bad(what + " has no " + key.str() + " list");
  int64_t product = 1;
  for (const llvm::json::Value &d : *list) {
    if (!isSize(d, kMaxElements))
      return bad(what + " has a " + key.str() + " entry that is not a size");
    out.push_back(*d.getAsInteger());
    product *= std::max<int64_t>(out.back(), 1);
    if (product > kMaxElements)
      return bad(what + " has more elements than a tensor can");
  }
  return Status::ok();
}

Status ManifestParser::readTensor(const llvm::json::Value &v,
                                  TensorSpec &t) const {
  const llvm::json::Object *o = v.getAsObject();
  if (!o || !o->getString("name"))
    return bad("a tensor entry without a name");
  t.name = o->getString("name")->str();
  std::string what = "tensor '" + t.name + "'";
  t.kind = o->getString("kind").value_or("").str();
  t.torchName = o->getString("torch_name").value_or("").str();
  if (const llvm::json::Array *names = o->getArray("torch_names"))
    for (const llvm::json::Value &n : *names) {
      if (!n.getAsString())
        return bad(what + ": torch_names holds a non-string");
      t.torchNames.push_back(n.getAsString()->str());
    }
  t.torchTransposed = o->getBoolean("torch_transposed").value_or(false);
  t.inPlace = o->getBoolean("in_place").value_or(false);
  t.stage = int(o->getInteger("stage").value_or(-1));
  if (const llvm::json::Array *list = o->getArray("stages"))
    for (const llvm::json::Value &v : *list) {
      std::optional<int64_t> s = v.getAsInteger();
      if (!s || *s < 0)
        return bad(what + ": stages holds a value that is no stage");
      t.stages.push_back(*s);
    }
  t.dtype = dtypeFromName(o->getString("dtype").value_or("").str());
  if (t.dtype < 0)
    return bad(what + " has an unsupported dtype");
  if (Status s = readSizes(*o, "shape", what, t.shape); !s)
    return s;
  if (Status s = readSizes(*o, "local_shape", what, t.localShape); !s)
    return s;
  if (o->get("onnx_shape")) {
    if (Status s = readSizes(*o, "onnx_shape", what, t.onnxShape); !s)
      return s;
    int64_t n = 1;
    for (int64_t d : t.onnxShape)
      n *= d;
    if (n != t.numElements())
      return bad(what + ": onnx_shape " + formatShape(t.onnxShape) +
                 " does not hold the elements of shape " +
                 formatShape(t.shape));
  }
  const llvm::json::Array *sharding = o->getArray("sharding");
  if (!sharding || sharding->size() != t.shape.size() ||
      t.localShape.size() != t.shape.size())
    return bad(what + ": shape, local_shape and sharding differ in rank");
  for (size_t d = 0; d < t.shape.size(); ++d) {
    const llvm::json::Array *axes = (*sharding)[d].getAsArray();
    if (!axes)
      return bad(what + ": sharding entry " + std::to_string(d) +
                 " is not a list of mesh axes");
    t.sharding.emplace_back();
    int64_t blocks = 1;
    for (const llvm::json::Value &axis : *axes) {
      std::string name = axis.getAsString().value_or("").str();
      auto it = std::find(m.mesh.names.begin(), m.mesh.names.end(), name);
      if (it == m.mesh.names.end())
        return bad(what + " is split over '" + name +
                   "', which is not a mesh axis");
      int a = int(it - m.mesh.names.begin());
      if (llvm::is_contained(t.sharding.back(), a))
        return bad(what + " is split twice over '" + name + "'");
      t.sharding.back().push_back(a);
      blocks *= m.mesh.sizes[a];
    }
    // torch.chunk's blocks: ceil(shape / blocks), the last ones padded.
    if (t.localShape[d] != (t.shape[d] + blocks - 1) / blocks)
      return bad(what + ": local_shape " + formatShape(t.localShape) +
                 " is not shape " + formatShape(t.shape) +
                 " split as its sharding says");
  }
  return Status::ok();
}

Status ManifestParser::readTensors(const llvm::json::Object &root,
                                   const char *key,
                                   std::vector<TensorSpec> &out) const {
  const llvm::json::Array *list = root.getArray(key);
  if (!list)
    return bad(std::string("no ") + key);
  for (const llvm::json::Value &v : *list) {
    TensorSpec t;
    if (Status s = readTensor(v, t); !s)
      return s;
    out.push_back(std::move(t));
  }
  return Status::ok();
}

Status ManifestParser::parse(const llvm::json::Object &root) {
  if (root.getString("format") != "tp-program/1")
    return bad("not a tp-program/1 manifest");
  m.target = root.getString("target").value_or("").str();
  m.library = root.getString("library").value_or("").str();
  m.entry = root.getString("entry").value_or("").str();
  // The library is a file of the program folder, never a path elsewhere.
  if (m.library.empty() || m.library.find('/') != std::string::npos ||
      m.library == "." || m.library == "..")
    return bad("'library' must name a file of the program folder");
  if (const llvm::json::Object *model = root.getObject("model")) {
    m.modelPath = model->getString("path").value_or("").str();
    m.modelSha256 = model->getString("sha256").value_or("").str();
    m.untieMerged = model->getBoolean("untie_merged").value_or(false);
  }
  const llvm::json::Object *mesh = root.getObject("mesh");
  const llvm::json::Array *axes = mesh ? mesh->getArray("axes") : nullptr;
  const llvm::json::Array *sizes = mesh ? mesh->getArray("sizes") : nullptr;
  if (!axes || !sizes || axes->size() != sizes->size() || axes->empty() ||
      axes->size() > 16)
    return bad("the mesh needs 1 to 16 axes, each with a size");
  int64_t devices = 1;
  for (size_t a = 0; a < axes->size(); ++a) {
    std::optional<llvm::StringRef> name = (*axes)[a].getAsString();
    std::optional<int64_t> size = (*sizes)[a].getAsInteger();
    if (!name || name->empty() || !size || *size < 1 ||
        (devices *= *size) > 65536)
      return bad("mesh axis " + std::to_string(a) +
                 " needs a name and a size, 65536 devices at most");
    m.mesh.names.push_back(name->str());
    m.mesh.sizes.push_back(*size);
  }
  if (Status s = readTensors(root, "arguments", m.arguments); !s)
    return s;
  if (Status s = readTensors(root, "results", m.results); !s)
    return s;
  auto strings = [&](const char *key, std::vector<std::string> &out) {
    if (const llvm::json::Array *a = root.getArray(key))
      for (const llvm::json::Value &s : *a)
        out.push_back(s.getAsString().value_or("").str());
  };
  auto integers = [&](const char *key, std::vector<int64_t> &out) {
    if (const llvm::json::Array *a = root.getArray(key))
      for (const llvm::json::Value &v : *a)
        out.push_back(v.getAsInteger().value_or(-1));
  };
  strings("collective_sites", m.collectiveSites);
  strings("kernel_sites", m.kernelSites);
  strings("kernel_phases", m.kernelPhases);
  strings("kernel_families", m.kernelFamilies);
  strings("collective_phases", m.collectivePhases);
  integers("kernel_microbatches", m.kernelMicrobatches);
  integers("collective_microbatches", m.collectiveMicrobatches);
  if (const llvm::json::Array *masks = root.getArray("axis_masks"))
    for (const llvm::json::Value &v : *masks) {
      std::optional<int64_t> mask = v.getAsInteger();
      if (!mask || *mask < 0 || *mask >= (int64_t(1) << m.mesh.names.size()))
        return bad("an axis mask names axes the mesh does not have");
      m.axisMasks.push_back(*mask);
    }
  if (const llvm::json::Array *bound = root.getArray("constant_inputs"))
    for (const llvm::json::Value &v : *bound) {
      std::optional<llvm::StringRef> name = v.getAsString();
      if (!name || name->empty())
        return bad("constant_inputs must list graph input names");
      m.constantInputs.push_back(name->str());
    }
  if (const llvm::json::Object *tied = root.getObject("tied_copies"))
    for (const auto &[copy, weight] : *tied)
      m.tiedCopies.emplace_back(copy.str(),
                                weight.getAsString().value_or("").str());
  for (size_t r = 0; r < m.results.size(); ++r) {
    if (!m.results[r].inPlace)
      continue;
    int a = m.inPlaceArgument(r);
    if (a < 0 || m.arguments[a].localShape != m.results[r].localShape ||
        m.arguments[a].dtype != m.results[r].dtype)
      return bad("result '" + m.results[r].name +
                 "' is in_place but no weight or state argument of its name, "
                 "local shape and dtype takes its buffer");
  }
  if (const llvm::json::Object *pipeline = root.getObject("pipeline")) {
    std::string axis = pipeline->getString("axis").value_or("").str();
    auto it = std::find(m.mesh.names.begin(), m.mesh.names.end(), axis);
    if (it == m.mesh.names.end())
      return bad("pipeline axis '" + axis + "' is not a mesh axis");
    m.stageAxis = int(it - m.mesh.names.begin());
    m.microbatches = pipeline->getInteger("microbatches").value_or(1);
    m.schedule = pipeline->getString("schedule").value_or("").str();
    m.stageBuffersOnly =
        pipeline->getBoolean("stage_buffers_only").value_or(false);
    for (auto [key, into] :
         {std::pair<const char *, std::vector<int64_t> *>{
              "peak_temporary_bytes", &m.stagePeakBytes},
          {"kept_bytes_per_microbatch", &m.stageKeptBytes}})
      if (const llvm::json::Array *list = pipeline->getArray(key))
        for (const llvm::json::Value &v : *list)
          into->push_back(v.getAsInteger().value_or(-1));
  }
  for (const std::vector<TensorSpec> *list : {&m.arguments, &m.results})
    for (const TensorSpec &t : *list) {
      int64_t most = std::max<int64_t>(
          t.stage, t.stages.empty() ? -1 : *std::max_element(t.stages.begin(),
                                                              t.stages.end()));
      if (most >= 0 &&
          (m.stageAxis < 0 || most >= m.mesh.sizes[m.stageAxis]))
        return bad("'" + t.name + "' names stage " + std::to_string(most) +
                   " of no pipeline stage axis");
    }
  if (const llvm::json::Value *peak = root.get("peak_temporary_bytes")) {
    std::optional<int64_t> bytes = peak->getAsInteger();
    if (!bytes || *bytes < 0)
      return bad("peak_temporary_bytes must be a byte count");
    m.peakTemporaryBytes = *bytes;
  }
  return Status::ok();
}

int Manifest::inPlaceArgument(size_t r) const {
  if (!results[r].inPlace)
    return -1;
  for (size_t a = 0; a < arguments.size(); ++a)
    if ((arguments[a].kind == "param" || arguments[a].kind == "state") &&
        arguments[a].name == results[r].name)
      return int(a);
  return -1;
}

Status Manifest::parse(const std::string &path, const std::string &text,
                       const std::string &dir, Manifest &m) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return Status::error(path + ": " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return Status::error(path + ": malformed manifest (not a JSON object)");
  m.dir = dir;
  return ManifestParser(path, m).parse(*root);
}
