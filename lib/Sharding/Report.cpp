//===- Report.cpp - explain shardings, report collectives -----------------===//
#include "tp/Sharding/Report.h"
#include "llvm/ADT/StringExtras.h"
#include "tp/Sharding/ValueNames.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Sharding/Padding.h"
#include "tp/Sharding/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <map>

using namespace mlir;
using namespace mlir::tp;

static int64_t elementBytes(Type t) {
  return (cast<ShapedType>(t).getElementType().getIntOrFloatBitWidth() + 7) /
         8;
}

static int64_t bytesOf(Type t) {
  return cast<ShapedType>(t).getNumElements() * elementBytes(t);
}

static std::string shapeOf(Type t) {
  return formatShape(cast<ShapedType>(t).getShape());
}

/// The layout a value is produced in: its argument annotation or its op's
/// tp.out_shardings.
static Attribute layoutOf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return func ? func.getArgAttr(arg.getArgNumber(), kShardingAttr)
                : Attribute();
  }
  auto outs = v.getDefiningOp()->getAttrOfType<ArrayAttr>(kOutShardingsAttr);
  return outs ? outs[cast<OpResult>(v).getResultNumber()] : Attribute();
}

void tp::printShardingExplanation(ModuleOp module, llvm::raw_ostream &os) {
  auto attrText = [](Attribute a) {
    std::string s;
    llvm::raw_string_ostream ss(s);
    if (a)
      ss << a;
    else
      ss << "replicated";
    return s;
  };
  for (auto func : module.getOps<func::FuncOp>()) {
    os << "sharding of @" << func.getName() << " (value: global shape -> "
       << "layout <- why)\n";
    for (BlockArgument arg : func.getArguments()) {
      auto origin =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kOriginAttr);
      os << "  " << describeValue(arg) << ": " << shapeOf(arg.getType())
         << " -> "
         << attrText(func.getArgAttr(arg.getArgNumber(), kShardingAttr))
         << " <- " << (origin ? origin.getValue() : "unannotated") << "\n";
    }
    func.walk([&](Operation *op) {
      auto outs = op->getAttrOfType<ArrayAttr>(kOutShardingsAttr);
      auto origins = op->getAttrOfType<ArrayAttr>(kOriginAttr);
      if (!outs)
        return;
      for (auto [i, r] : llvm::enumerate(op->getResults()))
        os << "  " << describeValue(r) << ": " << shapeOf(r.getType())
           << " -> " << attrText(outs[i]) << " <- "
           << (origins ? cast<StringAttr>(origins[i]).getValue() : "")
           << "\n";
      // Where this op reads an operand in another layout than it was made
      // in, a collective (or a local slice) will move it.
      if (auto ins = op->getAttrOfType<ArrayAttr>(kInShardingsAttr))
        for (auto [i, v] : llvm::enumerate(op->getOperands())) {
          Attribute produced = layoutOf(v);
          if (produced && produced != ins[i])
            os << "    reads " << describeValue(v) << " as "
               << attrText(ins[i]) << " (it is " << attrText(produced)
               << ")\n";
        }
    });
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      auto origin = func.getResultAttrOfType<StringAttr>(i, kOriginAttr);
      auto name = func.getResultAttrOfType<StringAttr>(i, "tp.output");
      os << "  result " << (name ? name.getValue() : "") << ": "
         << shapeOf(func.getResultTypes()[i]) << " -> "
         << attrText(func.getResultAttr(i, kShardingAttr)) << " <- "
         << (origin ? origin.getValue() : "unannotated") << "\n";
    }
  }
}

namespace {
struct Collective {
  std::string kind, axes, shape, node;
  int64_t bytes;  // the tensor each device hands to the collective
  double moved;   // bytes each device sends with a ring algorithm
  /// Of a padded value: per rank, the bytes of `bytes` that are real.
  SmallVector<int64_t> realBytes;
};

/// `0: 100, 1: 100, 2: 96` (the real bytes per rank) and the padding, or
/// one figure when every rank has the same.
static std::string perRank(ArrayRef<int64_t> real, int64_t whole) {
  std::string out;
  if (llvm::all_equal(real))
    return "every rank " + std::to_string(real[0]) + " real + " +
           std::to_string(whole - real[0]) + " padding";
  for (auto [r, n] : llvm::enumerate(real))
    out += (r ? ", " : "") + std::to_string(r) + ": " + std::to_string(n) +
           " + " + std::to_string(whole - n);
  return "per rank, real + padding: " + out;
}

} // namespace

