//===- FusedProjections.cpp - the tp-split-fused-projections pass ---------===//
//
// A fused projection computes several projections with one weight: GPT-2's
// c_attn ([h, 3h], q, k and v) whose output is split in three. Split
// colwise as it is, each device would hold whole columns of q and of k, and
// the split would need the fused output gathered. Megatron instead gives
// each device its own block of every part (DTensor's _StridedShard).
//
// This pass, run on the imported forward graph before autodiff, rewrites a
// fused projection that the plan splits colwise: the weight's argument
// becomes a view of the same bytes with the parts as a dim of their own
// ([in, parts, out/parts], or [parts, out/parts, in] for a Linear's
// [out, in]; the bias [parts, out/parts]), and the one matmul becomes one
// per part on its slice of the view. A plain colwise split of the view's
// out/parts dim is then the strided split, and every part's matmul, the
// head reshape and the attention stay local. The runtime reads and writes
// the view's bytes as the ONNX initializer's (`tp.onnx_shape`).
//
//===----------------------------------------------------------------------===//
#include "SeparateHeads.h"

#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Plan/Passes.h"
#include "tp/Plan/Plan.h"

#include "mlir/IR/Builders.h"

namespace mlir::tp {
#define GEN_PASS_DEF_TPSPLITFUSEDPROJECTIONS
#include "tp/Plan/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// weight -> [transpose] -> matmul -> [+ bias] -> reshapes keeping the last
/// dim -> slices of the last dim into `parts` equal parts.
struct FusedProjection {
  unsigned weight;
  std::optional<unsigned> bias;
  TransposeOp transpose; // a Linear's [out, in] weight read transposed
  MatMulOp matmul;
  AddOp biasAdd;
  SmallVector<ReshapeOp> reshapes;
  /// Per slice, the part it takes.
  SmallVector<std::pair<SliceOp, int64_t>> slices;
  int64_t parts = 0, out = 0;
  /// The bias is read elsewhere too (an eval-mode export merges equal
  /// initializers: every fresh attention's zero bias is one): it keeps its
  /// shape, and each part reads its slice of it.
  bool biasShared = false;
};

/// The only user of `v`, or null.
Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

std::optional<FusedProjection> match(func::FuncOp func, unsigned weight,
                                     std::optional<unsigned> bias) {
  FusedProjection f;
  f.weight = weight;
  Value w = func.getArgument(weight);
  auto wType = cast<RankedTensorType>(w.getType());
  if (wType.getRank() != 2)
    return std::nullopt;
  Operation *user = soleUser(w);
  Value rhs = w;
  if (auto t = dyn_cast_or_null<TransposeOp>(user)) {
    if (t.getPerm() != ArrayRef<int64_t>{1, 0})
      return std::nullopt;
    f.transpose = t;
    rhs = t;
    user = soleUser(t);
  }
  f.matmul = dyn_cast_or_null<MatMulOp>(user);
  if (!f.matmul || f.matmul.getRhs() != rhs || f.matmul.getLhs() == rhs)
    return std::nullopt;
  f.out = cast<RankedTensorType>(rhs.getType()).getShape().back();
  Value v = f.matmul;
  if (bias)
    if (auto add = dyn_cast_or_null<AddOp>(soleUser(v));
        add && (add.getLhs() == func.getArgument(*bias) ||
                add.getRhs() == func.getArgument(*bias)) &&
        cast<RankedTensorType>(func.getArgument(*bias).getType()).getRank() ==
            1) {
      f.biasAdd = add;
      f.bias = bias;
      f.biasShared = !func.getArgument(*bias).hasOneUse();
      v = add;
    }
  while (auto r = dyn_cast_or_null<ReshapeOp>(soleUser(v))) {
    if (r.getType().getShape().back() != f.out)
      break;
    f.reshapes.push_back(r);
    v = r;
  }
  // Every user slices the last dim, whole elsewhere; the slices tile it
  // into equal parts.
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  for (Operation *u : v.getUsers()) {
    auto s = dyn_cast<SliceOp>(u);
    if (!s)
      return std::nullopt;
    int64_t last = shape.size() - 1;
    for (int64_t d = 0; d < last; ++d)
      if (s.getStarts()[d] != 0 || s.getLimits()[d] != shape[d] ||
          s.getSteps()[d] != 1)
        return std::nullopt;
    if (s.getSteps()[last] != 1)
      return std::nullopt;
    ranges.push_back({s.getStarts()[last], s.getLimits()[last]});
  }
  if (ranges.empty())
    return std::nullopt;
  llvm::sort(ranges);
  ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
  int64_t size = ranges[0].second - ranges[0].first;
  for (auto [i, r] : llvm::enumerate(ranges))
    if (r.first != int64_t(i) * size || r.second != r.first + size)
      return std::nullopt;
  if (ranges.size() < 2 || ranges.back().second != f.out)
    return std::nullopt;
  f.parts = ranges.size();
  for (Operation *u : v.getUsers()) {
    auto s = cast<SliceOp>(u);
    f.slices.push_back({s, s.getStarts()[shape.size() - 1] / size});
  }
  return f;
}

RankedTensorType withLastDim(Type t, int64_t n) {
  auto type = cast<RankedTensorType>(t);
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = n;
  return type.clone(shape);
}

/// Returns the parts' values (what the slices were).
SmallVector<Value> rewrite(func::FuncOp func, FusedProjection f) {
  OpBuilder b(f.matmul);
  Location loc = f.matmul.getLoc();
  int64_t n = f.out / f.parts;
  // The weight as a view with the parts as a dim of their own.
  BlockArgument w = func.getArgument(f.weight);
  auto wType = cast<RankedTensorType>(w.getType());
  bool linear = bool(f.transpose); // [out, in]
  int64_t in = linear ? wType.getDimSize(1) : wType.getDimSize(0);
  SmallVector<int64_t> view = linear ? SmallVector<int64_t>{f.parts, n, in}
                                     : SmallVector<int64_t>{in, f.parts, n};
  int64_t partsDim = linear ? 0 : 1;
  func.setArgAttr(f.weight, "tp.onnx_shape",
                  b.getDenseI64ArrayAttr(wType.getShape()));
  // parts, then the view's out/parts and in dims (what colwise / rowwise
  // split).
  func.setArgAttr(f.weight, "tp.fused_view",
                  b.getDenseI64ArrayAttr({f.parts, linear ? 1 : 2,
                                          linear ? 2 : 0}));
  w.setType(wType.clone(view));
  Value biasView;
  if (f.bias && f.biasShared) {
    biasView = func.getArgument(*f.bias);
  } else if (f.bias) {
    BlockArgument bias = func.getArgument(*f.bias);
    auto bType = cast<RankedTensorType>(bias.getType());
    func.setArgAttr(*f.bias, "tp.onnx_shape",
                    b.getDenseI64ArrayAttr(bType.getShape()));
    func.setArgAttr(*f.bias, "tp.fused_view",
                    b.getDenseI64ArrayAttr({f.parts, 1, -1}));
    bias.setType(bType.clone({f.parts, n}));
    biasView = bias;
  }
  auto slicePart = [&](Value v, int64_t dim, int64_t p, Location at) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> starts(type.getRank(), 0), steps(type.getRank(), 1);
    SmallVector<int64_t> limits(type.getShape());
    starts[dim] = p;
    limits[dim] = p + 1;
    SmallVector<int64_t> one(type.getShape());
    one[dim] = 1;
    Value s = SliceOp::create(b, at, type.clone(one), v, starts, limits, steps);
    SmallVector<int64_t> dropped(type.getShape());
    dropped.erase(dropped.begin() + dim);
    return ReshapeOp::create(b, at, type.clone(dropped), s).getResult();
  };
  SmallVector<Value> results;
  for (int64_t p = 0; p < f.parts; ++p) {
    Value wp = slicePart(w, partsDim, p, loc);
    if (linear)
      wp = TransposeOp::create(b, f.transpose.getLoc(),
                               cast<RankedTensorType>(wp.getType()).clone(
                                   {in, n}),
                               wp, b.getDenseI64ArrayAttr({1, 0}));
    Value y = MatMulOp::create(b, loc, withLastDim(f.matmul.getType(), n),
                               f.matmul.getLhs(), wp);
    if (f.biasAdd) {
      Value bp;
      if (f.biasShared) {
        auto bType = cast<RankedTensorType>(biasView.getType());
        bp = SliceOp::create(b, f.biasAdd.getLoc(), bType.clone({n}),
                             biasView, SmallVector<int64_t>{p * n},
                             SmallVector<int64_t>{(p + 1) * n},
                             SmallVector<int64_t>{1});
      } else {
        bp = slicePart(biasView, 0, p, f.biasAdd.getLoc());
      }
      bool biasFirst = f.biasAdd.getLhs() == func.getArgument(*f.bias);
      y = AddOp::create(b, f.biasAdd.getLoc(), withLastDim(y.getType(), n),
                        biasFirst ? bp : y, biasFirst ? y : bp);
    }
    for (ReshapeOp r : f.reshapes)
      y = ReshapeOp::create(b, r.getLoc(), withLastDim(r.getType(), n), y);
    results.push_back(y);
  }
  for (auto &[slice, p] : f.slices) {
    slice.getResult().replaceAllUsesWith(results[p]);
    slice.erase();
  }
  for (ReshapeOp &r : llvm::reverse(f.reshapes))
    r.erase();
  if (f.biasAdd)
    f.biasAdd.erase();
  f.matmul.erase();
  if (f.transpose)
    f.transpose.erase();
  return results;
}

