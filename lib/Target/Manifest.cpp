//===- Manifest.cpp - describe a program for tp-run -----------------------===//
#include "Manifest.h"
#include "tp/Sharding/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::tp;

static std::string dtypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF64())
    return "f64";
  if (t.isInteger(64))
    return "i64";
  if (t.isInteger(32))
    return "i32";
  if (t.isInteger(1))
    return "i1";
  if (t.isInteger(8))
    return "i8";
  if (t.isInteger(16))
    return "i16";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

std::vector<TensorInfo> tp::describeSignature(func::FuncOp func) {
  std::vector<TensorInfo> infos;
  auto add = [&](DictionaryAttr attrs, Type type, StringRef fallbackKind,
                 unsigned index) {
    TensorInfo info;
    auto t = cast<RankedTensorType>(type);
    info.shape.assign(t.getShape().begin(), t.getShape().end());
    info.dtype = dtypeName(t.getElementType());
    for (StringRef kind : {"input", "param", "state", "output"})
      if (auto name = attrs ? attrs.getAs<StringAttr>(("tp." + kind).str())
                            : StringAttr()) {
        info.name = name.str();
        info.kind = kind.str();
      }
    if (auto torch = attrs ? attrs.getAs<ArrayAttr>("tp.torch_names")
                           : ArrayAttr();
        torch && !torch.empty()) {
      info.torchName = cast<StringAttr>(torch[0]).str();
      for (Attribute name : torch)
        info.torchNames.push_back(cast<StringAttr>(name).str());
      info.torchTransposed = attrs.contains("tp.stored_transposed");
    }
    if (info.kind.empty()) {
      info.kind = fallbackKind.str();
      info.name = fallbackKind.str() + std::to_string(index);
    }
    infos.push_back(info);
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    add(func.getArgAttrDict(i), func.getArgumentTypes()[i], "input", i);
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    add(func.getResultAttrDict(i), func.getResultTypes()[i], "output", i);
  // A weight read as a view keeps its ONNX dims, and so do its gradient
  // (grad_<name>) and its update (named as the weight).
  llvm::StringMap<SmallVector<int64_t>> onnxShapes;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto dims = func.getArgAttrOfType<DenseI64ArrayAttr>(i, "tp.onnx_shape"))
      onnxShapes[infos[i].name].assign(dims.asArrayRef().begin(),
                                       dims.asArrayRef().end());
  for (TensorInfo &info : infos) {
    StringRef name = info.name;
    name.consume_front("grad_");
    if (auto it = onnxShapes.find(name); it != onnxShapes.end())
      info.onnxShape = it->second;
  }
  return infos;
}

/// The mesh axes of each dim of a tensor of rank `rank` laid out as `attr`
/// (replicated without one).
static SmallVector<SmallVector<std::string, 1>> shardingAxes(Attribute attr,
                                                             int64_t rank) {
  SmallVector<SmallVector<std::string, 1>> dims(rank);
  if (auto s = dyn_cast_if_present<ShardingAttr>(attr))
    for (int64_t d = 0; d < rank; ++d)
      for (Attribute a : cast<ArrayAttr>(s.getDims()[d]))
        dims[d].push_back(cast<StringAttr>(a).str());
  return dims;
}

int64_t ManifestEntry::localBytes() const {
  int64_t n = 1;
  for (int64_t d : localShape)
    n *= d;
  StringRef dtype = global.dtype;
  int64_t size = 4;
  if (dtype == "f64" || dtype == "i64")
    size = 8;
  else if (dtype == "f16" || dtype == "bf16" || dtype == "i16")
    size = 2;
  else if (dtype == "i1" || dtype == "i8")
    size = 1;
  return n * size;
}

/// An entry as a JSON object, its keys in llvm::json's (sorted) order.
static void writeEntry(llvm::json::OStream &os, const ManifestEntry &e) {
  const TensorInfo &info = e.global;
  auto ints = [&](StringRef key, ArrayRef<int64_t> values) {
    os.attributeArray(key, [&] {
      for (int64_t v : values)
        os.value(v);
    });
  };
  os.object([&] {
    os.attribute("dtype", info.dtype);
    if (e.inPlace)
      os.attribute("in_place", true);
    os.attribute("kind", info.kind);
    ints("local_shape", e.localShape);
    os.attribute("name", info.name);
    if (!info.onnxShape.empty())
      ints("onnx_shape", info.onnxShape);
    ints("shape", info.shape);
    os.attributeArray("sharding", [&] {
      for (const auto &axes : e.sharding)
        os.array([&] {
          for (const std::string &axis : axes)
            os.value(axis);
        });
    });
    if (e.stage)
      os.attribute("stage", *e.stage);
    if (!e.stages.empty())
      ints("stages", e.stages);
    // The Python package's state_dict(): PyTorch's names and layout.
    if (!info.torchName.empty() && info.torchName != info.name)
      os.attribute("torch_name", info.torchName);
    if (info.torchNames.size() > 1)
      os.attributeArray("torch_names", [&] {
        for (const std::string &name : info.torchNames)
          os.value(name);
      });
    if (info.torchTransposed)
      os.attribute("torch_transposed", true);
  });
}

std::string Manifest::render() const {
  std::string text;
  llvm::raw_string_ostream out(text);
  llvm::json::OStream os(out, /*IndentSize=*/2);
  // The fields and the two entry arrays, in one sorted order.
  SmallVector<StringRef> keys = {"arguments", "results"};
  for (const auto &field : fields)
    keys.push_back(field.first);
  llvm::sort(keys);
  os.object([&] {
    for (StringRef key : keys) {
      if (key == "arguments" || key == "results") {
        const auto &entries = key == "arguments" ? arguments : results;
        os.attributeArray(key, [&] {
          for (const ManifestEntry &e : entries)
            writeEntry(os, e);
        });
      } else {
        os.attribute(key, *fields.get(key));
      }
    }
  });
  return text;
}

