//===- FunctionAttrs.h - a function's argument/result attributes in bulk --===//
//
// FunctionOpInterface::setArgAttr and setResultAttr rebuild the function's
// whole array of argument (result) attributes on every call. A training
// step has a few thousand arguments and results, so passes that annotate
// them one at a time were quadratic (0.6 s of tp-apply-plan on a 96-layer
// step). FunctionAttrs reads the attributes once, lets a pass edit them as
// NamedAttrLists and writes each side back with one array.
//
//===----------------------------------------------------------------------===//
#ifndef TP_DIALECT_TP_IR_FUNCTIONATTRS_H
#define TP_DIALECT_TP_IR_FUNCTIONATTRS_H

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::tp {

class FunctionAttrs {
public:
  explicit FunctionAttrs(FunctionOpInterface func) : func(func) {
    SmallVector<DictionaryAttr> dicts;
    func.getAllArgAttrs(dicts);
    args.assign(dicts.begin(), dicts.end());
    // An array left short by arguments added since is written back whole.
    argsChanged = args.size() != func.getNumArguments();
    args.resize(func.getNumArguments());
    dicts.clear();
    func.getAllResultAttrs(dicts);
    results.assign(dicts.begin(), dicts.end());
    resultsChanged = results.size() != func.getNumResults();
    results.resize(func.getNumResults());
  }

  NamedAttrList &arg(unsigned i) {
    argsChanged = true;
    return args[i];
  }
  NamedAttrList &result(unsigned i) {
    resultsChanged = true;
    return results[i];
  }
  /// Reads without marking the side as changed.
  template <typename T = Attribute>
  T argAttr(unsigned i, StringRef name) const {
    return dyn_cast_or_null<T>(args[i].get(name));
  }
  template <typename T = Attribute>
  T resultAttr(unsigned i, StringRef name) const {
    return dyn_cast_or_null<T>(results[i].get(name));
  }
  unsigned numArgs() const { return args.size(); }
  unsigned numResults() const { return results.size(); }

  /// Writes back each side that was edited (one ArrayAttr each).
  void write() {
    MLIRContext *ctx = func->getContext();
    auto dicts = [&](ArrayRef<NamedAttrList> lists) {
      SmallVector<Attribute> out;
      out.reserve(lists.size());
      for (const NamedAttrList &l : lists)
        out.push_back(l.getDictionary(ctx));
      return out;
    };
    if (argsChanged)
      func.setAllArgAttrs(dicts(args));
    if (resultsChanged)
      func.setAllResultAttrs(dicts(results));
    argsChanged = resultsChanged = false;
  }

private:
  FunctionOpInterface func;
  SmallVector<NamedAttrList> args, results;
  bool argsChanged = false, resultsChanged = false;
};

} // namespace mlir::tp

#endif // TP_DIALECT_TP_IR_FUNCTIONATTRS_H
