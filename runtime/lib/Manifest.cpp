//===- Manifest.cpp - what a compiled program expects ---------------------===//
#include "tprt/Manifest.h"
#include "tprt/DType.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

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
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return Status::error(path + ": cannot read (is " + dir +
                         " a directory written by tp-compile -o?)");
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*buffer)->getBuffer());
  if (!parsed)
    return Status::error(path + ": " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  auto bad = [&](const std::string &what) {
    return Status::error(path + ": malformed manifest (" + what + ")");
  };
  if (!root || root->getString("format") != "tp-program/1")
    return bad("not a tp-program/1 manifest");
  m.dir = dir;
  m.target = root->getString("target").value_or("").str();
  m.library = root->getString("library").value_or("").str();
  m.entry = root->getString("entry").value_or("").str();
  if (const auto *model = root->getObject("model")) {
    m.modelPath = model->getString("path").value_or("").str();
    m.modelSha256 = model->getString("sha256").value_or("").str();
  }
  const auto *mesh = root->getObject("mesh");
  if (!mesh)
    return bad("no mesh");
  for (const auto &a : *mesh->getArray("axes"))
    m.mesh.names.push_back(a.getAsString().value_or("").str());
  for (const auto &s : *mesh->getArray("sizes"))
    m.mesh.sizes.push_back(s.getAsInteger().value_or(1));
  auto readTensors = [&](const char *key,
                         std::vector<TensorSpec> &out) -> Status {
    const auto *list = root->getArray(key);
    if (!list)
      return bad(std::string("no ") + key);
    for (const auto &v : *list) {
      const auto *o = v.getAsObject();
      TensorSpec t;
      t.name = o->getString("name").value_or("").str();
      t.kind = o->getString("kind").value_or("").str();
      t.torchName = o->getString("torch_name").value_or("").str();
      t.dtype = dtypeFromName(o->getString("dtype").value_or("").str());
      for (const auto &d : *o->getArray("shape"))
        t.shape.push_back(d.getAsInteger().value_or(0));
      for (const auto &d : *o->getArray("local_shape"))
        t.localShape.push_back(d.getAsInteger().value_or(0));
      for (const auto &dim : *o->getArray("sharding")) {
        t.sharding.emplace_back();
        for (const auto &axis : *dim.getAsArray()) {
          std::string name = axis.getAsString().value_or("").str();
          for (size_t a = 0; a < m.mesh.names.size(); ++a)
            if (m.mesh.names[a] == name)
              t.sharding.back().push_back(int(a));
        }
      }
      if (t.dtype < 0)
        return bad("tensor " + t.name + " has an unsupported dtype");
      out.push_back(std::move(t));
    }
    return Status::ok();
  };
  if (Status s = readTensors("arguments", m.arguments); !s)
    return s;
  if (Status s = readTensors("results", m.results); !s)
    return s;
  if (const auto *sites = root->getArray("collective_sites"))
    for (const auto &s : *sites)
      m.collectiveSites.push_back(s.getAsString().value_or("").str());
  if (const auto *masks = root->getArray("axis_masks"))
    for (const auto &v : *masks)
      m.axisMasks.push_back(v.getAsInteger().value_or(0));
  if (const auto *tied = root->getObject("tied_copies"))
    for (const auto &[copy, weight] : *tied)
      m.tiedCopies.emplace_back(copy.str(),
                                weight.getAsString().value_or("").str());
  return Status::ok();
}