double tp::estimateFlops(Operation *op) {
  auto elements = [](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.hasStaticShape() ? double(t.getNumElements()) : 0.0;
  };
  if (auto mm = dyn_cast<MatMulOp>(op))
    return 2 * elements(mm.getResult()) *
           double(cast<RankedTensorType>(mm.getLhs().getType()).getShape().back());
  // A conv and both its gradients: two flops per output-gradient element
  // and filter element of its group.
  if (isa<ConvOp, ConvInputGradOp, ConvFilterGradOp>(op)) {
    Value out = isa<ConvOp>(op) ? op->getResult(0)
                : isa<ConvInputGradOp>(op) ? op->getOperand(0)
                                           : op->getOperand(1);
    Value filter = isa<ConvFilterGradOp>(op) ? op->getResult(0)
                                              : op->getOperand(1);
    auto f = cast<RankedTensorType>(filter.getType());
    return 2 * elements(out) * double(f.getNumElements() / f.getDimSize(0));
  }
  double n = 0;
  for (Value r : op->getResults())
    n += elements(r);
  return n;
}

namespace {

/// What recomputation costs and saves on one device: the ops marked
/// `mark` (tp.recomputed: --recompute's modules; tp.rematerialized:
/// elementwise values), their FLOPs against the step's, and the bytes of
/// the values the backward pass reads from them (which the forward pass no
/// longer keeps for it).
struct Recomputation {
  int64_t ops = 0, bytesNotKept = 0;
  double flops = 0, stepFlops = 0;
};

/// The bytes a training step keeps from its forward pass for its backward
/// pass: values computed before the backward pass (not recomputed in it)
/// that a backward op reads, by element type ("f32", "bf16", ...).
static std::map<std::string, int64_t> keptForBackward(func::FuncOp func) {
  std::map<std::string, int64_t> kept;
  auto inBackward = [](Operation *op) {
    return hasTag(op->getLoc(), "backward") ||
           hasTag(op->getLoc(), "recompute") ||
           op->hasAttr("tp.rematerialized");
  };
  func.walk([&](Operation *op) {
    if (inBackward(op) || hasTag(op->getLoc(), "update"))
      return;
    for (Value r : op->getResults()) {
      auto t = dyn_cast<RankedTensorType>(r.getType());
      if (!t || !llvm::any_of(r.getUsers(), inBackward))
        continue;
      std::string name;
      llvm::raw_string_ostream os(name);
      os << t.getElementType();
      kept[name] += bytesOf(t);
    }
  });
  return kept;
}

/// Both marks' figures in one walk of `func`.
static std::pair<Recomputation, Recomputation>
recomputationsOf(func::FuncOp func) {
  std::pair<Recomputation, Recomputation> both;
  double stepFlops = 0;
  func.walk([&](Operation *op) {
    if (!isa_and_present<TPDialect>(op->getDialect()))
      return;
    double f = estimateFlops(op);
    stepFlops += f;
    for (auto [mark, r] : {std::pair<StringRef, Recomputation *>{
                               "tp.recomputed", &both.first},
                           {"tp.rematerialized", &both.second}}) {
      if (!op->hasAttr(mark))
        continue;
      ++r->ops;
      r->flops += f;
      for (Value v : op->getResults())
        if (llvm::any_of(v.getUsers(), [&](Operation *user) {
              return !user->hasAttr(mark) &&
                     isa_and_present<TPDialect>(user->getDialect());
            }))
          r->bytesNotKept += bytesOf(v.getType());
    }
  });
  both.first.stepFlops = both.second.stepFlops = stepFlops;
  return both;
}
} // namespace

