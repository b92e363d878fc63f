//===- ModuleTree.cpp - PyTorch modules recovered from an export ----------===//
#include "tp/Import/ModuleTree.h"
#include "tp/Dialect/TP/IR/FunctionAttrs.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::tp;

static std::string join(ArrayRef<std::string> parts) {
  return llvm::join(parts, ".");
}

std::string ModuleTree::modulePathOf(StringRef node) const {
  // torch writes `/scope/.../Op`; TensorFlow's exporters `scope/.../Op`
  // (tf2onnx: `sequential/dense/MatMul`). A name without '/' has no scope.
  if (!node.contains('/'))
    return "";
  SmallVector<StringRef> scopes;
  node.consume_front("/");
  node.split(scopes, '/');
  scopes.pop_back(); // the op's own name
  // torch names each scope after its module's path with everything before
  // the last non-numeric atom dropped (torch.onnx.utils'
  // _unqualified_variable_name): `layers.0` is entry 0 of a ModuleList
  // `layers` (a container without a scope of its own), and `mlp.0` under
  // `mlp` is child 0 of the nn.Sequential `mlp`.
  SmallVector<std::string> path;
  for (StringRef scope : scopes) {
    SmallVector<StringRef> atoms;
    scope.split(atoms, '.');
    bool numericTail = atoms.size() > 1 &&
                       llvm::all_of(ArrayRef(atoms).drop_front(), [](StringRef a) {
                         return !a.empty() && llvm::all_of(a, llvm::isDigit);
                       });
    SmallVector<std::string> appended = path;
    for (StringRef a : atoms)
      appended.push_back(a.str());
    // The container is the nearest ancestor of that name: the parent for
    // `mlp.0`, the grandparent for nested nn.Sequentials
    // (`/features/features.1/features.1.0`: torchvision's SwinTransformer
    // and ConvNeXt are features.1.0).
    auto container = std::find(path.rbegin(), path.rend(), atoms.front().str());
    if (numericTail && container != path.rend()) {
      SmallVector<std::string> merged(path.begin(), container.base());
      for (StringRef a : ArrayRef(atoms).drop_front())
        merged.push_back(a.str());
      // Initializer names settle the rare case where both readings exist
      // (a ModuleList `mlp` inside a module `mlp`).
      path = namedPaths.contains(join(appended)) &&
                     !namedPaths.contains(join(merged))
                 ? appended
                 : merged;
    } else {
      path = appended;
    }
  }
  return join(path);
}

/// The parameter `v` is, looking through transposes and reshapes (a conv's
/// bias is reshaped to [C, 1, 1] to broadcast); sets `throughTranspose`
/// when an odd number of 2-D transposes were crossed.
static std::optional<unsigned> paramArg(func::FuncOp func, Value v,
                                        bool &throughTranspose) {
  throughTranspose = false;
  while (true) {
    if (auto t = v.getDefiningOp<TransposeOp>()) {
      throughTranspose = !throughTranspose;
      v = t.getInput();
    } else if (auto r = v.getDefiningOp<ReshapeOp>()) {
      v = r.getInput();
    } else {
      break;
    }
  }
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner()->getParentOp() != func.getOperation() ||
      !func.getArgAttr(arg.getArgNumber(), "tp.param"))
    return std::nullopt;
  return arg.getArgNumber();
}

/// The matmul or conv that computes `v`, possibly scaled (Gemm's alpha) or
/// reshaped: an add of a parameter to it is that layer's bias.
static Operation *contractionOf(Value v) {
  Operation *def = v.getDefiningOp();
  while (def && isa<MulOp, ReshapeOp>(def))
    def = def->getOperand(0).getDefiningOp();
  return def && isa<MatMulOp, ConvOp>(def) ? def : nullptr;
}

/// Whether `add` adds a bias to the result of `contraction`.
static bool addsTo(Operation *add, Operation *contraction) {
  return isa<AddOp>(add) && llvm::any_of(add->getOperands(), [&](Value v) {
           return contractionOf(v) == contraction;
         });
}

