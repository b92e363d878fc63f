//===- PadUneven.cpp - the tp-pad-uneven pass -----------------------------===//
//
// Makes every split even, so that tp-partition only ever divides exactly.
// A dim of n elements split k ways is padded at its end to k * ceil(n / k):
// device i holds elements [i * ceil(n/k), (i+1) * ceil(n/k)) of it, which
// are torch.chunk's blocks (the first devices hold ceil(n / k), the last the
// rest, possibly nothing), followed by padding. This is GSPMD's choice over
// per-device shapes: the program stays one SPMD program with static shapes,
// and every collective moves equal blocks.
//
// Each op sizes its dims from its own sharding rule: a factor split k ways
// is padded to a multiple of k, so a reshape, a matmul and an elementwise op
// agree on where the padding lies inside a compound dim. Padding holds
// whatever the ops compute from it; an op that reduces over a padded factor
// (a contraction, a sum or mean, a softmax) first selects its neutral
// element there (a select, so that inf or NaN in the padding cannot leak).
// Where a value is produced with one padding and read with another (or
// none), a whole-dim slice cuts the padding off and a concat with zeros
// adds the new one. The padding is recorded (`tp.padded_dims`): tp-partition
// reads the real sizes from it where they matter (a mean's count, a
// vocab-parallel lookup's negative ids, the report's bytes).
//
//===----------------------------------------------------------------------===//
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Sharding/Padding.h"
#include "tp/Sharding/Passes.h"
#include "tp/Sharding/Sharding.h"
#include "tp/Sharding/ShardingRule.h"
#include "tp/Sharding/ValueNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <numeric>

namespace mlir::tp {
#define GEN_PASS_DEF_TPPADUNEVEN
#include "tp/Sharding/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// How an op reads and writes its tensors: every tensor's padding, and each
/// factor's padded size.
struct OpPadding {
  SmallVector<TensorPadding> operands, results;
  SmallVector<int64_t> factorPadded;
};

class Padder {
public:
  Padder(func::FuncOp func, const Mesh &mesh)
      : func(func), mesh(mesh), b(func.getContext()) {}
  LogicalResult run();

private:
  func::FuncOp func;
  const Mesh &mesh;
  OpBuilder b;
  DenseMap<Value, TensorPadding> padding;
  /// Types and rules of the global program as it was, before any padding.
  DenseMap<Value, RankedTensorType> globalTypes;
  std::map<std::pair<void *, std::string>, Value> converted, masked;
  std::map<std::string, Value> maskConstants;

  /// `v`'s type in the global program (its own type until it is padded).
  RankedTensorType globalType(Value v) const {
    if (RankedTensorType t = globalTypes.lookup(v))
      return t;
    return cast<RankedTensorType>(v.getType());
  }
  TensorSharding layoutOf(Operation *op, StringRef attrName, unsigned i,
                          int64_t rank) const;
  TensorPadding wholeDims(RankedTensorType type,
                          const TensorSharding &s) const;
  OpPadding paddingOf(Operation *op, const ShardingRule &rule) const;
  FailureOr<Value> convert(Value v, const TensorPadding &want,
                           const TensorSharding &readAs, Operation *user);
  Value mask(Value v, const TensorPadding &pad, int64_t dim,
             const TensorSharding &layout, Attribute neutral);
  /// How `op` pads its tensors: from its rule's factors, or (an op without
  /// a rule, the return) each dim whole.
  OpPadding opPadding(Operation *op,
                      const std::optional<ShardingRule> &rule) const;
  LogicalResult padOp(Operation *op, const std::optional<ShardingRule> &rule);
  /// Whether any argument (in `argPadding`), op or result is padded (a
  /// split that does not divide somewhere).
  bool anyPadding(ArrayRef<TensorPadding> argPadding,
                  ArrayRef<Operation *> ops) const;
  /// Notes the padding of `op`'s results on it, for tp-partition.
  void record(Operation *op);
  void setAttrs(Operation *op, ArrayRef<TensorSharding> ins,
                const TensorSharding &out);
};

} // namespace

static int64_t roundUp(int64_t n, int64_t k) { return (n + k - 1) / k * k; }

TensorSharding Padder::layoutOf(Operation *op, StringRef attrName, unsigned i,
                                int64_t rank) const {
  auto list = op->getAttrOfType<ArrayAttr>(attrName);
  if (!list || i >= list.size())
    return TensorSharding::replicated(rank);
  std::string error;
  auto s = TensorSharding::fromAttr(cast<ShardingAttr>(list[i]), mesh, rank,
                                    error);
  return succeeded(s) ? *s : TensorSharding::replicated(rank);
}

