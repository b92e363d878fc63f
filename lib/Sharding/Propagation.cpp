//===- Propagation.cpp - the tp-propagate-sharding pass -------------------===//
//
// Every value carries per-dim "hints": mesh axes with a level (0: a plan
// annotation on a weight, 1: a plan annotation on an activation, input or
// output; propagated hints keep the level of their source). An op's rule
// turns the hints of its operands and results into one factor assignment,
// strongest level first, and projects it back onto the hints of its
// operands and results. Hints only get stronger, so this reaches a fixed
// point. Finally every op commits its assignment as tp.in_shardings /
// tp.out_shardings.
//
//===----------------------------------------------------------------------===//
#include "tp/Sharding/ValueNames.h"
#include "tp/Dialect/TP/IR/FunctionAttrs.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Sharding/Passes.h"
#include "tp/Sharding/Sharding.h"
#include "tp/Sharding/ShardingRule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

#include <deque>

namespace mlir::tp {
#define GEN_PASS_DEF_TPPROPAGATESHARDING
#include "tp/Sharding/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

constexpr int kUnset = std::numeric_limits<int>::max();

struct DimHint {
  SmallVector<int, 2> axes;
  int level = kUnset;
};

struct Hints {
  SmallVector<DimHint, 4> dims;
  /// Plan-annotated: never changed by propagation.
  bool closed = false;
  /// Where the first hint came from, for --explain-sharding.
  std::string origin;
  /// The nodes that read or write these hints (to visit when they change).
  SmallVector<unsigned, 2> nodes;
};

/// One op (or the function's return) with its rule and the hints of its
/// operands followed by its results.
struct Node {
  Operation *op = nullptr;
  /// Shared by every op of the same kind, attributes and types.
  const ShardingRule *rule = nullptr;
  SmallVector<Hints *, 4> tensors;
  unsigned numOperands = 0;
  /// Some tensor's hints changed since this node's last visit (a visit of a
  /// node whose hints did not change changes nothing).
  bool dirty = true;

  const TensorFactors &factorsOf(unsigned t) const {
    return t < numOperands ? rule->operands[t] : rule->results[t - numOperands];
  }
};

/// Ops whose rules are equal: the same name, attributes, properties and
/// operand and result types (a rule reads nothing else). A deep model's
/// step has tens of thousands of ops but a few hundred distinct rules.
struct SameRuleInfo : DenseMapInfo<Operation *> {
  static unsigned getHashValue(const Operation *cop) {
    auto *op = const_cast<Operation *>(cop);
    llvm::hash_code hash = OperationEquivalence::computeHash(
        op, OperationEquivalence::ignoreHashValue,
        OperationEquivalence::ignoreHashValue,
        OperationEquivalence::IgnoreLocations);
    for (Type t : op->getOperandTypes())
      hash = llvm::hash_combine(hash, t);
    return hash;
  }
  static bool isEqual(const Operation *clhs, const Operation *crhs) {
    if (clhs == crhs)
      return true;
    if (clhs == getEmptyKey() || clhs == getTombstoneKey() ||
        crhs == getEmptyKey() || crhs == getTombstoneKey())
      return false;
    // Operands compare by type only (isEquivalentTo compares types before
    // it asks about values).
    return OperationEquivalence::isEquivalentTo(
        const_cast<Operation *>(clhs), const_cast<Operation *>(crhs),
        OperationEquivalence::ignoreValueEquivalence, /*markEquivalent=*/nullptr,
        OperationEquivalence::IgnoreLocations);
  }
};

struct Assignment {
  SmallVector<SmallVector<int>> axes;
  SmallVector<int> level;
  SmallVector<int> source; // tensor index the factor's axes came from
};

class Propagator {
public:
  Propagator(func::FuncOp func, const Mesh &mesh, bool recordOrigins)
      : func(func), mesh(mesh), recordOrigins(recordOrigins) {}
  LogicalResult run();

private:
  func::FuncOp func;
  const Mesh &mesh;
  /// Whether to write tp.sharding_origin (only --explain-sharding reads it).
  bool recordOrigins;
  /// Every value's hints, reserved once for all values (so they stay in
  /// place; a deque of them allocated every second one).
  std::vector<Hints> hintStore;
  DenseMap<Value, Hints *> valueHints;
  SmallVector<std::unique_ptr<Hints>> returnHints;
  std::vector<Node> nodes;
  /// Rules, one per kind of op (a deque keeps them in place as it grows).
  std::deque<ShardingRule> ruleStore;
  DenseMap<Operation *, const ShardingRule *, SameRuleInfo> ruleOf;

