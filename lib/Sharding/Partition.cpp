//===- Partition.cpp - the tp-partition pass ------------------------------===//
//
// Rewrites the function, op by op, into its per-device form: local types
// everywhere, and a resharding (upstream shard collectives) wherever the
// layout a value is produced in differs from the layout its user reads.
//
//===----------------------------------------------------------------------===//
#include "tp/Sharding/ValueNames.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Sharding/Padding.h"
#include "tp/Sharding/Passes.h"
#include "tp/Sharding/Sharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <deque>

namespace mlir::tp {
#define GEN_PASS_DEF_TPPARTITION
#include "tp/Sharding/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

class Partitioner {
public:
  Partitioner(func::FuncOp func, const Mesh &mesh)
      : func(func), mesh(mesh), b(func.getContext()) {}
  LogicalResult run();

private:
  func::FuncOp func;
  const Mesh &mesh;
  OpBuilder b;
  /// Old (global) value -> its layout and its per-device replacement.
  /// Each value's layout; kept out of the map (a layout is ~150 bytes that
  /// every rehash moved, for the tens of thousands of values of a deep
  /// step).
  DenseMap<Value, const TensorSharding *> layouts;
  std::deque<TensorSharding> layoutStore;
  void setLayout(Value v, TensorSharding layout) {
    layouts[v] = &layoutStore.emplace_back(std::move(layout));
  }
  DenseMap<Value, Value> local;
  /// Global types of the arguments, whose types become local first.
  DenseMap<Value, RankedTensorType> argTypes;
  /// Reshardings already made, so a value is moved once per target layout.
  std::map<std::pair<void *, std::string>, Value> reshardCache;

  RankedTensorType globalType(Value v) const {
    if (auto t = argTypes.lookup(v))
      return t;
    return cast<RankedTensorType>(v.getType());
  }
  FailureOr<TensorSharding> read(Attribute attr, Value v, Location loc);
  Value reshard(Value global, const TensorSharding &to, Location loc);
  /// How tp-pad-uneven padded `global` (std::nullopt where it did not).
  std::optional<TensorPadding> paddingOf(Value global);
  /// `global`'s shape without its padding.
  SmallVector<int64_t> realShape(Value global);
  /// Notes on a collective of a padded value the real elements each rank
  /// hands to it (for the report).
  void notePadding(Operation *collective, Value global,
                   const TensorSharding &in);
  FailureOr<Value> localOperand(Operation *op, unsigned i,
                                std::optional<Location> at = std::nullopt);
  LogicalResult partitionOp(Operation *op);
  Value processIndex(ArrayRef<int> axes, Location loc);
  Value blockStart(ArrayRef<int> axes, int64_t blockSize, Location loc);
  Operation *partitionSoftmax(Operation *op, Value x, Type type);
  bool partitionPartialSum(Operation *op);
};

} // namespace

FailureOr<TensorSharding> Partitioner::read(Attribute attr, Value v,
                                            Location loc) {
  RankedTensorType type = globalType(v);
  if (!attr)
    return TensorSharding::replicated(type.getRank());
  std::string error;
  auto s = TensorSharding::fromAttr(cast<ShardingAttr>(attr), mesh,
                                    type.getRank(), error);
  if (failed(s))
    return emitError(loc) << error, failure();
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) % s->splitFactor(d, mesh) != 0)
      return emitError(loc) << "cannot split " << describeValue(v) << " "
                            << formatShape(type.getShape()) << " dim " << d
                            << " over " << s->describe(mesh)
                            << ": not divisible",
             failure();
  return s;
}

std::optional<TensorPadding> Partitioner::paddingOf(Value global) {
  Attribute padding;
  if (auto arg = dyn_cast<BlockArgument>(global))
    padding = func.getArgAttr(arg.getArgNumber(), kPaddedDimsAttr);
  else if (auto list = global.getDefiningOp()->getAttrOfType<ArrayAttr>(
               kPaddedDimsAttr))
    padding = list[cast<OpResult>(global).getResultNumber()];
  return paddingFromAttr(padding);
}