/// Padding of a tensor whose dims are each one factor (arguments, results,
/// ops without a rule).
TensorPadding Padder::wholeDims(RankedTensorType type,
                                const TensorSharding &s) const {
  TensorPadding out;
  for (auto [d, n] : llvm::enumerate(type.getShape())) {
    int64_t k = s.splitFactor(d, mesh);
    out.push_back(canonicalPadding({{n, roundUp(n, k)}}, n));
  }
  return out;
}

/// Hands each dim's mesh axes to its factors major first (as propagation
/// does): a factor takes axes while they divide what is left of it; the
/// axis that does not divide it splits it unevenly. A factor split k ways
/// anywhere in the op is padded to a multiple of k everywhere in it.
OpPadding Padder::paddingOf(Operation *op, const ShardingRule &rule) const {
  SmallVector<int64_t> split(rule.numFactors(), 1);
  auto visit = [&](const TensorFactors &dims,
                   const TensorSharding &s) {
    for (auto [d, factors] : llvm::enumerate(dims)) {
      if (factors.empty())
        continue;
      size_t idx = 0;
      int64_t left = rule.sizes[factors[0]], k = 1;
      for (int axis : s.dims[d]) {
        while (left == 1 && idx + 1 < factors.size()) {
          split[factors[idx]] = std::lcm(split[factors[idx]], k);
          left = rule.sizes[factors[++idx]];
          k = 1;
        }
        int64_t m = mesh.sizes[axis];
        k *= m;
        left = left % m == 0 ? left / m : 1;
      }
      split[factors[idx]] = std::lcm(split[factors[idx]], k);
    }
  };
  for (auto [i, dims] : llvm::enumerate(rule.operands))
    visit(dims, layoutOf(op, kInShardingsAttr, i, dims.size()));
  for (auto [i, dims] : llvm::enumerate(rule.results))
    visit(dims, layoutOf(op, kOutShardingsAttr, i, dims.size()));

  OpPadding out;
  for (int f = 0; f < rule.numFactors(); ++f)
    out.factorPadded.push_back(roundUp(rule.sizes[f], split[f]));
  auto tensor = [&](const TensorFactors &dims, Value v) {
    TensorPadding t;
    auto shape = globalType(v).getShape();
    for (auto [d, factors] : llvm::enumerate(dims)) {
      // A dim the rule does not factor exactly (a concat's operands along
      // its axis share the result's factor) is whole: it is never split.
      int64_t size = 1;
      SmallVector<PadBlock> blocks;
      for (int f : factors) {
        size *= rule.sizes[f];
        blocks.push_back({rule.sizes[f], out.factorPadded[f]});
      }
      if (!factors.empty() && size != shape[d])
        blocks = {{shape[d], shape[d]}};
      t.push_back(canonicalPadding(blocks, shape[d]));
    }
    return t;
  };
  for (auto [i, dims] : llvm::enumerate(rule.operands))
    out.operands.push_back(tensor(dims, op->getOperand(i)));
  for (auto [i, dims] : llvm::enumerate(rule.results))
    out.results.push_back(tensor(dims, op->getResult(i)));
  return out;
}

void Padder::setAttrs(Operation *op, ArrayRef<TensorSharding> ins,
                      const TensorSharding &out) {
  SmallVector<Attribute> in;
  for (const TensorSharding &s : ins)
    in.push_back(s.toAttr(b.getContext(), mesh));
  op->setAttr(kInShardingsAttr, b.getArrayAttr(in));
  op->setAttr(kOutShardingsAttr,
              b.getArrayAttr({out.toAttr(b.getContext(), mesh)}));
}

static RankedTensorType withShape(Value v, ArrayRef<int64_t> shape) {
  return cast<RankedTensorType>(v.getType()).clone(shape);
}