/// The stages tp-assign-stages chose (its `tp.pipeline` figures, taken on
/// the whole model before any split), the schedule's bubble and how even
/// the stages are; null without a pipeline.
static std::optional<llvm::json::Object> pipelineFigures(ModuleOp module) {
  auto p = module->getAttrOfType<DictionaryAttr>("tp.pipeline");
  if (!p)
    return std::nullopt;
  int64_t stages = cast<IntegerAttr>(p.get("stages")).getInt();
  int64_t m = cast<IntegerAttr>(p.get("microbatches")).getInt();
  auto flops = cast<ArrayAttr>(p.get("flops"));
  auto params = cast<DenseI64ArrayAttr>(p.get("param_bytes")).asArrayRef();
  auto sends = cast<DenseI64ArrayAttr>(p.get("send_bytes")).asArrayRef();
  auto first = cast<ArrayAttr>(p.get("first_modules"));
  llvm::json::Array list;
  double total = 0, largest = 0;
  for (int64_t s = 0; s < stages; ++s) {
    double f = cast<FloatAttr>(flops[s]).getValueAsDouble();
    total += f;
    largest = std::max(largest, f);
    list.push_back(llvm::json::Object{
        {"stage", s},
        {"first_module", cast<StringAttr>(first[s]).getValue()},
        {"forward_flops", f},
        {"param_bytes", params[s]},
        {"send_bytes_per_microbatch", sends[s]}});
  }
  return llvm::json::Object{
      {"axis", cast<StringAttr>(p.get("axis")).getValue()},
      {"schedule", cast<StringAttr>(p.get("schedule")).getValue()},
      {"microbatches", m},
      {"balanced_by_tp", cast<BoolAttr>(p.get("balanced")).getValue()},
      {"stages", std::move(list)},
      {"bubble_fraction", double(stages - 1) / double(m + stages - 1)},
      {"largest_stage_flops_over_mean",
       total > 0 ? largest * stages / total : 1.0}};
}

static void printPipeline(const llvm::json::Object &p, llvm::raw_ostream &os) {
  os << "pipeline over mesh axis '" << *p.getString("axis") << "': "
     << p.getArray("stages")->size() << " stages, "
     << *p.getInteger("microbatches") << " microbatches, schedule "
     << *p.getString("schedule") << " ("
     << (*p.getBoolean("balanced_by_tp")
             ? "stages balanced by FLOPs and parameter bytes"
             : "split_before from the plan")
     << ")\n";
  os << llvm::format("  %-5s %-28s %14s %14s %16s\n", "stage",
                     "first module", "forward FLOPs", "param bytes",
                     "sent/microbatch");
  for (const llvm::json::Value &v : *p.getArray("stages")) {
    const llvm::json::Object &s = *v.getAsObject();
    os << llvm::format("  %-5lld %-28s %14.4g %14lld %16lld\n",
                       (long long)*s.getInteger("stage"),
                       s.getString("first_module")->str().c_str(),
                       *s.getNumber("forward_flops"),
                       (long long)*s.getInteger("param_bytes"),
                       (long long)*s.getInteger("send_bytes_per_microbatch"));
  }
  os << llvm::formatv("  largest stage's FLOPs / mean: {0:f2}; bubble "
                      "(p-1)/(m+p-1): {1:f3}\n",
                      *p.getNumber("largest_stage_flops_over_mean"),
                      *p.getNumber("bubble_fraction"));
}

