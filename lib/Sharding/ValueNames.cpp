//===- ValueNames.cpp - name values the way users know them ---------------===//
#include "tp/Sharding/ValueNames.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

using namespace mlir;

std::string tp::onnxNodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (auto name = onnxNodeName(l); !name.empty())
        return name;
  return "";
}

Location tp::tagLocation(Location loc, StringRef tag) {
  MLIRContext *ctx = loc.getContext();
  // A NameLoc stays outermost, with the tag on its child: whatever reads
  // an op's ONNX node from its NameLoc reads it as before.
  if (auto name = dyn_cast<NameLoc>(loc))
    return NameLoc::get(name.getName(),
                        FusedLoc::get(ctx, {name.getChildLoc()},
                                      StringAttr::get(ctx, tag)));
  return FusedLoc::get(ctx, {loc}, StringAttr::get(ctx, tag));
}

/// The tags of `loc`'s FusedLocs, outermost first.
static void collectTags(Location loc, SmallVectorImpl<StringRef> &tags) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (auto tag = dyn_cast_if_present<StringAttr>(fused.getMetadata()))
      tags.push_back(tag.getValue());
    for (Location l : fused.getLocations())
      collectTags(l, tags);
  } else if (auto name = dyn_cast<NameLoc>(loc)) {
    collectTags(name.getChildLoc(), tags);
  }
}

std::string tp::stepPhase(Location loc) {
  SmallVector<StringRef> tags;
  collectTags(loc, tags);
  // A fused kernel is in the latest phase of its parts: an update fused
  // with the end of its gradient is the update.
  for (StringRef phase : {StringRef("update"), StringRef("backward"),
                          StringRef("recompute"), StringRef("loss")})
    if (llvm::is_contained(tags, phase))
      return phase.str();
  return "forward";
}

int64_t tp::microbatchOf(Location loc) {
  SmallVector<StringRef> tags;
  collectTags(loc, tags);
  for (StringRef tag : tags) {
    int64_t i;
    if (tag.consume_front("microbatch ") && !tag.getAsInteger(10, i))
      return i;
  }
  return -1;
}

bool tp::hasTag(Location loc, StringRef tag) {
  SmallVector<StringRef> tags;
  collectTags(loc, tags);
  return llvm::is_contained(tags, tag);
}

std::string tp::describeValue(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
    if (func)
      if (auto names = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                        "tp.torch_names");
          names && !names.empty()) {
        std::string torch = cast<StringAttr>(names[0]).str();
        auto onnx =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tp.param");
        return onnx && onnx.getValue() != torch
                   ? torch + " (ONNX " + onnx.str() + ")"
                   : torch;
      }
    if (func)
      for (StringRef attr : {"tp.param", "tp.input"})
        if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                          attr))
          return name.str();
    return "argument #" + std::to_string(arg.getArgNumber());
  }
  Operation *op = v.getDefiningOp();
  std::string s = op->getName().getStringRef().str();
  if (op->getNumResults() > 1)
    s += " #" + std::to_string(cast<OpResult>(v).getResultNumber());
  std::string node = onnxNodeName(op->getLoc());
  return node.empty() ? s : s + " at " + node;
}