/// `v` (padded as recorded) re-laid out as `want`: on every dim where the
/// two differ, the dim is made whole (`readAs` elsewhere), the padding cut
/// off by a slice and the new one added by a concat with zeros; the user
/// then slices its block as from any whole dim.
FailureOr<Value> Padder::convert(Value v, const TensorPadding &want,
                                 const TensorSharding &readAs,
                                 Operation *user) {
  TensorPadding have = padding[v]; // a copy: converting inserts into the map
  if (have == want)
    return v;

  std::string key;
  for (const DimPadding &d : want)
    key += describePadding(d) + ";";
  auto cacheKey = std::make_pair(v.getAsOpaquePointer(), key);
  if (auto it = converted.find(cacheKey); it != converted.end())
    return it->second;

  TensorSharding whole = readAs;
  whole.partial.clear();
  SmallVector<int64_t> shape(cast<RankedTensorType>(v.getType()).getShape());
  SmallVector<int64_t> dims;
  for (size_t d = 0; d < want.size(); ++d) {
    if (have[d] == want[d])
      continue;
    if (have[d].size() > 1 || want[d].size() > 1)
      return user->emitError()
             << "cannot lay out " << describeValue(v) << " dim " << d
             << " (" << describePadding(have[d]) << ") as " << describePadding(want[d])
             << ": an uneven split inside a reshaped dim is not supported; "
                "make the split even or keep that dim whole in the plan",
             failure();
    dims.push_back(d);
    whole.dims[d].clear();
  }
  b.setInsertionPoint(user);
  Location loc = user->getLoc();
  // Cut the padding off (once per value and dims, however many users want
  // it re-padded).
  if (llvm::any_of(dims, [&](int64_t d) { return isPadded(have[d]); })) {
    TensorPadding cut = have;
    for (int64_t d : dims)
      cut[d] = {{realSize(have[d]), realSize(have[d])}};
    if (cut != want) {
      FailureOr<Value> c = convert(v, cut, readAs, user);
      if (failed(c))
        return failure();
      v = *c;
      shape.assign(cast<RankedTensorType>(v.getType()).getShape().begin(),
                   cast<RankedTensorType>(v.getType()).getShape().end());
    } else {
      SmallVector<int64_t> starts(shape.size(), 0), steps(shape.size(), 1);
      SmallVector<int64_t> limits(shape);
      for (int64_t d : dims)
        limits[d] = realSize(have[d]);
      v = SliceOp::create(b, loc, withShape(v, limits), v, starts, limits,
                          steps);
      setAttrs(v.getDefiningOp(), {whole}, whole);
      shape = limits;
    }
  }
  // Add the new one.
  for (int64_t d : dims) {
    if (!isPadded(want[d]))
      continue;
    SmallVector<int64_t> zerosShape(shape);
    zerosShape[d] = paddedSize(want[d]) - shape[d];
    auto zerosType = withShape(v, zerosShape);
    Value zeros = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(zerosType,
                               b.getZeroAttr(zerosType.getElementType())));
    shape[d] = paddedSize(want[d]);
    v = ConcatOp::create(b, loc, withShape(v, shape), ValueRange{v, zeros},
                         d);
    setAttrs(v.getDefiningOp(), {whole, whole}, whole);
  }
  padding[v] = want;
  if (Operation *def = v.getDefiningOp())
    record(def);
  converted[cacheKey] = v;
  return v;
}

/// `v` with its padding along `dim` replaced by `neutral` (a select with a
/// constant mask of the dim's element places).
Value Padder::mask(Value v, const TensorPadding &pad, int64_t dim,
                   const TensorSharding &layout, Attribute neutral) {
  std::string neutralText;
  llvm::raw_string_ostream(neutralText) << neutral << dim;
  auto key = std::make_pair(v.getAsOpaquePointer(), neutralText);
  if (auto it = masked.find(key); it != masked.end())
    return it->second;
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> maskShape(type.getRank(), 1);
  maskShape[dim] = type.getDimSize(dim);
  auto maskType = RankedTensorType::get(maskShape, b.getI1Type());
  Location loc = v.getLoc();
  // One constant per mask shape and padding, however many ops it masks.
  std::string placesKey;
  llvm::raw_string_ostream(placesKey)
      << maskType << describePadding(pad[dim]);
  Value &places = maskConstants[placesKey];
  if (!places) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&func.getBody().front());
    places = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(maskType, ArrayRef(elementPlaces(pad[dim]))));
  }
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  Value fill =
      ConstantOp::create(b, loc, DenseElementsAttr::get(scalarType, neutral));
  TensorSharding maskLayout = TensorSharding::replicated(type.getRank());
  maskLayout.dims[dim] = layout.dims[dim];
  TensorSharding noPartial = layout;
  noPartial.partial.clear();
  auto select = WhereOp::create(b, loc, type, places, v, fill);
  setAttrs(select, {maskLayout, noPartial, TensorSharding::replicated(0)},
           noPartial);
  padding[select] = pad;
  record(select);
  masked[key] = select;
  return select;
}