SmallVector<int64_t> Partitioner::realShape(Value global) {
  SmallVector<int64_t> shape(globalType(global).getShape());
  if (std::optional<TensorPadding> padding = paddingOf(global))
    for (auto [d, dim] : llvm::enumerate(*padding))
      shape[d] = realSize(dim);
  return shape;
}

void Partitioner::notePadding(Operation *collective, Value global,
                              const TensorSharding &in) {
  std::optional<TensorPadding> blocks = paddingOf(global);
  if (!blocks)
    return;
  SmallVector<int64_t> real;
  for (int64_t r = 0; r < mesh.numDevices(); ++r)
    real.push_back(realElementsOnRank(*blocks, in, mesh, r));
  collective->setAttr(kRealElementsAttr, b.getDenseI64ArrayAttr(real));
}

/// Moves `global`'s per-device value from its layout to `to`: partial sums
/// are all-reduced or reduce-scattered, splits that go away are gathered
/// (or all-to-all'd into the dim that needs them), new splits are local
/// slices.
Value Partitioner::reshard(Value global, const TensorSharding &to,
                           Location loc) {
  const TensorSharding *known = layouts.lookup(global);
  TensorSharding cur = known ? *known : TensorSharding();
  Value v = local.lookup(global);
  if (cur == to)
    return v;
  auto key = std::make_pair(global.getAsOpaquePointer(), to.describe(mesh));
  if (auto it = reshardCache.find(key); it != reshardCache.end())
    return it->second;

  RankedTensorType gType = globalType(global);
  StringRef grid = kMeshSymbol;
  auto typeFor = [&](const TensorSharding &s) {
    return s.localType(gType, mesh);
  };
  auto extendsBy = [&](int d, int axis) {
    SmallVector<int> want(cur.dims[d]);
    want.push_back(axis);
    return to.dims[d] == want;
  };

  // 1. Partial sums.
  for (int axis : SmallVector<int>(cur.partial)) {
    TensorSharding before = cur;
    cur.partial.erase(llvm::find(cur.partial, axis));
    int scatterDim = -1;
    for (int d = 0; d < int(cur.dims.size()); ++d)
      if (extendsBy(d, axis))
        scatterDim = d;
    if (scatterDim >= 0) {
      cur.dims[scatterDim].push_back(axis);
      v = shard::ReduceScatterOp::create(
          b, loc, typeFor(cur), FlatSymbolRefAttr::get(b.getContext(), grid),
          b.getDenseI16ArrayAttr({int16_t(axis)}), v,
          shard::ReductionKindAttr::get(b.getContext(),
                                        shard::ReductionKind::Sum),
          b.getIndexAttr(scatterDim));
    } else {
      v = shard::AllReduceOp::create(b, loc, typeFor(cur), grid,
                                     {int16_t(axis)}, v);
    }
    notePadding(v.getDefiningOp(), global, before);
  }
  // 2. Splits that the target does not have, innermost first.
  for (int d = 0; d < int(cur.dims.size()); ++d) {
    while (!(cur.dims[d].size() <= to.dims[d].size() &&
             std::equal(cur.dims[d].begin(), cur.dims[d].end(),
                        to.dims[d].begin()))) {
      TensorSharding before = cur;
      int axis = cur.dims[d].pop_back_val();
      int moveTo = -1;
      for (int e = 0; e < int(cur.dims.size()); ++e)
        if (e != d && extendsBy(e, axis))
          moveTo = e;
      if (moveTo >= 0) {
        cur.dims[moveTo].push_back(axis);
        v = shard::AllToAllOp::create(
            b, loc, typeFor(cur), FlatSymbolRefAttr::get(b.getContext(), grid),
            b.getDenseI16ArrayAttr({int16_t(axis)}), v,
            b.getIndexAttr(moveTo), b.getIndexAttr(d));
      } else {
        v = shard::AllGatherOp::create(
            b, loc, typeFor(cur), FlatSymbolRefAttr::get(b.getContext(), grid),
            b.getDenseI16ArrayAttr({int16_t(axis)}), v, b.getIndexAttr(d));
      }
      notePadding(v.getDefiningOp(), global, before);
    }
  }
  // 3. New splits: each device keeps its slice, no communication. A splat
  // constant (the zeros of a padding, a fill) is built at the local shape
  // instead of whole and sliced.
  if (auto c = v.getDefiningOp<ConstantOp>()) {
    auto attr = dyn_cast<DenseElementsAttr>(c.getValue());
    if (attr && attr.isSplat()) {
      cur.dims = to.dims;
      v = ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(cast<ShapedType>(typeFor(cur)),
                                 attr.getSplatValue<Attribute>()));
      reshardCache[key] = v;
      return v;
    }
  }
  for (int d = 0; d < int(cur.dims.size()); ++d)
    for (size_t i = cur.dims[d].size(); i < to.dims[d].size(); ++i) {
      int axis = to.dims[d][i];
      TensorSharding before = cur;
      cur.dims[d].push_back(axis);
      v = shard::AllSliceOp::create(
          b, loc, typeFor(cur), FlatSymbolRefAttr::get(b.getContext(), grid),
          b.getDenseI16ArrayAttr({int16_t(axis)}), v, b.getIndexAttr(d));
      notePadding(v.getDefiningOp(), global, before);
    }
  reshardCache[key] = v;
  return v;
}