ModuleTree ModuleTree::build(func::FuncOp func) {
  ModuleTree tree;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name = func.getArgAttrOfType<StringAttr>(i, "tp.param")) {
      StringRef prefix = name.getValue();
      while (prefix.contains('.')) {
        prefix = prefix.rsplit('.').first;
        tree.namedPaths.insert(prefix);
      }
    }
  // The ops of a module share their scope (`/model/layers.0/mlp/`): each
  // scope is resolved to its module once.
  llvm::StringMap<ModuleInfo *> moduleOfScope;
  func.walk([&](Operation *op) {
    auto loc = dyn_cast<NameLoc>(op->getLoc());
    // Only the graph's ops: the function and its return are located at the
    // model file's path.
    if (!loc || !isa_and_present<TPDialect>(op->getDialect()) ||
        isa<ConstantOp>(op) || op->getLoc() == func.getLoc())
      return;
    StringRef scope = scopeOf(loc.getName().getValue());
    if (scope.empty())
      return;
    auto [cached, inserted] = moduleOfScope.try_emplace(scope, nullptr);
    if (inserted) {
      std::string path = tree.modulePathOf(cached->first());
      if (path.empty())
        return;
      // Every enclosing module exists too (`layers.0` holds `layers.0.mlp`).
      for (StringRef p = path; !p.empty();
           p = p.contains('.') ? p.rsplit('.').first : "")
        tree.byPath[p.str()].path = p.str();
      // std::map's entries stay where they are.
      cached->second = &tree.byPath[path];
    }
    if (!cached->second)
      return;
    ModuleInfo &m = *cached->second;
    StringRef path = m.path;
    m.ops.push_back(op);
    auto use = [&](Value v, StringRef role, bool asMatmulRhs) {
      bool throughTranspose;
      std::optional<unsigned> arg = paramArg(func, v, throughTranspose);
      if (!arg)
        return;
      for (const ParamUse &u : m.params)
        if (u.arg == *arg)
          return;
      StringRef onnx =
          func.getArgAttrOfType<StringAttr>(*arg, "tp.param").getValue();
      bool torchNamed =
          onnx.starts_with(path) && onnx.drop_front(path.size()).starts_with(".");
      m.params.push_back(ParamUse{*arg, role.str(),
                                  asMatmulRhs && !throughTranspose &&
                                      !torchNamed,
                                  op});
    };
    if (auto mm = dyn_cast<MatMulOp>(op)) {
      if (cast<RankedTensorType>(mm.getRhs().getType()).getRank() == 2)
        use(mm.getRhs(), "weight", /*asMatmulRhs=*/true);
    } else if (auto g = dyn_cast<GatherOp>(op)) {
      use(g.getData(), "weight", false);
    } else if (auto c = dyn_cast<ConvOp>(op)) {
      use(c->getOperand(1), "weight", false);
      if (c->getNumOperands() > 2)
        use(c->getOperand(2), "bias", false);
    } else if (auto ln = dyn_cast<LayerNormOp>(op)) {
      for (auto [i, operand] : llvm::enumerate(ln->getOperands()))
        if (i > 0)
          use(operand, i == 1 ? "weight" : "bias", false);
    } else if (isa<AddOp>(op)) {
      for (unsigned i = 0; i < 2; ++i)
        if (contractionOf(op->getOperand(1 - i)) ||
            cast<RankedTensorType>(op->getOperand(i).getType()).getRank() == 1)
          use(op->getOperand(i), "bias", false);
    } else if (isa<MulOp>(op)) {
      // A normalization's scale (LayerNorm decomposed, RMSNorm).
      for (unsigned i = 0; i < 2; ++i)
        if (cast<RankedTensorType>(op->getOperand(i).getType()).getRank() == 1)
          use(op->getOperand(i), "weight", false);
    }
  });
  // Names: an initializer that already carries a module's PyTorch name keeps
  // it; a renamed one (`onnx::MatMul_<n>`) is `<module>.<role>` of the module
  // that reads it. A weight read by several modules (tied) has every name.
  auto onnxName = [&](unsigned arg) {
    return func.getArgAttrOfType<StringAttr>(arg, "tp.param").getValue();
  };
  for (auto &[path, m] : tree.byPath)
    for (const ParamUse &u : m.params) {
      auto &list = tree.names[u.arg];
      std::string name = path + "." + u.role;
      StringRef onnx = onnxName(u.arg);
      if (onnx == name) {
        list.insert(list.begin(), {name, false});
        continue;
      }
      // A module reading a weight of its own submodule (MultiheadAttention
      // calls F.linear on out_proj.weight) does not rename it.
      if (onnx.starts_with(path + "."))
        continue;
      // A renamed weight whose bias kept its name takes the bias's name
      // (MultiheadAttention's in_proj_weight beside in_proj_bias).
      if (u.role == "weight" && !tree.namedPaths.contains(onnx.rsplit('.').first))
        for (const ParamUse &b : m.params)
          if (b.role == "bias" && addsTo(b.op, u.op) &&
              onnxName(b.arg).starts_with(path + ".") &&
              onnxName(b.arg).ends_with("bias"))
            name = onnxName(b.arg).drop_back(4).str() + "weight";
      if (llvm::none_of(list, [&](auto &n) { return n.first == name; }))
        list.push_back({name, u.transposed});
    }
  // A name that is PyTorch's own comes first even if no module's scope
  // matched it (a parameter read outside its module).
  for (auto &[arg, list] : tree.names) {
    StringRef onnx =
        func.getArgAttrOfType<StringAttr>(arg, "tp.param").getValue();
    if (tree.namedPaths.contains(onnx.rsplit('.').first) &&
        (list.empty() || list.front().first != onnx))
      list.insert(list.begin(), {onnx.str(), false});
  }
  return tree;
}