/// The factors an op sums over (or normalizes over, for a softmax), whose
/// padding must not count.
static SmallVector<int> reducedFactors(Operation *op,
                                       const ShardingRule &rule) {
  SmallVector<int> out;
  if (isa<SoftmaxOp, LogSoftmaxOp>(op)) {
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    out.append(rule.operands[0][axis]);
    return out;
  }
  if (!isa<MatMulOp, ReduceSumOp, ReduceMeanOp, ConvOp, ConvInputGradOp,
           ConvFilterGradOp>(op))
    return out; // a gather never reads its table's padding
  for (int f = 0; f < rule.numFactors(); ++f)
    if (rule.kinds[f] == FactorKind::Reduction)
      out.push_back(f);
  return out;
}

void Padder::record(Operation *op) {
  SmallVector<Attribute> results;
  bool any = false;
  for (Value r : op->getResults()) {
    any |= isPadded(padding[r]);
    results.push_back(paddingToAttr(op->getContext(), padding[r]));
  }
  if (any)
    op->setAttr(kPaddedDimsAttr, b.getArrayAttr(results));
}

OpPadding Padder::opPadding(Operation *op,
                            const std::optional<ShardingRule> &rule) const {
  if (rule)
    return paddingOf(op, *rule);
  OpPadding pads;
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    RankedTensorType type = globalType(v);
    pads.operands.push_back(wholeDims(
        type, layoutOf(op, kInShardingsAttr, i, type.getRank())));
  }
  for (auto [i, v] : llvm::enumerate(op->getResults())) {
    RankedTensorType type = globalType(v);
    pads.results.push_back(wholeDims(
        type, layoutOf(op, kOutShardingsAttr, i, type.getRank())));
  }
  return pads;
}

LogicalResult Padder::padOp(Operation *op,
                            const std::optional<ShardingRule> &rule) {
  OpPadding pads = opPadding(op, rule);
  // Operands in the op's padding.
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    Value v = op->getOperand(i);
    int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
    auto c = convert(v, pads.operands[i],
                     layoutOf(op, kInShardingsAttr, i, rank), op);
    if (failed(c))
      return failure();
    op->setOperand(i, *c);
  }
  // Padding that a reduction would count: neutral elements instead.
  if (rule) {
    SmallVector<int> reduced = reducedFactors(op, *rule);
    for (int f : reduced) {
      if (pads.factorPadded[f] == rule->sizes[f])
        continue;
      b.setInsertionPoint(op);
      for (unsigned i = 0; i < op->getNumOperands(); ++i) {
        for (auto [d, factors] : llvm::enumerate(rule->operands[i])) {
          if (!llvm::is_contained(factors, f))
            continue;
          Type elt = cast<RankedTensorType>(op->getOperand(i).getType())
                         .getElementType();
          Attribute neutral =
              isa<SoftmaxOp, LogSoftmaxOp>(op)
                  ? b.getFloatAttr(elt, APFloat::getLargest(
                                            cast<FloatType>(elt)
                                                .getFloatSemantics(),
                                            /*Negative=*/true))
                  : b.getZeroAttr(elt);
          int64_t rank =
              cast<RankedTensorType>(op->getOperand(i).getType()).getRank();
          op->setOperand(i, mask(op->getOperand(i), pads.operands[i], d,
                                 layoutOf(op, kInShardingsAttr, i, rank),
                                 neutral));
        }
      }
    }
  }
  // Results in the op's padding.
  for (auto [i, r] : llvm::enumerate(op->getResults())) {
    SmallVector<int64_t> shape;
    for (const DimPadding &d : pads.results[i])
      shape.push_back(paddedSize(d));
    r.setType(withShape(r, shape));
    padding[r] = pads.results[i];
  }
  record(op);
  if (auto slice = dyn_cast<SliceOp>(op)) {
    // Sliced dims are whole (the rule keeps them so); others are taken
    // whole, padding included.
    auto in = cast<RankedTensorType>(slice.getInput().getType());
    SmallVector<int64_t> limits(slice.getLimits());
    for (int64_t d = 0; d < in.getRank(); ++d)
      if (isPadded(pads.operands[0][d]))
        limits[d] = in.getDimSize(d);
    slice.setLimits(limits);
  }
  return success();
}

