//===- LowerCollectives.cpp - shard collectives -> tprt calls -------------===//
#include "tp/Conversion/Passes.h"
#include "tp/Sharding/Sharding.h"
#include "tp/Sharding/ValueNames.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include <set>
#include "tp/Runtime/RuntimeABI.h"

#include <string>

namespace mlir::tp {
#define GEN_PASS_DEF_TPLOWERCOLLECTIVES
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

class CollectiveLowering {
public:
  CollectiveLowering(ModuleOp module, bool cuda)
      : module(module), b(module.getContext()), cuda(cuda),
        allReduceFn(cuda ? kCudaAllReduceFn : kAllReduceFn),
        allGatherFn(cuda ? kCudaAllGatherFn : kAllGatherFn),
        reduceScatterFn(cuda ? kCudaReduceScatterFn : kReduceScatterFn) {}
  LogicalResult run();

private:
  ModuleOp module;
  OpBuilder b;
  bool cuda;
  /// The target's runtime entry points (tprt_* or tprt_cuda_*).
  StringRef allReduceFn, allGatherFn, reduceScatterFn;
  SmallVector<Attribute> sites, phases;
  SmallVector<int64_t> microbatches;
  /// Every axes mask the program uses: the runtime builds their groups
  /// (MPI sub-communicators) up front, on every rank.
  std::set<int64_t> masks;

  func::FuncOp declare(StringRef name, TypeRange args, TypeRange results);
  Value i64(Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  }
  Value i32(Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  Value pointerOf(Location loc, Value memref);
  int64_t mask(ArrayRef<int16_t> axes);
  int64_t site(Operation *op, StringRef kind);
  FailureOr<int32_t> dtype(Operation *op, Type elem);
  /// Calls `fn` with `input`'s buffer, a fresh buffer of `resultType` and
  /// `extra` arguments; returns the new buffer as a tensor.
  Value callWithBuffers(Location loc, StringRef fn, Value input,
                        RankedTensorType resultType, ArrayRef<Value> extra);
  Value axisIndex(Location loc, ArrayRef<int16_t> axes);
  Value localSlice(Location loc, Value input, int64_t axis,
                   ArrayRef<int16_t> axes, RankedTensorType resultType);
  LogicalResult lower(Operation *op);
};

} // namespace

func::FuncOp CollectiveLowering::declare(StringRef name, TypeRange args,
                                         TypeRange results) {
  return declareRuntimeFunction(module, name, args, results);
}

Value CollectiveLowering::pointerOf(Location loc, Value memref) {
  return bufferAddress(b, loc, memref);
}

int64_t CollectiveLowering::mask(ArrayRef<int16_t> axes) {
  int64_t m = 0;
  for (int16_t a : axes)
    m |= int64_t(1) << a;
  masks.insert(m);
  return m;
}

int64_t CollectiveLowering::site(Operation *op, StringRef kind) {
  // Named as --report names it.
  std::string name = kind.str(), node = onnxNodeName(op->getLoc());
  if (!node.empty())
    name += " at " + node;
  sites.push_back(b.getStringAttr(name));
  phases.push_back(b.getStringAttr(stepPhase(op->getLoc())));
  microbatches.push_back(microbatchOf(op->getLoc()));
  return sites.size() - 1;
}

FailureOr<int32_t> CollectiveLowering::dtype(Operation *op, Type elem) {
  if (auto code = runtimeDType(elem))
    return *code;
  return op->emitOpError("tprt has no collectives for element type ") << elem,
         failure();
}

Value CollectiveLowering::callWithBuffers(Location loc, StringRef fn,
                                          Value input,
                                          RankedTensorType resultType,
                                          ArrayRef<Value> extra) {
  auto inType = cast<RankedTensorType>(input.getType());
  auto src = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(inType.getShape(), inType.getElementType()),
      input, /*readOnly=*/true);
  auto dstType =
      MemRefType::get(resultType.getShape(), resultType.getElementType());
  Value dst = memref::AllocOp::create(b, loc, dstType);
  SmallVector<Value> args = {pointerOf(loc, src), pointerOf(loc, dst)};
  llvm::append_range(args, extra);
  SmallVector<Type> argTypes;
  for (Value a : args)
    argTypes.push_back(a.getType());
  func::CallOp::create(b, loc, declare(fn, argTypes, {}), args);
  return bufferization::ToTensorOp::create(b, loc, resultType, dst,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

Value CollectiveLowering::axisIndex(Location loc, ArrayRef<int16_t> axes) {
  Value m = i64(loc, mask(axes));
  auto call = func::CallOp::create(
      b, loc, declare(kAxisIndexFn, {b.getI64Type()}, {b.getI64Type()}),
      ValueRange{m});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                    call.getResult(0));
}

/// This device's slice of `input` along `axis`, split over `axes`.
Value CollectiveLowering::localSlice(Location loc, Value input, int64_t axis,
                                     ArrayRef<int16_t> axes,
                                     RankedTensorType resultType) {
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t rank = inType.getRank();
  Value size = arith::ConstantIndexOp::create(b, loc,
                                              resultType.getDimSize(axis));
  Value offset = arith::MulIOp::create(b, loc, axisIndex(loc, axes), size);
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      sizes, strides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.getIndexAttr(resultType.getDimSize(d)));
  offsets[axis] = offset;
  return tensor::ExtractSliceOp::create(b, loc, resultType, input, offsets,
                                        sizes, strides);
}

