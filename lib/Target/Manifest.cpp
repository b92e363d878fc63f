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

static llvm::json::Array shardingJson(Attribute attr, int64_t rank) {
  llvm::json::Array dims;
  auto s = dyn_cast_if_present<ShardingAttr>(attr);
  for (int64_t d = 0; d < rank; ++d) {
    llvm::json::Array axes;
    if (s)
      for (Attribute a : cast<ArrayAttr>(s.getDims()[d]))
        axes.push_back(cast<StringAttr>(a).str());
    dims.push_back(std::move(axes));
  }
  return dims;
}

FailureOr<llvm::json::Object>
tp::buildManifest(ModuleOp module, func::FuncOp func,
                  const std::vector<TensorInfo> &global,
                  StringRef modelPath, StringRef modelSha256,
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

  llvm::json::Array args, results;
  unsigned numArgs = func.getNumArguments();
  // Sized once: json::Value's move is not noexcept, so a growing array
  // deep-copies every entry (thousands for a deep training step).
  args.reserve(numArgs);
  results.reserve(func.getNumResults());
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
    llvm::json::Array shape, localShape;
    for (int64_t d : info.shape)
      shape.push_back(d);
    for (int64_t d : cast<RankedTensorType>(local).getShape())
      localShape.push_back(d);
    llvm::json::Object entry{
        {"name", info.name},         {"kind", info.kind},
        {"dtype", info.dtype},       {"shape", std::move(shape)},
        {"local_shape", std::move(localShape)},
        {"sharding", shardingJson(sharding, info.shape.size())}};
    if (!info.torchName.empty() && info.torchName != info.name)
      entry["torch_name"] = info.torchName;
    // The Python package's state_dict(): PyTorch's names and layout.
    if (info.torchNames.size() > 1)
      entry["torch_names"] = llvm::json::Array(info.torchNames);
    if (info.torchTransposed)
      entry["torch_transposed"] = true;
    if (!info.onnxShape.empty())
      entry["onnx_shape"] = llvm::json::Array(info.onnxShape);
    // Pipeline stages: the stage whose value of a result counts; the
    // stages that read an argument or write a result, where not all do.
    if (!isArg)
      if (auto stage = func.getResultAttrOfType<IntegerAttr>(i - numArgs,
                                                             "tp.stage"))
        entry["stage"] = stage.getInt();
    if (auto stages =
            isArg ? func.getArgAttrOfType<DenseI64ArrayAttr>(i, "tp.stages")
                  : func.getResultAttrOfType<DenseI64ArrayAttr>(i - numArgs,
                                                                "tp.stages"))
      entry["stages"] = llvm::json::Array(stages.asArrayRef());
    (isArg ? args : results).push_back(std::move(entry));
  }

  llvm::json::Array collectives;
  if (auto sites = module->getAttrOfType<ArrayAttr>("tp.collective_sites"))
    for (Attribute s : sites)
      collectives.push_back(cast<StringAttr>(s).str());
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

  llvm::json::Object manifest{
      {"format", "tp-program/1"},
      {"tied_copies", std::move(tied)},
      {"constant_inputs", std::move(bound)},
      {"target", target.str()},
      {"library", "program.so"},
      {"entry", "tp_entry"},
      {"model", llvm::json::Object{{"path", modelPath.str()}, {"sha256", hex}}},
      {"mesh", std::move(mesh)},
      {"arguments", std::move(args)},
      {"results", std::move(results)},
      {"collective_sites", std::move(collectives)},
      {"axis_masks", std::move(masks)}};
  if (auto p = module->getAttrOfType<DictionaryAttr>("tp.pipeline"))
    manifest["pipeline"] = llvm::json::Object{
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