  Hints &hintsOf(Value v);
  LogicalResult seed();
  Assignment assign(const Node &node) const;
  SmallVector<int> project(const Node &node, const Assignment &a,
                           ArrayRef<int> factors, int &level) const;
  bool setHint(Hints &h, unsigned dim, ArrayRef<int> axes, int level,
               llvm::function_ref<std::string()> origin);
  bool visit(Node &node);
  void commit(Node &node);
  ShardingAttr attrOf(const TensorSharding &s);

  /// Layouts as attributes, by their axes: most values of a deep step share
  /// a few layouts, and each attribute is several uniqued lookups.
  llvm::StringMap<ShardingAttr> attrs;
};

} // namespace

Hints &Propagator::hintsOf(Value v) {
  Hints *&h = valueHints[v];
  if (!h) {
    assert(hintStore.size() < hintStore.capacity() && "hints not reserved");
    h = &hintStore.emplace_back();
    h->dims.resize(cast<RankedTensorType>(v.getType()).getRank());
  }
  return *h;
}

/// The rule of an op tp has none for: every dim whole; warns, naming the
/// ONNX node.
static ShardingRule replicatedRule(Operation &op) {
  std::string where = onnxNodeName(op.getLoc());
  auto diag = op.emitWarning()
              << "no sharding rule for '" << op.getName() << "'";
  if (!where.empty())
    diag << " (ONNX node '" << where << "')";
  diag << "; it runs replicated";
  ShardingRule rule;
  for (Value v : op.getOperands()) {
    TensorFactors dims;
    for (int64_t size : cast<RankedTensorType>(v.getType()).getShape())
      dims.push_back({rule.addFactor(size, FactorKind::Replicated)});
    rule.operands.push_back(dims);
  }
  for (Value v : op.getResults()) {
    TensorFactors dims;
    for (int64_t size : cast<RankedTensorType>(v.getType()).getShape())
      dims.push_back({rule.addFactor(size, FactorKind::Replicated)});
    rule.results.push_back(dims);
  }
  return rule;
}

/// Reads the plan's annotations: func args and results (tp.sharding arg /
/// result attrs) and op results (tp.sharding on the op).
LogicalResult Propagator::seed() {
  size_t numValues = func.getNumArguments();
  for (Operation &op : func.getBody().front())
    numValues += op.getNumResults();
  hintStore.reserve(numValues);
  auto load = [&](Hints &h, ShardingAttr attr, int64_t rank, int level,
                  StringRef origin, Location loc) -> LogicalResult {
    std::string error;
    auto s = TensorSharding::fromAttr(attr, mesh, rank, error);
    if (failed(s))
      return emitError(loc) << error;
    h.closed = true;
    h.origin = origin.str();
    for (auto [d, axes] : llvm::enumerate(s->dims))
      h.dims[d] = DimHint{SmallVector<int, 2>(ArrayRef<int>(axes)), level};
    return success();
  };
  auto originOf = [](DictionaryAttr attrs) {
    auto o = attrs ? attrs.getAs<StringAttr>(kOriginAttr) : StringAttr();
    return o ? o.getValue() : StringRef("tp.sharding annotation");
  };
  for (BlockArgument arg : func.getArguments()) {
    Hints &h = hintsOf(arg);
    DictionaryAttr attrs = func.getArgAttrDict(arg.getArgNumber());
    auto attr = attrs ? attrs.getAs<ShardingAttr>(kShardingAttr)
                      : ShardingAttr();
    if (!attr) {
      h.closed = true;
      h.origin = "unannotated argument (replicated)";
      continue;
    }
    // Weights are the strongest source; unannotated arguments stay whole.
    int level = attrs.get("tp.param") || attrs.get("tp.state") ? 0 : 1;
    if (failed(load(h, attr, h.dims.size(), level, originOf(attrs),
                    arg.getLoc())))
      return failure();
  }
  llvm::StringSet<> weightNames = weightAndStateNames(func);
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto h = std::make_unique<Hints>();
    h->dims.resize(cast<RankedTensorType>(func.getResultTypes()[i]).getRank());
    // A weight's gradient or update (a training step's results named after
    // the weight) is as strong a source as the weight itself.
    DictionaryAttr attrs = func.getResultAttrDict(i);
    auto name = attrs ? attrs.getAs<StringAttr>("tp.output") : StringAttr();
    bool weightLike = false;
    if (name) {
      StringRef w = name.getValue();
      w.consume_front("grad_");
      weightLike = weightNames.contains(w);
    }
    if (auto attr = attrs ? attrs.getAs<ShardingAttr>(kShardingAttr)
                          : ShardingAttr())
      if (failed(load(*h, attr, h->dims.size(), weightLike ? 0 : 1,
                      originOf(attrs), func.getLoc())))
        return failure();
    returnHints.push_back(std::move(h));
  }

  // Node holds a SmallVector, whose moves std::vector does not trust: no
  // reallocation copies them.
  nodes.reserve(func.getBody().front().getOperations().size());
  valueHints.reserve(nodes.capacity() + func.getNumArguments());

  for (Operation &op : func.getBody().front()) {
    Node &node = nodes.emplace_back();
    node.op = &op;
    node.numOperands = op.getNumOperands();
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // The return reads its operands into the function's results.
      ShardingRule &rule = ruleStore.emplace_back();
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        TensorFactors dims;
        for (int64_t size : cast<RankedTensorType>(v.getType()).getShape())
          dims.push_back({rule.addFactor(size, FactorKind::Parallel)});
        rule.operands.push_back(dims);
        rule.results.push_back(dims);
        node.tensors.push_back(&hintsOf(v));
      }
      node.rule = &rule;
      for (auto &h : returnHints)
        node.tensors.push_back(h.get());
      continue;
    }
    const ShardingRule *&shared = ruleOf[&op];
    if (!shared) {
      std::optional<ShardingRule> rule = getShardingRule(&op);
      if (!rule) {
        // Warned once per op, not once per kind: each names its node.
        ruleOf.erase(&op);
        node.rule = &ruleStore.emplace_back(replicatedRule(op));
      } else {
        shared = &ruleStore.emplace_back(std::move(*rule));
      }
    }
    if (!node.rule)
      node.rule = shared;
    for (Value v : op.getOperands())
      node.tensors.push_back(&hintsOf(v));
    for (Value v : op.getResults())
      node.tensors.push_back(&hintsOf(v));
    // Plan annotations on op results (sequence parallelism, for one).
    if (auto attr = op.getAttrOfType<ShardingAttr>(kShardingAttr)) {
      auto origin = op.getAttrOfType<StringAttr>(kOriginAttr);
      if (failed(load(hintsOf(op.getResult(0)), attr,
                      hintsOf(op.getResult(0)).dims.size(), 1,
                      origin ? origin.getValue() : "tp.sharding annotation",
                      op.getLoc())))
        return failure();
    }
  }
  return success();
}

