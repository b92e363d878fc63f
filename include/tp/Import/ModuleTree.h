//===- ModuleTree.h - PyTorch modules recovered from an export -*- C++ -*-===//
//
// torch.onnx.export keeps a model's module structure only in node names
// (`/model/layers.0/self_attn/q_proj/MatMul`) and, for parameters it did not
// fold, in initializer names (`model.layers.0.input_layernorm.weight`).
// Constant folding renames a Linear's weight to `onnx::MatMul_<n>` and stores
// it transposed. This recovers, for every module path that
// `model.named_modules()` prints, the ops in its scope and its parameters
// found by their use (the initializer a module's MatMul / Gemm / Conv /
// Gather / normalization reads, directly or through a Transpose), so that a
// plan written with PyTorch's names applies to the export as it is.
//
// The importer records the result on the function: every weight argument
// gets `tp.torch_names`, the PyTorch names it is known by (a tied weight has
// several), first the one PyTorch's state_dict uses; `tp.stored_transposed`
// marks a folded W^T.
//
//===----------------------------------------------------------------------===//
#ifndef TP_IMPORT_MODULETREE_H
#define TP_IMPORT_MODULETREE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"
#include <map>
#include <string>

namespace mlir::tp {

/// One use of a parameter by an op of a module.
struct ParamUse {
  unsigned arg;         // function argument index of the parameter
  std::string role;     // "weight" or "bias"
  bool transposed;      // read without a Transpose by a MatMul as [in, out]
                        // under a name that is not PyTorch's: a folded W^T
  Operation *op;        // the MatMul / Gemm / Gather / Conv / norm op
};

struct ModuleInfo {
  std::string path;                 // `model.layers.0.self_attn.q_proj`
  SmallVector<Operation *> ops;     // ops whose node scope is this module
  SmallVector<ParamUse> params;     // parameters its own ops read
};

class ModuleTree {
public:
  /// Recovers the modules of an imported `@forward`.
  static ModuleTree build(func::FuncOp func);

  /// Module path of an ONNX node name (torch's scope naming: a child of a
  /// container appears as `mlp.0` under `mlp`, a ModuleList entry as
  /// `layers.0` under its owner); "" for nodes without a scope.
  std::string modulePathOf(StringRef nodeName) const;

  /// The scope of an ONNX node name, up to its last '/' (`/model/mlp/` of
  /// `/model/mlp/Relu`), which the ops of one module share; "" for nodes
  /// without a scope. modulePathOf reads the same from it.
  static StringRef scopeOf(StringRef nodeName) {
    size_t end = nodeName.rfind('/');
    return end == StringRef::npos ? StringRef() : nodeName.take_front(end + 1);
  }

  const std::map<std::string, ModuleInfo> &modules() const { return byPath; }

  /// The PyTorch names of weight argument `arg` (the state_dict name first);
  /// empty when none is known.
  SmallVector<std::string> torchNames(unsigned arg) const;

  /// Records `tp.torch_names` / `tp.stored_transposed` on the arguments.
  void annotate(func::FuncOp func) const;

  /// `tp-compile --list-modules`: every module, its ops and parameters.
  void print(func::FuncOp func, llvm::raw_ostream &os) const;

private:
  /// Module paths that initializer names spell (`a.b.weight` -> a, a.b).
  llvm::StringSet<> namedPaths;
  std::map<std::string, ModuleInfo> byPath;
  std::map<unsigned, SmallVector<std::pair<std::string, bool>>> names;
};

} // namespace mlir::tp

#endif // TP_IMPORT_MODULETREE_H