FailureOr<Value> Partitioner::localOperand(Operation *op, unsigned i,
                                           std::optional<Location> at) {
  auto ins = op->getAttrOfType<ArrayAttr>(kInShardingsAttr);
  Value global = op->getOperand(i);
  auto to = read(ins ? ins[i] : Attribute(), global, op->getLoc());
  if (failed(to))
    return failure();
  return reshard(global, *to, at ? *at : op->getLoc());
}

/// The linear index of this device along `axes` (major first).
Value Partitioner::processIndex(ArrayRef<int> axes, Location loc) {
  SmallVector<int16_t> gridAxes(axes.begin(), axes.end());
  auto idx = shard::ProcessMultiIndexOp::create(b, loc, kMeshSymbol, gridAxes);
  Value linear = idx->getResult(0);
  for (size_t i = 1; i < axes.size(); ++i) {
    Value size = arith::ConstantIndexOp::create(b, loc, mesh.sizes[axes[i]]);
    linear = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, linear, size),
        idx->getResult(i));
  }
  return linear;
}

/// The first global index of this device's block of `blockSize` along
/// `axes` (index-typed): its process index times the block's size. One op
/// per statement: the order of a call's arguments is unspecified, and the
/// IR would differ between compilers.
Value Partitioner::blockStart(ArrayRef<int> axes, int64_t blockSize,
                              Location loc) {
  Value index = processIndex(axes, loc);
  Value size = arith::ConstantIndexOp::create(b, loc, blockSize);
  return arith::MulIOp::create(b, loc, index, size);
}