/// Combines the hints on every tensor of `node` into axes per factor,
/// strongest level first; an axis serves one factor, Replicated factors get
/// none, and a factor only takes axes that divide it.
Assignment Propagator::assign(const Node &node) const {
  const ShardingRule &rule = *node.rule;
  struct Candidate {
    int factor;
    SmallVector<int> axes;
    int level;
    int source;
  };
  SmallVector<Candidate> candidates;
  for (auto [t, hints] : llvm::enumerate(node.tensors)) {
    const auto &dims = node.factorsOf(t);
    for (auto [d, factors] : llvm::enumerate(dims)) {
      const DimHint &h = hints->dims[d];
      if (h.axes.empty() || factors.empty())
        continue;
      // Hand the dim's axes to its factors, major first; move to the next
      // factor only once the previous one is fully split. A dim that is one
      // factor may take a last axis that does not divide it (an uneven
      // split, padded by tp-pad-uneven); inside a compound dim the axis
      // stops there instead, so that a reshape never moves padding.
      size_t idx = 0;
      int64_t capacity = rule.sizes[factors[0]];
      SmallVector<SmallVector<int>> pieces(factors.size());
      for (int axis : h.axes) {
        while (capacity == 1 && idx + 1 < factors.size())
          capacity = rule.sizes[factors[++idx]];
        if (capacity % mesh.sizes[axis] != 0) {
          if (factors.size() == 1 && capacity > 1)
            pieces[idx].push_back(axis);
          break;
        }
        pieces[idx].push_back(axis);
        capacity /= mesh.sizes[axis];
      }
      for (auto [i, axes] : llvm::enumerate(pieces))
        if (!axes.empty())
          candidates.push_back({factors[i], axes, h.level, int(t)});
    }
  }
  llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) {
    return a.level < b.level;
  });
  Assignment a;
  a.axes.resize(rule.numFactors());
  a.level.assign(rule.numFactors(), kUnset);
  a.source.assign(rule.numFactors(), -1);
  SmallVector<bool> used(mesh.sizes.size(), false);
  for (const Candidate &c : candidates) {
    if (rule.kinds[c.factor] == FactorKind::Replicated ||
        !a.axes[c.factor].empty() ||
        llvm::any_of(c.axes, [&](int axis) { return used[axis]; }))
      continue;
    a.axes[c.factor] = c.axes;
    a.level[c.factor] = c.level;
    a.source[c.factor] = c.source;
    for (int axis : c.axes)
      used[axis] = true;
  }
  // A factor behind one that is not fully split in some dim (a reshape's
  // [r, s] -> [r * s] with s split) is no block of that dim: it stays whole
  // everywhere, so that every tensor agrees on it.
  for (bool dropped = true; dropped;) {
    dropped = false;
    for (unsigned t = 0; t < node.tensors.size(); ++t)
      for (const auto &factors : node.factorsOf(t)) {
        bool majorsWhole = true;
        for (int f : factors) {
          if (!majorsWhole && !a.axes[f].empty()) {
            a.axes[f].clear();
            a.level[f] = kUnset;
            a.source[f] = -1;
            dropped = true;
          }
          int64_t split = 1;
          for (int axis : a.axes[f])
            split *= mesh.sizes[axis];
          majorsWhole &= split == rule.sizes[f];
        }
      }
  }
  return a;
}