struct TPSplitFusedProjectionsPass
    : tp::impl::TPSplitFusedProjectionsBase<TPSplitFusedProjectionsPass> {
  using TPSplitFusedProjectionsBase::TPSplitFusedProjectionsBase;

  void runOnOperation() override {
    Plan plan;
    // A bad plan is reported by tp-apply-plan, with its context.
    if (!planFile.empty())
      (void)readPlanFile(planFile, plan);
    (void)addEntries(entries, plan);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      llvm::StringMap<SmallVector<unsigned>> modules = weightsByModule(func);
      // The entry that applies to each module, as tp-apply-plan decides it
      // (an ambiguous plan is reported there).
      SmallVector<std::string> names;
      for (auto &entry : modules)
        names.push_back(entry.getKey().str());
      llvm::sort(names);
      PlanMatches matches;
      if (resolvePlanEntries(plan.entries, names, matches))
        continue;
      for (auto [e, applies] : llvm::zip(plan.entries, matches.applies)) {
        if (StringRef(e.style).split('@').first != "colwise")
          continue;
        for (const std::string &module : applies) {
          ProjectionWeights p =
              projectionWeights(func, modules.lookup(module), module);
          if (!p.weight)
            continue;
          if (auto f = match(func, *p.weight, p.bias))
            separateMergedHeads(func, rewrite(func, *f));
        }
      }
      func.setType(FunctionType::get(func.getContext(),
                                     func.getBody().getArgumentTypes(),
                                     func.getResultTypes()));
    }
  }
};

} // namespace