/// Elements before `axis` (outer) and from `axis` on (the contiguous chunk
/// one device owns per outer index).
static std::pair<int64_t, int64_t> outerAndChunk(RankedTensorType t,
                                                 int64_t axis) {
  int64_t outer = 1, chunk = 1;
  for (int64_t d = 0; d < t.getRank(); ++d)
    (d < axis ? outer : chunk) *= t.getDimSize(d);
  return {outer, chunk};
}

LogicalResult CollectiveLowering::lower(Operation *op) {
  Location loc = op->getLoc();
  b.setInsertionPoint(op);
  Value result;
  if (auto ar = dyn_cast<shard::AllReduceOp>(op)) {
    auto type = cast<RankedTensorType>(ar.getType());
    auto dt = dtype(op, type.getElementType());
    if (failed(dt))
      return failure();
    int32_t reduction =
        ar.getReduction() == shard::ReductionKind::Max ? kReduceMax
                                                       : kReduceSum;
    result = callWithBuffers(
        loc, allReduceFn, ar.getInput(), type,
        {i64(loc, type.getNumElements()), i32(loc, *dt),
         i32(loc, reduction), i64(loc, mask(ar.getGridAxes())),
         i64(loc, site(op, "all_reduce"))});
  } else if (auto ag = dyn_cast<shard::AllGatherOp>(op)) {
    auto type = cast<RankedTensorType>(ag.getType());
    auto dt = dtype(op, type.getElementType());
    if (failed(dt))
      return failure();
    auto [outer, chunk] = outerAndChunk(
        cast<RankedTensorType>(ag.getInput().getType()),
        ag.getGatherAxis().getSExtValue());
    result = callWithBuffers(loc, allGatherFn, ag.getInput(), type,
                             {i64(loc, outer), i64(loc, chunk), i32(loc, *dt),
                              i64(loc, mask(ag.getGridAxes())),
                              i64(loc, site(op, "all_gather"))});
  } else if (auto rs = dyn_cast<shard::ReduceScatterOp>(op)) {
    auto type = cast<RankedTensorType>(rs.getType());
    auto dt = dtype(op, type.getElementType());
    if (failed(dt))
      return failure();
    auto [outer, chunk] =
        outerAndChunk(type, rs.getScatterAxis().getSExtValue());
    result = callWithBuffers(loc, reduceScatterFn, rs.getInput(), type,
                             {i64(loc, outer), i64(loc, chunk), i32(loc, *dt),
                              i64(loc, mask(rs.getGridAxes())),
                              i64(loc, site(op, "reduce_scatter"))});
  } else if (auto sl = dyn_cast<shard::AllSliceOp>(op)) {
    result = localSlice(loc, sl.getInput(), sl.getSliceAxis().getSExtValue(),
                        sl.getGridAxes(), cast<RankedTensorType>(sl.getType()));
  } else if (auto a2a = dyn_cast<shard::AllToAllOp>(op)) {
    // Gather along the concat axis, then keep this device's part of the
    // split axis: correct, though it moves (n-1)x more than a true
    // all_to_all.
    auto in = cast<RankedTensorType>(a2a.getInput().getType());
    int64_t concat = a2a.getConcatAxis().getSExtValue();
    int64_t split = a2a.getSplitAxis().getSExtValue();
    auto dt = dtype(op, in.getElementType());
    if (failed(dt))
      return failure();
    SmallVector<int64_t> gathered(in.getShape());
    gathered[concat] = cast<RankedTensorType>(a2a.getType()).getDimSize(concat);
    auto gatheredType = RankedTensorType::get(gathered, in.getElementType());
    auto [outer, chunk] = outerAndChunk(in, concat);
    Value g = callWithBuffers(loc, allGatherFn, a2a.getInput(), gatheredType,
                              {i64(loc, outer), i64(loc, chunk), i32(loc, *dt),
                               i64(loc, mask(a2a.getGridAxes())),
                               i64(loc, site(op, "all_to_all"))});
    result = localSlice(loc, g, split, a2a.getGridAxes(),
                        cast<RankedTensorType>(a2a.getType()));
  } else if (auto send = dyn_cast<shard::SendOp>(op)) {
    // Stage to stage (tp-split-stages): the peer is a member of the
    // stage axis's group; the result is the value sent.
    if (cuda)
      return op->emitOpError("pipeline stages are not built for --target "
                             "cuda yet (tprt_cuda has no send / recv)");
    auto type = cast<RankedTensorType>(send.getInput().getType());
    auto dt = dtype(op, type.getElementType());
    if (failed(dt) || send.getDestination().size() != 1)
      return failure();
    int64_t to = send.getDestination()[0];
    auto src = bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()),
        send.getInput(), /*readOnly=*/true);
    SmallVector<Value> args = {
        pointerOf(loc, src), i64(loc, type.getNumElements()), i32(loc, *dt),
        i64(loc, mask(send.getGridAxes())), i64(loc, to),
        i64(loc, site(op, "send to stage " + std::to_string(to)))};
    func::CallOp::create(
        b, loc, declare(kSendFn, ValueRange(args).getTypes(), {}), args);
    result = send.getInput();
  } else if (auto recv = dyn_cast<shard::RecvOp>(op)) {
    if (cuda)
      return op->emitOpError("pipeline stages are not built for --target "
                             "cuda yet (tprt_cuda has no send / recv)");
    auto type = cast<RankedTensorType>(recv.getType());
    auto dt = dtype(op, type.getElementType());
    if (failed(dt) || !recv.getSource() || recv.getSource()->size() != 1)
      return failure();
    int64_t from = (*recv.getSource())[0];
    Value dst = memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()));
    SmallVector<Value> args = {
        pointerOf(loc, dst), i64(loc, type.getNumElements()), i32(loc, *dt),
        i64(loc, mask(recv.getGridAxes())), i64(loc, from),
        i64(loc, site(op, "recv from stage " + std::to_string(from)))};
    func::CallOp::create(
        b, loc, declare(kRecvFn, ValueRange(args).getTypes(), {}), args);
    result = bufferization::ToTensorOp::create(b, loc, type, dst,
                                               /*restrict=*/true,
                                               /*writable=*/true);
  } else if (auto idx = dyn_cast<shard::ProcessMultiIndexOp>(op)) {
    SmallVector<Value> indices;
    for (int16_t a : idx.getAxes())
      indices.push_back(axisIndex(loc, {a}));
    op->replaceAllUsesWith(indices);
    op->erase();
    return success();
  } else {
    return success();
  }
  op->getResult(0).replaceAllUsesWith(result);
  op->erase();
  return success();
}