/// The axes a dim made of `factors` gets: the factors' axes major first,
/// stopping after a factor that is not fully split.
SmallVector<int> Propagator::project(const Node &node, const Assignment &a,
                                     ArrayRef<int> factors,
                                     int &level) const {
  SmallVector<int> axes;
  level = kUnset;
  for (int f : factors) {
    int64_t split = 1;
    for (int axis : a.axes[f]) {
      axes.push_back(axis);
      split *= mesh.sizes[axis];
    }
    level = std::min(level, a.level[f]);
    if (split != node.rule->sizes[f])
      break;
  }
  return axes;
}

/// Records `axes` for dim `dim` unless a hint at least as strong is there or
/// the axes are taken, at least as strongly, by another dim.
bool Propagator::setHint(Hints &h, unsigned dim, ArrayRef<int> axes,
                         int level, llvm::function_ref<std::string()> origin) {
  if (h.closed || axes.empty())
    return false;
  DimHint &cur = h.dims[dim];
  if (cur.axes == axes && cur.level <= level)
    return false;
  if (!cur.axes.empty() && cur.level <= level)
    return false;
  for (auto [d, otherDim] : llvm::enumerate(h.dims)) {
    if (d == dim)
      continue;
    // A structured binding is not captured by lambdas before C++20.
    auto &other = otherDim;
    if (llvm::any_of(axes, [&](int a) { return llvm::is_contained(other.axes, a); })) {
      if (other.level <= level)
        return false;
      other = DimHint();
    }
  }
  cur = DimHint{SmallVector<int, 2>(axes), level};
  if (recordOrigins && h.origin.empty())
    h.origin = origin();
  return true;
}

bool Propagator::visit(Node &node) {
  node.dirty = false;
  Assignment a = assign(node);
  bool changed = false;
  for (auto [t, hints] : llvm::enumerate(node.tensors)) {
    const auto &dims = node.factorsOf(t);
    for (auto [d, factors] : llvm::enumerate(dims)) {
      int level;
      SmallVector<int> axes = project(node, a, factors, level);
      if (axes.empty())
        continue;
      // Names the neighbour the axes came from; only built when the hint
      // is the tensor's first (most visits change nothing).
      auto origin = [&]() -> std::string {
        int src = a.source[factors[0]];
        if (src < 0 || src == int(t))
          return {};
        // The neighbour: an operand, an op result, or the function result
        // (the return's results are the function's).
        std::string site = "the function result";
        if (src < int(node.numOperands))
          site = describeValue(node.op->getOperand(src));
        else if (!isa<func::ReturnOp>(node.op))
          site = describeValue(node.op->getResult(src - node.numOperands));
        std::string where = onnxNodeName(node.op->getLoc());
        return "propagated through " +
               node.op->getName().getStringRef().str() +
               (where.empty() ? "" : " at " + where) + " from " + site;
      };
      if (!setHint(*hints, d, axes, level, origin))
        continue;
      changed = true;
      for (unsigned n : hints->nodes)
        nodes[n].dirty = true;
    }
  }
  return changed;
}

ShardingAttr Propagator::attrOf(const TensorSharding &s) {
  // The axes of each dim, each dim ended by -1, then the partial axes.
  SmallVector<int, 16> key;
  for (const auto &axes : s.dims) {
    llvm::append_range(key, axes);
    key.push_back(-1);
  }
  llvm::append_range(key, s.partial);
  auto [it, inserted] = attrs.try_emplace(
      StringRef(reinterpret_cast<const char *>(key.data()),
                key.size() * sizeof(int)));
  if (inserted)
    it->second = s.toAttr(func.getContext(), mesh);
  return it->second;
}