bool Padder::anyPadding(ArrayRef<TensorPadding> argPadding,
                        ArrayRef<Operation *> ops) const {
  if (llvm::any_of(argPadding,
                   [](const TensorPadding &t) { return isPadded(t); }))
    return true;
  // Each rule is dropped once read: kept for every op of a deep model,
  // they were megabytes of fresh pages for an answer that is mostly no.
  for (Operation *op : ops) {
    std::optional<ShardingRule> rule = getShardingRule(op);
    OpPadding p = opPadding(op, rule);
    if (rule ? p.factorPadded != rule->sizes
             : llvm::any_of(llvm::concat<const TensorPadding>(p.operands,
                                                              p.results),
                            [](const TensorPadding &t) { return isPadded(t); }))
      return true;
  }
  return false;
}

LogicalResult Padder::run() {
  Block &body = func.getBody().front();
  size_t numOps = body.getOperations().size();
  if (failed(checkGlobalTensors(func, "tp-pad-uneven")))
    return failure();
  SmallVector<Operation *> ops;
  ops.reserve(numOps);
  for (Operation &op : body)
    ops.push_back(&op);
  SmallVector<TensorPadding> argPadding;
  for (BlockArgument arg : body.getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    TensorSharding s = TensorSharding::replicated(type.getRank());
    if (auto attr = func.getArgAttrOfType<ShardingAttr>(arg.getArgNumber(),
                                                        kShardingAttr)) {
      std::string error;
      auto read = TensorSharding::fromAttr(attr, mesh, type.getRank(), error);
      if (failed(read))
        return emitError(arg.getLoc()) << error, failure();
      s = *read;
    }
    argPadding.push_back(wholeDims(type, s));
  }
  // Most plans split evenly: then no tensor is padded and every op reads
  // what its producer wrote, so the function stays as it is (a deep
  // model's thousands of ops need no conversions looked up).
  if (!anyPadding(argPadding, ops))
    return success();
  // The rules and shapes of the global program, taken before any op is
  // padded; the rules kept beside the ops (a map of rules, rehashed as it
  // grows, moved every rule several times).
  std::vector<std::optional<ShardingRule>> rules;
  rules.reserve(numOps);
  globalTypes.reserve(numOps + body.getNumArguments());
  padding.reserve(numOps + body.getNumArguments());
  for (Operation *op : ops) {
    rules.push_back(getShardingRule(op));
    for (Value v : op->getResults())
      globalTypes[v] = cast<RankedTensorType>(v.getType());
  }
  for (BlockArgument arg : body.getArguments())
    globalTypes[arg] = cast<RankedTensorType>(arg.getType());
  for (auto [arg, argPad] : llvm::zip_equal(body.getArguments(), argPadding)) {
    auto type = cast<RankedTensorType>(arg.getType());
    padding[arg] = argPad;
    if (isPadded(padding[arg]))
      func.setArgAttr(arg.getArgNumber(), kPaddedDimsAttr,
                      paddingToAttr(func.getContext(), padding[arg]));
    SmallVector<int64_t> shape;
    for (const DimPadding &d : padding[arg])
      shape.push_back(paddedSize(d));
    arg.setType(type.clone(shape));
  }
  for (auto [op, rule] : llvm::zip_equal(ops, rules)) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
        Value v = ret.getOperand(i);
        auto type = cast<RankedTensorType>(v.getType());
        SmallVector<int64_t> realShape;
        for (const DimPadding &d : padding[v])
          realShape.push_back(realSize(d));
        TensorSharding s =
            layoutOf(op, kInShardingsAttr, i, type.getRank());
        auto c = convert(v, wholeDims(type.clone(realShape), s), s, op);
        if (failed(c))
          return failure();
        ret.setOperand(i, *c);
      }
      continue;
    }
    for (Value v : op->getOperands())
      if (!padding.count(v))
        return op->emitError("internal: tp-pad-uneven met an operand "
                             "defined outside the function body"),
               failure();
    if (failed(padOp(op, rule)))
      return failure();
  }
  func.setType(FunctionType::get(
      func.getContext(), body.getArgumentTypes(),
      body.getTerminator()->getOperandTypes()));
  return success();
}

namespace {
struct TPPadUnevenPass : tp::impl::TPPadUnevenBase<TPPadUnevenPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!module.lookupSymbol<shard::GridOp>(kMeshSymbol))
      return; // nothing is split
    FailureOr<Mesh> mesh = getMesh(module);
    if (failed(mesh))
      return signalPassFailure();
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      Padder padder(func, *mesh);
      if (failed(padder.run()))
        return signalPassFailure();
    }
  }
};
} // namespace