LogicalResult CollectiveLowering::run() {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<shard::AllReduceOp, shard::AllGatherOp, shard::ReduceScatterOp,
            shard::AllSliceOp, shard::AllToAllOp, shard::SendOp,
            shard::RecvOp, shard::ProcessMultiIndexOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops)
    if (failed(lower(op)))
      return failure();
  SmallVector<Operation *> left;
  module.walk([&](Operation *op) {
    if (isa<shard::ShardDialect>(op->getDialect()) && !isa<shard::GridOp>(op))
      left.push_back(op);
  });
  if (!left.empty())
    return left.front()->emitOpError("has no lowering to the tprt runtime");
  // The mesh is the runtime's business now; keep its shape as an attribute
  // for the manifest.
  if (auto grid = module.lookupSymbol<shard::GridOp>(kMeshSymbol)) {
    module->setAttr("tp.mesh_shape", grid.getShapeAttr());
    if (auto names = grid->getAttr(kAxisNamesAttr))
      module->setAttr("tp.mesh_axis_names", names);
    grid.erase();
  }
  module->setAttr("tp.collective_sites", b.getArrayAttr(sites));
  module->setAttr("tp.collective_phases", b.getArrayAttr(phases));
  module->setAttr("tp.collective_microbatches",
                  b.getDenseI64ArrayAttr(microbatches));
  module->setAttr("tp.axis_masks",
                  b.getI64ArrayAttr(SmallVector<int64_t>(masks.begin(),
                                                         masks.end())));
  return success();
}

namespace {
struct TPLowerCollectivesPass
    : tp::impl::TPLowerCollectivesBase<TPLowerCollectivesPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<bool> cuda =
        isCudaTarget(target, getOperation(), "tp-lower-collectives");
    if (failed(cuda))
      return signalPassFailure();
    CollectiveLowering lowering(getOperation(), *cuda);
    if (failed(lowering.run()))
      signalPassFailure();
  }
};
} // namespace