/// Softmax / LogSoftmax over a split axis: the max and the sum of
/// exponentials along the axis are all-reduced (max, then sum) over the
/// axes splitting it; the result keeps the split. Returns null when the
/// axis is whole (the op is then copied as is).
Operation *Partitioner::partitionSoftmax(Operation *op, Value x, Type type) {
  int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
  std::string error;
  auto in = TensorSharding::fromAttr(
      cast<ShardingAttr>(op->getAttrOfType<ArrayAttr>(kInShardingsAttr)[0]),
      mesh, globalType(op->getOperand(0)).getRank(), error);
  ArrayRef<int> axes = in->dims[axis];
  if (axes.empty())
    return nullptr;
  Location loc = op->getLoc();
  auto localType = cast<RankedTensorType>(type);
  SmallVector<int64_t> rowShape(localType.getShape());
  rowShape[axis] = 1;
  auto rowType = RankedTensorType::get(rowShape, localType.getElementType());
  auto axesAttr = b.getDenseI64ArrayAttr({axis});
  auto allReduce = [&](Value v, shard::ReductionKind kind) {
    for (int a : axes)
      v = shard::AllReduceOp::create(b, loc, v.getType(), kMeshSymbol,
                                     {int16_t(a)}, v, kind);
    return v;
  };
  Value max = allReduce(ReduceMaxOp::create(b, loc, rowType, x, axesAttr,
                                            b.getBoolAttr(true)),
                        shard::ReductionKind::Max);
  Value shifted = SubOp::create(b, loc, localType, x, max);
  Value exp = ExpOp::create(b, loc, localType, shifted);
  Value sum = allReduce(ReduceSumOp::create(b, loc, rowType, exp, axesAttr,
                                            b.getBoolAttr(true)),
                        shard::ReductionKind::Sum);
  if (isa<LogSoftmaxOp>(op))
    return SubOp::create(b, loc, localType, shifted,
                         LogOp::create(b, loc, rowType, sum));
  return DivOp::create(b, loc, localType, exp, sum);
}

/// Add / Sub of two partial sums over the same mesh axes (a gradient
/// accumulated from several split matmuls, like Q, K and V's input
/// gradients): summed locally, the result stays partial, so that its users
/// all-reduce it once instead of each operand once.
bool Partitioner::partitionPartialSum(Operation *op) {
  Value x = op->getOperand(0), y = op->getOperand(1);
  Value r = op->getResult(0);
  if (globalType(x) != globalType(y) ||
      globalType(x) != cast<RankedTensorType>(r.getType()))
    return false;
  auto lx = layouts.find(x), ly = layouts.find(y);
  if (lx == layouts.end() || ly == layouts.end() ||
      lx->second->partial.empty() || !(*lx->second == *ly->second))
    return false;
  TensorSharding sum = *lx->second;
  auto ins = op->getAttrOfType<ArrayAttr>(kInShardingsAttr);
  for (unsigned i = 0; i < 2; ++i) {
    auto want = read(ins ? ins[i] : Attribute(), op->getOperand(i),
                     op->getLoc());
    if (failed(want) || want->dims != sum.dims)
      return false;
  }
  Value lhs = local.lookup(x), rhs = local.lookup(y);
  Operation *newOp =
      isa<AddOp>(op)
          ? AddOp::create(b, op->getLoc(), lhs.getType(), lhs, rhs)
          : SubOp::create(b, op->getLoc(), lhs.getType(), lhs, rhs);
  local[r] = newOp->getResult(0);
  setLayout(r, std::move(sum));
  return true;
}