void Propagator::commit(Node &node) {
  Assignment a = assign(node);
  MLIRContext *ctx = func.getContext();
  auto sharding = [&](unsigned t, bool withPartial) {
    TensorSharding s;
    for (const auto &factors : node.factorsOf(t)) {
      int level;
      s.dims.push_back(project(node, a, factors, level));
    }
    if (withPartial)
      for (int f = 0; f < node.rule->numFactors(); ++f)
        if (node.rule->kinds[f] == FactorKind::Reduction)
          llvm::append_range(s.partial, a.axes[f]);
    llvm::sort(s.partial);
    return attrOf(s);
  };
  SmallVector<Attribute> ins, outs, origins;
  for (unsigned t = 0; t < node.numOperands; ++t)
    ins.push_back(sharding(t, false));
  Builder b(ctx);
  if (auto ret = dyn_cast<func::ReturnOp>(node.op)) {
    // What the function returns is what the return reads; a result the plan
    // pinned keeps exactly its layout, whatever its producer's.
    FunctionAttrs attrs(func);
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      if (returnHints[i]->closed) {
        TensorSharding pinned;
        for (const DimHint &d : returnHints[i]->dims)
          pinned.dims.push_back(SmallVector<int>(ArrayRef<int>(d.axes)));
        ins[i] = pinned.toAttr(ctx, mesh);
      }
      attrs.result(i).set(kShardingAttr, ins[i]);
      if (recordOrigins && !returnHints[i]->origin.empty())
        attrs.result(i).set(kOriginAttr,
                            b.getStringAttr(returnHints[i]->origin));
    }
    attrs.write();
  } else {
    // A partial sum comes from the split reduction factor; name its source.
    std::string partialOrigin;
    for (int f = 0; f < node.rule->numFactors(); ++f)
      if (node.rule->kinds[f] == FactorKind::Reduction && !a.axes[f].empty() &&
          a.source[f] >= 0 && a.source[f] < int(node.numOperands))
        partialOrigin = "partial sum: the summed dim is split like operand " +
                        describeValue(node.op->getOperand(a.source[f]));
    for (unsigned t = node.numOperands; t < node.tensors.size(); ++t) {
      ShardingAttr attr = sharding(t, true);
      outs.push_back(attr);
      if (!recordOrigins)
        continue;
      std::string o = node.tensors[t]->origin;
      if (!attr.getPartial().empty())
        o = partialOrigin;
      else if (o.empty())
        o = "replicated: no neighbour is split";
      origins.push_back(b.getStringAttr(o));
    }
    // One new attribute dictionary per op, not one per attribute set.
    NamedAttrList attrs(node.op->getDiscardableAttrDictionary());
    attrs.set(kOutShardingsAttr, b.getArrayAttr(outs));
    if (recordOrigins)
      attrs.set(kOriginAttr, b.getArrayAttr(origins));
    attrs.set(kInShardingsAttr, b.getArrayAttr(ins));
    attrs.erase(kShardingAttr);
    node.op->setDiscardableAttrs(attrs.getDictionary(ctx));
    return;
  }
  node.op->setAttr(kInShardingsAttr, b.getArrayAttr(ins));
}

LogicalResult Propagator::run() {
  if (failed(checkGlobalTensors(func, "tp-propagate-sharding")) ||
      failed(seed()))
    return failure();
  for (auto [i, node] : llvm::enumerate(nodes))
    for (Hints *h : node.tensors)
      if (h->nodes.empty() || h->nodes.back() != i)
        h->nodes.push_back(i);
  // Elementwise and reshape-like ops (priority 0) settle before
  // contractions and reductions join in; each phase sweeps forwards and
  // backwards until nothing changes, visiting only the nodes whose hints
  // changed since their last visit.
  for (int phase = 0; phase <= 1; ++phase) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (Node &n : nodes)
        if (n.dirty && n.rule->priority <= phase)
          changed |= visit(n);
      for (Node &n : llvm::reverse(nodes))
        if (n.dirty && n.rule->priority <= phase)
          changed |= visit(n);
    }
  }
  for (Node &n : nodes)
    commit(n);
  return success();
}

namespace {
struct TPPropagateShardingPass
    : tp::impl::TPPropagateShardingBase<TPPropagateShardingPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<Mesh> mesh = getMesh(module);
    if (failed(mesh))
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError("tp-propagate-sharding expects a single-block function");
        return signalPassFailure();
      }
      Propagator propagator(func, *mesh, recordOrigins);
      if (failed(propagator.run()))
        return signalPassFailure();
    }
  }
};
} // namespace
