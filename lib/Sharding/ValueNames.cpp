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
