//===- Sharding.cpp - meshes and tensor layouts ---------------------------===//
#include "tp/Sharding/Sharding.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tp;

int64_t Mesh::numDevices() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

std::optional<int> Mesh::axisIndex(StringRef name) const {
  for (auto [i, n] : llvm::enumerate(names))
    if (n == name)
      return int(i);
  return std::nullopt;
}

std::string Mesh::describe() const {
  std::string s;
  for (auto [i, n] : llvm::enumerate(names))
    s += (i ? "," : "") + n + "=" + std::to_string(sizes[i]);
  return s;
}

int64_t tp::staticBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return 0;
  return shaped.getNumElements() *
         std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
}

llvm::StringSet<> tp::weightAndStateNames(func::FuncOp func) {
  llvm::StringSet<> names;
  for (unsigned a = 0; a < func.getNumArguments(); ++a)
    for (StringRef attr : {"tp.param", "tp.state"})
      if (auto name = func.getArgAttrOfType<StringAttr>(a, attr))
        names.insert(name.getValue());
  return names;
}

FailureOr<Mesh> tp::getMesh(ModuleOp module) {
  auto grid = module.lookupSymbol<shard::GridOp>(kMeshSymbol);
  if (!grid)
    return module.emitError("no device mesh: run tp-apply-plan first (or "
                            "add shard.grid @mesh)"),
           failure();
  Mesh mesh;
  auto names = grid->getAttrOfType<ArrayAttr>(kAxisNamesAttr);
  for (auto [i, size] : llvm::enumerate(grid.getShape())) {
    if (size <= 0)
      return grid.emitError("tp needs a static mesh shape"), failure();
    mesh.sizes.push_back(size);
    mesh.names.push_back(names && i < names.size()
                             ? cast<StringAttr>(names[i]).str()
                             : "axis" + std::to_string(i));
  }
  return mesh;
}

void tp::setMesh(ModuleOp module, const Mesh &mesh) {
  if (auto old = module.lookupSymbol<shard::GridOp>(kMeshSymbol))
    old.erase();
  OpBuilder b(module.getBodyRegion());
  auto grid = shard::GridOp::create(b, module.getLoc(), kMeshSymbol,
                                    b.getDenseI64ArrayAttr(mesh.sizes));
  SmallVector<Attribute> names;
  for (const std::string &n : mesh.names)
    names.push_back(b.getStringAttr(n));
  grid->setAttr(kAxisNamesAttr, b.getArrayAttr(names));
}

TensorSharding TensorSharding::replicated(int64_t rank) {
  TensorSharding s;
  s.dims.resize(rank);
  return s;
}

bool TensorSharding::isReplicated() const {
  return partial.empty() &&
         llvm::all_of(dims, [](const auto &axes) { return axes.empty(); });
}

int64_t TensorSharding::splitFactor(int d, const Mesh &mesh) const {
  int64_t f = 1;
  for (int a : dims[d])
    f *= mesh.sizes[a];
  return f;
}

SmallVector<int64_t> TensorSharding::localShape(ArrayRef<int64_t> shape,
                                                const Mesh &mesh) const {
  SmallVector<int64_t> local(shape);
  for (size_t d = 0; d < dims.size() && d < local.size(); ++d)
    local[d] /= splitFactor(d, mesh);
  return local;
}

RankedTensorType TensorSharding::localType(RankedTensorType global,
                                           const Mesh &mesh) const {
  return RankedTensorType::get(localShape(global.getShape(), mesh),
                               global.getElementType());
}

static ArrayAttr axesAttr(Builder &b, ArrayRef<int> axes, const Mesh &mesh) {
  SmallVector<Attribute> names;
  for (int a : axes)
    names.push_back(b.getStringAttr(mesh.names[a]));
  return b.getArrayAttr(names);
}

ShardingAttr TensorSharding::toAttr(MLIRContext *ctx, const Mesh &mesh) const {
  Builder b(ctx);
  SmallVector<Attribute> d;
  for (const auto &axes : dims)
    d.push_back(axesAttr(b, axes, mesh));
  return ShardingAttr::get(ctx, b.getArrayAttr(d),
                           axesAttr(b, partial, mesh));
}

FailureOr<TensorSharding> TensorSharding::fromAttr(ShardingAttr attr,
                                                   const Mesh &mesh,
                                                   int64_t rank,
                                                   std::string &error) {
  TensorSharding s;
  auto readAxes = [&](ArrayAttr axes, SmallVector<int> &out) -> bool {
    for (Attribute a : axes) {
      StringRef name = cast<StringAttr>(a).getValue();
      auto idx = mesh.axisIndex(name);
      if (!idx) {
        error = "unknown mesh axis '" + name.str() + "' (mesh is " +
                mesh.describe() + ")";
        return false;
      }
      out.push_back(*idx);
    }
    return true;
  };
  if (int64_t(attr.getDims().size()) != rank) {
    error = "sharding has " + std::to_string(attr.getDims().size()) +
            " dims for a tensor of rank " + std::to_string(rank);
    return failure();
  }
  for (Attribute d : attr.getDims()) {
    s.dims.emplace_back();
    if (!readAxes(cast<ArrayAttr>(d), s.dims.back()))
      return failure();
  }
  if (!readAxes(attr.getPartial(), s.partial))
    return failure();
  return s;
}

std::string TensorSharding::describe(const Mesh &mesh) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto printAxes = [&](ArrayRef<int> axes) {
    os << '{';
    llvm::interleaveComma(axes, os,
                          [&](int a) { os << '"' << mesh.names[a] << '"'; });
    os << '}';
  };
  os << '[';
  llvm::interleaveComma(dims, os, [&](const auto &axes) { printAxes(axes); });
  os << ']';
  if (!partial.empty()) {
    os << ", partial = ";
    printAxes(partial);
  }
  return s;
}

LogicalResult tp::checkGlobalTensors(func::FuncOp func, StringRef pass) {
  Block &body = func.getBody().front();
  for (Operation &op : body)
    for (Value v : llvm::concat<Value>(op.getOperands(), op.getResults()))
      if (!isa<RankedTensorType>(v.getType()))
        return op.emitOpError()
               << pass
               << " expects ranked tensors on the global program (it runs "
                  "before tp-partition), not "
               << v.getType();
  for (BlockArgument arg : body.getArguments())
    if (!isa<RankedTensorType>(arg.getType()))
      return emitError(arg.getLoc())
             << pass << " expects ranked tensor arguments, not "
             << arg.getType();
  return success();
}