LogicalResult Partitioner::partitionOp(Operation *op) {
  Location loc = op->getLoc();
  if (isa<AddOp, SubOp>(op) && partitionPartialSum(op))
    return success();
  SmallVector<Value> operands;
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    auto v = localOperand(op, i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  auto outs = op->getAttrOfType<ArrayAttr>(kOutShardingsAttr);
  SmallVector<Type> types;
  SmallVector<TensorSharding> outLayouts;
  for (auto [i, r] : llvm::enumerate(op->getResults())) {
    auto s = read(outs ? outs[i] : Attribute(), r, loc);
    if (failed(s))
      return failure();
    outLayouts.push_back(*s);
    types.push_back(s->localType(globalType(r), mesh));
  }

  Operation *newOp = nullptr;
  auto ins = op->getAttrOfType<ArrayAttr>(kInShardingsAttr);
  if (auto gather = dyn_cast<GatherOp>(op)) {
    // Vocab-parallel lookup: ids outside this device's slice give zeros;
    // the result is a partial sum over the vocab axes.
    std::string error;
    auto dataLayout = TensorSharding::fromAttr(
        cast<ShardingAttr>(ins[0]), mesh, globalType(gather.getData()).getRank(),
        error);
    ArrayRef<int> vocabAxes = dataLayout->dims[gather.getAxis()];
    if (!vocabAxes.empty()) {
      int64_t sliceRows =
          cast<RankedTensorType>(operands[0].getType()).getDimSize(
              gather.getAxis());
      Value offset = arith::IndexCastOp::create(
          b, loc, b.getI64Type(), blockStart(vocabAxes, sliceRows, loc));
      Value offsetTensor = tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, b.getI64Type()), offset);
      // Negative ids count from the end of the whole table (its real rows,
      // when it is padded).
      Value ids = wrapNegativeIndices(
          b, loc, operands[1], realShape(gather.getData())[gather.getAxis()]);
      newOp = MaskedGatherOp::create(b, loc, types[0], operands[0], ids,
                                     offsetTensor, gather.getAxis());
    }
  } else if (auto oneHot = dyn_cast<OneHotOp>(op)) {
    // A split class dim: this device encodes classes [offset + i * depth,
    // ...) of its slice; labels elsewhere give zero rows.
    ArrayRef<int> classAxes = outLayouts[0].dims.back();
    if (!classAxes.empty()) {
      int64_t depth = cast<RankedTensorType>(types[0]).getShape().back();
      Value first = blockStart(classAxes, depth, loc);
      Value firstI64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), first);
      Value base = tensor::ExtractOp::create(b, loc, operands[1], ValueRange{});
      Value offset = arith::AddIOp::create(b, loc, base, firstI64);
      Value offsetTensor = tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, b.getI64Type()), offset);
      newOp = OneHotOp::create(b, loc, types[0], operands[0], offsetTensor);
    }
  } else if (auto drop = dyn_cast<DropoutOp>(op)) {
    // Each split dim's first global index on this device: the mask is
    // drawn by global index, the same on every mesh.
    SmallVector<Value> offsets;
    bool split = false;
    auto local = cast<RankedTensorType>(types[0]);
    for (auto [d, axes] : llvm::enumerate(outLayouts[0].dims)) {
      Value first;
      if (axes.empty()) {
        first = arith::ConstantIndexOp::create(b, loc, 0);
      } else {
        split = true;
        first = blockStart(axes, local.getDimSize(d), loc);
      }
      Value firstI64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), first);
      offsets.push_back(tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, b.getI64Type()), firstI64));
    }
    if (split)
      newOp = DropoutOp::create(b, loc, types[0], operands[0], operands[1],
                                offsets, drop.getRatioAttr(), drop.getSeedAttr(),
                                drop.getSiteAttr(), drop.getGlobalShapeAttr());
  } else if (auto mean = dyn_cast<ReduceMeanOp>(op);
             mean && !outLayouts[0].partial.empty()) {
    // Over split dims each device sums its part; dividing by the global
    // count (of real elements: tp-pad-uneven zeroed the padding) makes the
    // partial sums add up to the mean.
    int64_t count =
        reducedCount(realShape(mean.getInput()), mean.getAxes());
    auto type = cast<RankedTensorType>(types[0]);
    Value sum = ReduceSumOp::create(b, loc, type, operands[0],
                                    mean.getAxesAttr(), mean.getKeepdimsAttr());
    auto scalarType = RankedTensorType::get({}, type.getElementType());
    Value scale = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            scalarType, b.getFloatAttr(type.getElementType(), 1.0 / count)));
    newOp = MulOp::create(b, loc, type, sum, scale);
  } else if (isa<SoftmaxOp, LogSoftmaxOp>(op)) {
    newOp = partitionSoftmax(op, operands[0], types[0]);
  } else if (auto slice = dyn_cast<SliceOp>(op)) {
    // Split dims are never sliced (the rule keeps sliced dims whole): they
    // are taken whole, locally.
    auto localIn = cast<RankedTensorType>(operands[0].getType());
    SmallVector<int64_t> limits(slice.getLimits());
    for (int64_t d = 0; d < localIn.getRank(); ++d)
      if (localIn.getDimSize(d) != globalType(slice.getInput()).getDimSize(d))
        limits[d] = localIn.getDimSize(d);
    newOp = SliceOp::create(b, loc, types[0], operands[0], slice.getStarts(),
                            limits, slice.getSteps());
  }
  if (!newOp) {
    OperationState state(loc, op->getName());
    state.addOperands(operands);
    state.addTypes(types);
    for (NamedAttribute attr : op->getAttrs())
      if (!attr.getName().getValue().starts_with("tp."))
        state.addAttribute(attr.getName(), attr.getValue());
    newOp = b.create(state);
  }
  if (isa<ConvOp, ConvInputGradOp, ConvFilterGradOp>(op) &&
      op->getAttrOfType<IntegerAttr>("group").getInt() != 1) {
    // A depthwise conv (or gradient) split over its channels has as many
    // groups locally as it has channels: the input's channels over the
    // filter's channels per group.
    auto local = [&](Type t) { return cast<RankedTensorType>(t); };
    RankedTensorType input = local(isa<ConvInputGradOp>(op)
                                       ? types[0]
                                       : operands[0].getType());
    RankedTensorType filter = local(isa<ConvFilterGradOp>(op)
                                        ? types[0]
                                        : operands[1].getType());
    newOp->setAttr("group", b.getI64IntegerAttr(input.getDimSize(1) /
                                               filter.getDimSize(1)));
  }
  // Recomputation's marks: --report counts the recomputed ops.
  for (StringRef name : {"tp.recomputed", "tp.rematerialized"})
    if (Attribute mark = op->getAttr(name))
      newOp->setAttr(name, mark);
  for (auto [i, r] : llvm::enumerate(op->getResults())) {
    local[r] = newOp->getResult(i);
    setLayout(r, outLayouts[i]);
  }
  return success();
}