SmallVector<std::string> ModuleTree::torchNames(unsigned arg) const {
  SmallVector<std::string> out;
  auto it = names.find(arg);
  if (it != names.end())
    for (auto &[name, transposed] : it->second)
      out.push_back(name);
  return out;
}

void ModuleTree::annotate(func::FuncOp func) const {
  Builder b(func.getContext());
  FunctionAttrs funcAttrs(func);
  for (auto &[arg, list] : names) {
    // Only where PyTorch knows the weight by another name than ONNX does.
    if (list.size() == 1 &&
        list.front().first ==
            funcAttrs.argAttr<StringAttr>(arg, "tp.param").getValue())
      continue;
    SmallVector<Attribute> attrs;
    for (auto &[name, transposed] : list)
      attrs.push_back(b.getStringAttr(name));
    funcAttrs.arg(arg).set("tp.torch_names", b.getArrayAttr(attrs));
    if (list.front().second)
      funcAttrs.arg(arg).set("tp.stored_transposed", b.getUnitAttr());
  }
  funcAttrs.write();
}

static std::string shapeOf(Type t) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(cast<RankedTensorType>(t).getShape(), os);
  return s + "]";
}

void ModuleTree::print(func::FuncOp func, llvm::raw_ostream &os) const {
  os << "modules (PyTorch paths for a plan), their ops and parameters\n";
  for (auto &[path, m] : byPath) {
    os << path;
    llvm::StringMap<int> counts;
    SmallVector<std::string> order;
    for (Operation *op : m.ops) {
      std::string name = op->getName().getStringRef().str();
      if (!counts.count(name))
        order.push_back(name);
      ++counts[name];
    }
    if (!order.empty()) {
      os << "  (";
      for (auto [i, name] : llvm::enumerate(order)) {
        os << (i ? ", " : "") << name;
        if (counts[name] > 1)
          os << " x" << counts[name];
      }
      os << ")";
    }
    os << "\n";
    for (const ParamUse &u : m.params) {
      StringRef onnx =
          func.getArgAttrOfType<StringAttr>(u.arg, "tp.param").getValue();
      auto all = torchNames(u.arg);
      std::string torch = all.empty() ? onnx.str() : all.front();
      for (const std::string &n : all)
        if (StringRef(n).starts_with(path + "."))
          torch = n;
      os << "    " << u.role << " " << shapeOf(func.getArgumentTypes()[u.arg])
         << " " << onnx;
      if (onnx != torch && all.front() == onnx)
        os << " (tied: " << torch << " is " << onnx << ")";
      else if (onnx != torch)
        os << " = " << torch << (u.transposed ? " stored transposed" : "");
      os << "; read by " << u.op->getName().getStringRef();
      if (auto loc = dyn_cast<NameLoc>(u.op->getLoc()))
        os << " at " << loc.getName().getValue();
      os << "\n";
    }
  }
}