llvm::json::Array tp::moduleStrings(ModuleOp module, StringRef name) {
  llvm::json::Array array;
  if (auto strings = module->getAttrOfType<ArrayAttr>(name))
    for (Attribute s : strings)
      array.push_back(cast<StringAttr>(s).str());
  return array;
}

llvm::json::Array tp::moduleIntegers(ModuleOp module, StringRef name) {
  llvm::json::Array array;
  if (auto integers = module->getAttrOfType<DenseI64ArrayAttr>(name))
    for (int64_t i : integers.asArrayRef())
      array.push_back(i);
  return array;
}

FailureOr<Manifest> tp::buildManifest(ModuleOp module, func::FuncOp func,
                                      const std::vector<TensorInfo> &global,
                                      StringRef modelPath,
                                      StringRef modelSha256,
                                      StringRef target) {
  auto error = [&](const Twine &msg) {
    emitError(module.getLoc()) << msg;
    return failure();
  };
  std::string hex = modelSha256.str();

  llvm::json::Object mesh;
  llvm::json::Array axes, sizes;
  if (auto names = module->getAttrOfType<ArrayAttr>("tp.mesh_axis_names"))
    for (Attribute a : names)
      axes.push_back(cast<StringAttr>(a).str());
  if (auto shape = module->getAttrOfType<DenseI64ArrayAttr>("tp.mesh_shape"))
    for (int64_t s : shape.asArrayRef())
      sizes.push_back(s);
  mesh["axes"] = std::move(axes);
  mesh["sizes"] = std::move(sizes);

  Manifest manifest;
  unsigned numArgs = func.getNumArguments();
  manifest.arguments.reserve(numArgs);
  manifest.results.reserve(func.getNumResults());
  if (global.size() != numArgs + func.getNumResults())
    return error("internal: the program's signature does not match the "
                 "imported model's");
  for (auto [i, info] : llvm::enumerate(global)) {
    bool isArg = i < numArgs;
    Type local = isArg ? func.getArgumentTypes()[i]
                       : func.getResultTypes()[i - numArgs];
    Attribute sharding =
        isArg ? func.getArgAttr(i, kShardingAttr)
              : func.getResultAttr(i - numArgs, kShardingAttr);
    ManifestEntry &entry = (isArg ? manifest.arguments : manifest.results)
                               .emplace_back();
    entry.global = info;
    llvm::append_range(entry.localShape,
                       cast<RankedTensorType>(local).getShape());
    entry.sharding = shardingAxes(sharding, info.shape.size());
    if (!isArg)
      if (auto stage = func.getResultAttrOfType<IntegerAttr>(i - numArgs,
                                                             "tp.stage"))
        entry.stage = stage.getInt();
    if (auto stages =
            isArg ? func.getArgAttrOfType<DenseI64ArrayAttr>(i, "tp.stages")
                  : func.getResultAttrOfType<DenseI64ArrayAttr>(i - numArgs,
                                                                "tp.stages"))
      llvm::append_range(entry.stages, stages.asArrayRef());
  }

  llvm::json::Array masks;
  if (auto m = module->getAttrOfType<ArrayAttr>("tp.axis_masks"))
    for (Attribute a : m)
      masks.push_back(cast<IntegerAttr>(a).getInt());

  llvm::json::Object tied;
  if (auto copies = module->getAttrOfType<DictionaryAttr>("tp.tied_copies"))
    for (NamedAttribute c : copies)
      tied[c.getName().str()] = cast<StringAttr>(c.getValue()).str();

  llvm::json::Array bound;
  if (auto names = module->getAttrOfType<ArrayAttr>("tp.constant_inputs"))
    for (Attribute a : names)
      bound.push_back(cast<StringAttr>(a).str());

  manifest.fields = llvm::json::Object{
      {"format", "tp-program/1"},
      {"tied_copies", std::move(tied)},
      {"constant_inputs", std::move(bound)},
      {"target", target.str()},
      {"library", "program.so"},
      {"entry", "tp_entry"},
      {"model", llvm::json::Object{{"path", modelPath.str()},
                                   {"sha256", hex},
                                   {"untie_merged",
                                    module->hasAttr("tp.untie_merged")}}},
      {"mesh", std::move(mesh)},
      {"collective_sites", moduleStrings(module, "tp.collective_sites")},
      {"collective_phases", moduleStrings(module, "tp.collective_phases")},
      {"collective_microbatches",
       moduleIntegers(module, "tp.collective_microbatches")},
      {"axis_masks", std::move(masks)}};
  if (auto p = module->getAttrOfType<DictionaryAttr>("tp.pipeline"))
    manifest.fields["pipeline"] = llvm::json::Object{
        {"axis", p.getAs<StringAttr>("axis").str()},
        {"stages", p.getAs<IntegerAttr>("stages").getInt()},
        {"microbatches", p.getAs<IntegerAttr>("microbatches").getInt()},
        {"schedule", p.getAs<StringAttr>("schedule").str()},
        {"kept_bytes_per_microbatch",
         llvm::json::Array(
             p.getAs<DenseI64ArrayAttr>("kept_bytes_per_microbatch")
                 ? p.getAs<DenseI64ArrayAttr>("kept_bytes_per_microbatch")
                       .asArrayRef()
                 : ArrayRef<int64_t>{})}};
  return manifest;
}