LogicalResult Partitioner::run() {
  Block &body = func.getBody().front();
  // Arguments take their per-device types.
  for (BlockArgument arg : body.getArguments()) {
    auto s = read(func.getArgAttr(arg.getArgNumber(), kShardingAttr), arg,
                  arg.getLoc());
    if (failed(s))
      return failure();
    setLayout(arg, *s);
    local[arg] = arg;
    argTypes[arg] = cast<RankedTensorType>(arg.getType());
    arg.setType(s->localType(argTypes[arg], mesh));
  }
  SmallVector<Operation *> old;
  for (Operation &op : body)
    old.push_back(&op);
  b.setInsertionPoint(body.getTerminator());
  SmallVector<Value> results;
  for (Operation *op : old) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
        // Collectives for a result are named after it.
        Location at = ret.getLoc();
        if (auto name = func.getResultAttrOfType<StringAttr>(i, "tp.output"))
          at = NameLoc::get(b.getStringAttr("output " + name.str()), at);
        auto v = localOperand(op, i, at);
        if (failed(v))
          return failure();
        results.push_back(*v);
      }
      continue;
    }
    if (failed(partitionOp(op)))
      return failure();
  }
  func::ReturnOp::create(b, body.getTerminator()->getLoc(), results);
  // Drop the global program, users first.
  for (Operation *op : llvm::reverse(old)) {
    op->dropAllUses();
    op->erase();
  }
  func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                 TypeRange(ValueRange(results))));
  return success();
}

namespace {
struct TPPartitionPass : tp::impl::TPPartitionBase<TPPartitionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<Mesh> mesh = getMesh(module);
    if (failed(mesh))
      return signalPassFailure();
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      Partitioner partitioner(func, *mesh);
      if (failed(partitioner.run()))
        return signalPassFailure();
    }
  }
};
} // namespace