void tp::printCollectiveReport(ModuleOp module, llvm::raw_ostream &os,
                               bool json) {
  std::optional<llvm::json::Object> pipeline = pipelineFigures(module);
  FailureOr<Mesh> mesh = getMesh(module);
  llvm::json::Array funcs;
  for (auto func : module.getOps<func::FuncOp>()) {
    std::vector<Collective> collectives;
    func.walk([&](Operation *op) {
      auto axesAttr = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
      if (!isa<shard::AllReduceOp, shard::AllGatherOp, shard::ReduceScatterOp,
               shard::AllToAllOp, shard::AllSliceOp>(op) ||
          !axesAttr)
        return;
      Collective c;
      c.kind = op->getName().stripDialect().str();
      int64_t group = 1;
      for (int16_t a : axesAttr.asArrayRef()) {
        c.axes += (c.axes.empty() ? "" : ",") +
                  (succeeded(mesh) ? mesh->names[a] : std::to_string(a));
        group *= succeeded(mesh) ? mesh->sizes[a] : 1;
      }
      Type in = op->getOperand(0).getType(), out = op->getResult(0).getType();
      c.shape = shapeOf(in);
      c.node = onnxNodeName(op->getLoc());
      double share = double(group - 1) / group;
      if (c.kind == "all_reduce") {
        c.bytes = bytesOf(in);
        c.moved = 2 * share * c.bytes;
      } else if (c.kind == "all_gather") {
        c.bytes = bytesOf(in);
        c.moved = share * bytesOf(out);
      } else if (c.kind == "all_slice") {
        c.bytes = bytesOf(in);
        c.moved = 0;
      } else {
        c.bytes = bytesOf(in);
        c.moved = share * c.bytes;
      }
      if (auto real = op->getAttrOfType<DenseI64ArrayAttr>(kRealElementsAttr))
        for (int64_t n : real.asArrayRef())
          c.realBytes.push_back(n * elementBytes(in));
      collectives.push_back(c);
    });
    int64_t params = 0, activations = 0;
    // Unevenly split weights: each rank's real bytes.
    SmallVector<int64_t> realParams;
    bool paddedParams = false;
    if (succeeded(mesh))
      realParams.assign(mesh->numDevices(), 0);
    for (BlockArgument arg : func.getArguments()) {
      unsigned i = arg.getArgNumber();
      if (!func.getArgAttr(i, "tp.param"))
        continue;
      params += bytesOf(arg.getType());
      auto padding = paddingFromAttr(func.getArgAttr(i, kPaddedDimsAttr));
      auto layout = func.getArgAttrOfType<ShardingAttr>(i, kShardingAttr);
      std::string error;
      auto type = cast<ShapedType>(arg.getType());
      FailureOr<TensorSharding> s =
          padding && layout && succeeded(mesh)
              ? TensorSharding::fromAttr(layout, *mesh, type.getRank(), error)
              : FailureOr<TensorSharding>(failure());
      paddedParams |= succeeded(s);
      for (auto [r, n] : llvm::enumerate(realParams))
        n += succeeded(s) ? realElementsOnRank(*padding, *s, *mesh, r) *
                                elementBytes(type)
                          : bytesOf(type);
    }
    func.walk([&](Operation *op) {
      for (Value r : op->getResults())
        if (isa<RankedTensorType>(r.getType()))
          activations += bytesOf(r.getType());
    });
    std::map<std::string, int64_t> kept = keptForBackward(func);
    int64_t keptTotal = 0;
    std::string keptByType;
    llvm::json::Object keptJson;
    for (auto &[type, bytes] : kept) {
      keptTotal += bytes;
      keptByType += (keptByType.empty() ? "" : ", ") + type + " " +
                    std::to_string(bytes);
      keptJson[type] = bytes;
    }
    auto recomputed =
        module->getAttrOfType<ArrayAttr>("tp.recomputed_modules");
    auto [recomputation, remat] = recomputationsOf(func);
    std::string recomputedNames;
    if (recomputed)
      for (auto [i, m] : llvm::enumerate(recomputed))
        recomputedNames += (i ? ", " : "") +
                           cast<StringAttr>(m).getValue().str();
    double totalMoved = 0;
    int64_t totalBytes = 0;
    for (const Collective &c : collectives) {
      totalMoved += c.moved;
      totalBytes += c.bytes;
    }

    if (json) {
      llvm::json::Array list;
      for (const Collective &c : collectives) {
        llvm::json::Object o{{"kind", c.kind},         {"mesh_axes", c.axes},
                             {"local_shape", c.shape}, {"bytes", c.bytes},
                             {"bytes_moved", c.moved}, {"onnx_node", c.node}};
        if (!c.realBytes.empty())
          o["real_bytes_per_rank"] = llvm::json::Array(c.realBytes);
        list.push_back(std::move(o));
      }
      funcs.push_back(llvm::json::Object{
          {"function", func.getName()},
          {"mesh", succeeded(mesh) ? mesh->describe() : ""},
          {"collectives", std::move(list)},
          {"total_collectives", int64_t(collectives.size())},
          {"total_bytes", totalBytes},
          {"total_bytes_moved", totalMoved},
          {"param_bytes_per_device", params},
          {"real_param_bytes_per_rank",
           paddedParams ? llvm::json::Value(llvm::json::Array(realParams))
                        : llvm::json::Value(nullptr)},
          {"activation_bytes_per_device", activations},
          {"kept_for_backward_bytes_per_device", keptTotal},
          {"kept_for_backward_by_dtype", std::move(keptJson)}});
      if (recomputed)
        funcs.back().getAsObject()->try_emplace(
            "recompute",
            llvm::json::Object{
                {"modules", llvm::json::Array(llvm::map_range(
                                recomputed, [](Attribute m) {
                                  return cast<StringAttr>(m).getValue().str();
                                }))},
                {"ops", recomputation.ops},
                {"flops_added_per_device", recomputation.flops},
                {"step_flops_per_device", recomputation.stepFlops},
                {"activation_bytes_not_kept_per_device",
                 recomputation.bytesNotKept}});
      if (auto figures = func.isPublic() ? pipelineFigures(module)
                                         : std::nullopt)
        funcs.back().getAsObject()->try_emplace("pipeline",
                                                std::move(*figures));
      if (remat.ops)
        funcs.back().getAsObject()->try_emplace(
            "rematerialize",
            llvm::json::Object{{"ops", remat.ops},
                               {"flops_added_per_device", remat.flops},
                               {"activation_bytes_not_kept_per_device",
                                remat.bytesNotKept}});
      continue;
    }
    os << "collectives of @" << func.getName() << " per device"
       << (succeeded(mesh) ? " on mesh " + mesh->describe() : "") << "\n";
    os << llvm::format("  %-14s %-6s %-18s %12s %12s  %s\n", "kind", "axes",
                       "local shape", "bytes", "moved", "ONNX node");
    for (const Collective &c : collectives) {
      os << llvm::format("  %-14s %-6s %-18s %12lld %12.0f  %s\n",
                         c.kind.c_str(), c.axes.c_str(), c.shape.c_str(),
                         (long long)c.bytes, c.moved, c.node.c_str());
      if (!c.realBytes.empty())
        os << "    bytes: " << perRank(c.realBytes, c.bytes) << "\n";
    }
    os << llvm::format("  total: %zu collectives, %lld bytes, %.0f bytes "
                       "moved (ring)\n",
                       collectives.size(), (long long)totalBytes, totalMoved);
    os << llvm::format("  memory per device: parameters %lld bytes, "
                       "activations %lld bytes (no reuse)\n",
                       (long long)params, (long long)activations);
    if (keptTotal)
      os << "  kept for the backward pass per device: " << keptTotal
         << " bytes (" << keptByType << ")\n";
    if (paddedParams)
      os << "  parameter bytes: " << perRank(realParams, params) << "\n";
    if (recomputed)
      os << llvm::formatv(
          "  recomputed in the backward pass ({0}): {1} ops, {2:e3} FLOPs "
          "added per device ({3:f1}% of the step's {4:e3}); {5} bytes of "
          "activations per device no longer kept for the backward pass\n",
          recomputedNames, recomputation.ops, recomputation.flops,
          100 * recomputation.flops / std::max(recomputation.stepFlops, 1.0),
          recomputation.stepFlops, recomputation.bytesNotKept);
    if (remat.ops)
      os << llvm::formatv(
          "  elementwise values recomputed in the backward pass instead of "
          "kept: {0} ops, {1:e3} FLOPs added per device; {2} bytes of "
          "activations per device no longer kept\n",
          remat.ops, remat.flops, remat.bytesNotKept);
  }
  if (pipeline && !json)
    printPipeline(*pipeline, os);
  // Initializers read by modules whose PyTorch names say they are
  // different parameters: one weight each, as the file has them (an
  // eval-mode export merges equal values; docs/Training.md, "Shared
  // initializers").
  SmallVector<std::pair<std::string, SmallVector<std::string>>> shared;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic())
      continue;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto names = func.getArgAttrOfType<ArrayAttr>(i, "tp.torch_names");
      auto param = func.getArgAttrOfType<StringAttr>(i, "tp.param");
      if (!names || !param || names.size() < 2)
        continue;
      SmallVector<std::string> list;
      for (Attribute n : names)
        list.push_back(cast<StringAttr>(n).getValue().str());
      shared.push_back({param.getValue().str(), std::move(list)});
    }
    break;
  }
  if (!shared.empty() && !json) {
    os << "shared initializers: " << shared.size()
       << " read by modules whose names say they are different parameters; "
          "each is trained as one weight (tied); --untie-merged trains "
          "apart those the exporter merged by value\n";
    for (auto &[init, names] : shared)
      os << "  " << init << ": " << llvm::join(names, ", ") << "\n";
  }
  if (!shared.empty() && json)
    for (llvm::json::Value &f : funcs) {
      llvm::json::Object o;
      for (auto &[init, names] : shared)
        o[init] = llvm::json::Array(names);
      f.getAsObject()->try_emplace("shared_initializers", std::move(o));
    }
  // Plan entries an exact module name overrode on some module.
  auto overrides = module->getAttrOfType<ArrayAttr>(kPlanOverridesAttr);
  if (overrides && !json) {
    os << "plan: an exact module name wins over a pattern\n";
    for (Attribute note : overrides)
      os << "  " << cast<StringAttr>(note).getValue() << "\n";
  }
  if (overrides && json)
    for (llvm::json::Value &f : funcs)
      f.getAsObject()->try_emplace(
          "plan_overrides",
          llvm::json::Array(llvm::map_range(overrides, [](Attribute note) {
            return cast<StringAttr>(note).getValue().str();
          })));
  if (json)
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(funcs))) << "\n";
}
