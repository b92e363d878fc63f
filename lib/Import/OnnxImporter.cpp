//===- OnnxImporter.cpp - ONNX graph -> tp func.func ----------------------===//
#include "tp/Import/OnnxImporter.h"
#include "tprt/UntieMerged.h"
#include "tp/Import/ModuleTree.h"
#include "NodeImporter.h"
#include "OnnxModelLoader.h"
#include "onnx/defs/schema.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tp;

//===----------------------------------------------------------------------===//
// NodeImporter
//===----------------------------------------------------------------------===//

std::string tp::onnxNodeName(const onnx::NodeProto &node, size_t index) {
  if (!node.name().empty())
    return node.name();
  if (node.output_size() && !node.output(0).empty())
    return node.output(0);
  return node.op_type() + "_" + std::to_string(index);
}

InFlightDiagnostic NodeImporter::error() {
  return emitError(loc) << modelPath << ": ONNX node '" << nameLocName()
                        << "' (" << node.op_type() << "): ";
}

StringRef NodeImporter::nameLocName() const {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().strref();
  return node.op_type();
}

FailureOr<Value> NodeImporter::requiredInput(unsigned i, StringRef what) {
  if (Value v = input(i))
    return v;
  error() << "missing input " << i << " (" << what << ")";
  return failure();
}

const onnx::AttributeProto *NodeImporter::attr(StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeImporter::intAttr(StringRef name, int64_t dflt) const {
  const auto *a = attr(name);
  return a ? a->i() : dflt;
}

float NodeImporter::floatAttr(StringRef name, float dflt) const {
  const auto *a = attr(name);
  return a ? a->f() : dflt;
}

std::string NodeImporter::stringAttr(StringRef name, StringRef dflt) const {
  const auto *a = attr(name);
  return a ? a->s() : dflt.str();
}

std::optional<SmallVector<int64_t>>
NodeImporter::intsAttr(StringRef name) const {
  const auto *a = attr(name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

FailureOr<SmallVector<int64_t>> NodeImporter::constantInts(Value v,
                                                           StringRef what) {
  DenseIntElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr))) {
    auto diag = error() << "the " << what
                        << " input must be a compile-time constant";
    explainNotConstant(v, diag);
    return failure();
  }
  SmallVector<int64_t> values;
  for (const APInt &i : attr.getValues<APInt>())
    values.push_back(i.getSExtValue());
  return values;
}

/// Says why `v` did not fold: what it depends on that is not a constant (a
/// graph input or weight), or which op computed it from constants but was
/// not evaluated (over the folding limit, or an op tp does not evaluate).
void NodeImporter::explainNotConstant(Value v, InFlightDiagnostic &diag) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  Operation *unevaluated = nullptr;
  while (v && !work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
      StringAttr name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                          "tp.input");
      if (name) {
        diag << "; it depends on the values of graph input '"
             << name.getValue()
             << "' (tp compiles static shapes: store it as an initializer "
                "or Constant)";
      } else {
        name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                 "tp.param");
        diag << "; it depends on the float initializer '"
             << (name ? name.getValue() : StringRef("?"))
             << "', which tp treats as a trainable weight";
      }
      return;
    }
    Operation *def = x.getDefiningOp();
    if (matchPattern(x, m_Constant()))
      continue;
    bool allConstant = llvm::all_of(def->getOperands(), [](Value o) {
      return matchPattern(o, m_Constant());
    });
    if (allConstant && !unevaluated)
      unevaluated = def;
    llvm::append_range(work, def->getOperands());
  }
  if (!unevaluated)
    return;
  auto type = cast<RankedTensorType>(unevaluated->getResult(0).getType());
  std::string node = "?";
  if (auto name = dyn_cast<NameLoc>(unevaluated->getLoc()))
    node = name.getName().str();
  diag << "; ONNX node '" << node << "' computes it from constants";
  if (type.getNumElements() > kMaxFoldElements)
    diag << ", but its result " << formatShape(type.getShape()) << " has "
         << type.getNumElements() << " elements, over the folding limit of "
         << kMaxFoldElements;
  else
    diag << ", but tp does not evaluate "
         << unevaluated->getName().getStringRef() << " at compile time";
}

FailureOr<int64_t> NodeImporter::normalizeAxis(int64_t axis, int64_t rank,
                                               StringRef what) {
  if (axis < -rank || axis >= rank) {
    error() << what << " " << axis << " is out of range for rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

Value NodeImporter::constant(DenseElementsAttr attr) {
  return ConstantOp::create(b, loc, attr);
}

FailureOr<Value> NodeImporter::finish(Operation *op) {
  // Verify now so a shape error names this node, then fold: ONNX shape
  // arithmetic collapses to constants that later nodes (Reshape) read.
  SmallVector<std::string> messages;
  {
    ScopedDiagnosticHandler collect(op->getContext(), [&](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error)
        return failure();
      messages.push_back(diag.str());
      return success();
    });
    (void)verify(op);
  }
  if (!messages.empty()) {
    op->erase();
    for (const std::string &m : messages)
      error() << m;
    return failure();
  }
  SmallVector<OpFoldResult> folded;
  if (succeeded(op->fold(folded)) && folded.size() == 1) {
    if (auto v = dyn_cast<Value>(folded[0])) {
      if (v != op->getResult(0))
        op->erase();
      return v;
    }
    auto attr = cast<DenseElementsAttr>(cast<Attribute>(folded[0]));
    op->erase();
    return constant(attr);
  }
  return op->getResult(0);
}

//===----------------------------------------------------------------------===//
// Graph import
//===----------------------------------------------------------------------===//

namespace {

class GraphImporter {
public:
  GraphImporter(MLIRContext *ctx, StringRef path,
                const OnnxImportOptions &options,
                OnnxWeightPayloads &payloads)
      : ctx(ctx), path(path), options(options), payloads(payloads), b(ctx) {}

  OwningOpRef<ModuleOp> run(onnx::ModelProto &model);

private:
  MLIRContext *ctx;
  std::string path;
  const OnnxImportOptions &options;
  OnnxWeightPayloads &payloads;
  OpBuilder b;
  llvm::StringMap<Value> values;
  /// Running statistics updated by training-mode BatchNormalization.
  SmallVector<std::pair<BlockArgument, Value>> bufferUpdates;
  /// Training-mode Dropout: the Dropout nodes seen so far, and the state
  /// argument counting the program's runs (null until one draws a mask).
  int64_t dropoutNodes = 0;
  BlockArgument dropoutStep;
  Value dropoutStepArgument(func::FuncOp func);
  /// Static shapes ONNX shape inference found, to cross-check ours.
  llvm::StringMap<SmallVector<int64_t>> onnxShapes;
  int64_t opset = 0;

  InFlightDiagnostic fileError() {
    return emitError(UnknownLoc::get(ctx)) << path << ": ";
  }
  LogicalResult checkOpsetAndOps(const onnx::ModelProto &model);
  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &info);
  LogicalResult bindInputShapes(onnx::GraphProto &graph);
  Location nodeLoc(const onnx::NodeProto &node, size_t index);
  LogicalResult importNode(const onnx::NodeProto &node, size_t index);
};

} // namespace

LogicalResult
GraphImporter::checkOpsetAndOps(const onnx::ModelProto &model) {
  for (const auto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset) {
    fileError() << "ONNX opset " << opset << " is not supported (tp imports "
                << "opsets " << kMinOnnxOpset << "-" << kMaxOnnxOpset
                << "; convert the model with onnx.version_converter)";
    return failure();
  }
  // Report every unsupported node at once, not just the first.
  std::string list;
  llvm::raw_string_ostream os(list);
  llvm::StringSet<> types;
  int count = 0;
  for (const auto &[i, node] : llvm::enumerate(model.graph().node())) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (defaultDomain && lookupNodeHandler(node.op_type(), opset))
      continue;
    std::string type = defaultDomain ? node.op_type()
                                     : node.domain() + "." + node.op_type();
    types.insert(type);
    os << "\n  " << type << " (node '" << onnxNodeName(node, i)
       << "', opset " << opset;
    if (int64_t since = defaultDomain ? onnxOpSince(node.op_type()) : 0;
        since > opset)
      os << "; tp imports it from opset " << since;
    os << ")";
    ++count;
  }
  if (count) {
    fileError() << count << " node(s) of " << types.size()
                << " unsupported ONNX op type(s):" << list;
    return failure();
  }
  return success();
}

LogicalResult GraphImporter::bindInputShapes(onnx::GraphProto &graph) {
  llvm::StringSet<> known;
  for (auto &in : *graph.mutable_input()) {
    known.insert(in.name());
    auto it = options.inputShapes.find(in.name());
    if (it == options.inputShapes.end())
      continue;
    auto *shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    const auto &dims = it->second;
    if (shape->dim_size() != 0 && shape->dim_size() != int(dims.size())) {
      fileError() << "--shape " << in.name() << " gives " << dims.size()
                  << " dims but the input has rank " << shape->dim_size();
      return failure();
    }
    shape->clear_dim();
    for (int64_t d : dims)
      shape->add_dim()->set_dim_value(d);
  }
  for (const auto &entry : options.inputShapes)
    if (!known.contains(entry.getKey())) {
      std::string names;
      for (const auto &in : graph.input())
        names += (names.empty() ? "" : ", ") + in.name();
      fileError() << "--shape names '" << entry.getKey()
                  << "', which is not a graph input (inputs: " << names << ")";
      return failure();
    }
  return success();
}

FailureOr<RankedTensorType>
GraphImporter::inputType(const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type()) {
    fileError() << "graph input '" << info.name() << "' is not a tensor";
    return failure();
  }
  const auto &tensor = info.type().tensor_type();
  Type elemType = convertOnnxElementType(tensor.elem_type(), ctx);
  if (!elemType) {
    fileError() << "graph input '" << info.name() << "' has unsupported type "
                << onnxElementTypeName(tensor.elem_type());
    return failure();
  }
  if (!tensor.has_shape()) {
    fileError() << "graph input '" << info.name()
                << "' has no shape; give one with --shape " << info.name()
                << "=<d0>x<d1>...";
    return failure();
  }
  SmallVector<int64_t> shape;
  for (const auto &[i, dim] : llvm::enumerate(tensor.shape().dim())) {
    if (!dim.has_dim_value() || dim.dim_value() <= 0) {
      auto diag = fileError() << "graph input '" << info.name() << "' dim "
                              << i;
      if (dim.has_dim_param())
        diag << " ('" << dim.dim_param() << "')";
      diag << " is unknown; bind it with --shape " << info.name()
           << "=<d0>x<d1>...";
      return failure();
    }
    shape.push_back(dim.dim_value());
  }
  return RankedTensorType::get(shape, elemType);
}

Location GraphImporter::nodeLoc(const onnx::NodeProto &node, size_t index) {
  return NameLoc::get(StringAttr::get(ctx, onnxNodeName(node, index)));
}

Value GraphImporter::dropoutStepArgument(func::FuncOp func) {
  if (!dropoutStep) {
    Block &entry = func.getBody().front();
    dropoutStep = entry.addArgument(RankedTensorType::get({}, b.getI64Type()),
                                    NameLoc::get(b.getStringAttr(kDropoutStepName)));
  }
  return dropoutStep;
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        size_t index) {
  Location loc = nodeLoc(node, index);
  SmallVector<Value> inputs;
  // An empty name leaves an optional input out; the checker lets one
  // through in a variadic or required position too, where the handlers
  // expect a value.
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), opset, node.domain());
  for (auto [i, name] : llvm::enumerate(node.input())) {
    if (name.empty()) {
      const auto &formals = schema ? schema->inputs()
                                   : std::vector<onnx::OpSchema::FormalParameter>();
      bool optional =
          i < formals.size() &&
          formals[i].GetOption() == onnx::OpSchema::Optional;
      if (!optional)
        return emitError(loc) << path << ": ONNX node '"
                              << cast<NameLoc>(loc).getName().getValue() << "' ("
                              << node.op_type() << "): input " << i
                              << " is empty, but it is not an optional input";
      inputs.push_back(Value());
      continue;
    }
    auto it = values.find(name);
    if (it == values.end())
      return emitError(loc) << path << ": ONNX node '"
                            << cast<NameLoc>(loc).getName().getValue() << "' ("
                            << node.op_type() << "): input '" << name
                            << "' is not produced by any earlier node, input "
                               "or initializer";
    inputs.push_back(it->second);
  }
  NodeImporter importer(b, path, node, loc, opset, std::move(inputs));
  importer.options = &options;
  auto func = b.getInsertionBlock()->getParent()->getParentOfType<func::FuncOp>();
  auto step = [&] { return dropoutStepArgument(func); };
  importer.dropoutStep = step;
  if (node.op_type() == "Dropout")
    importer.dropoutSite = dropoutNodes++;
  if (failed(lookupNodeHandler(node.op_type(), opset)(importer)))
    return failure();
  llvm::append_range(bufferUpdates, importer.bufferUpdates);
  for (auto [i, name] : llvm::enumerate(node.output())) {
    if (name.empty())
      continue;
    if (i >= importer.outputs.size() || !importer.outputs[i])
      return importer.error() << "output " << i << " ('" << name
                              << "') is not supported";
    values[name] = importer.outputs[i];
    auto inferred = onnxShapes.find(name);
    ArrayRef<int64_t> ours = importer.typeOf(importer.outputs[i]).getShape();
    if (inferred != onnxShapes.end() && ArrayRef(inferred->second) != ours)
      return importer.error()
             << "output '" << name << "' has shape " << formatShape(ours)
             << " in tp but " << formatShape(inferred->second)
             << " by ONNX shape inference";
  }
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run(onnx::ModelProto &model) {
  if (failed(checkOpsetAndOps(model)))
    return {};
  onnx::GraphProto &graph = *model.mutable_graph();
  if (failed(bindInputShapes(graph)))
    return {};
  if (std::string error = bindConstantInputs(graph, options.constantInputs);
      !error.empty()) {
    fileError() << error;
    return {};
  }

  promoteConstantWeights(graph);

  // ONNX's own shape inference, as a cross-check of the shapes tp computes.
  std::string inferError = inferOnnxShapes(model);
  if (!inferError.empty()) {
    fileError() << inferError;
    return {};
  }
  for (const auto &info : graph.value_info()) {
    if (!info.type().has_tensor_type() ||
        !info.type().tensor_type().has_shape())
      continue;
    SmallVector<int64_t> shape;
    bool isStatic = true;
    for (const auto &dim : info.type().tensor_type().shape().dim()) {
      isStatic &= dim.has_dim_value();
      shape.push_back(dim.dim_value());
    }
    if (isStatic)
      onnxShapes[info.name()] = shape;
  }

  llvm::StringSet<> initializerNames;
  for (const auto &init : graph.initializer())
    initializerNames.insert(init.name());

  // Signature: graph inputs, then float initializers (weights).
  SmallVector<Type> argTypes;
  SmallVector<NamedAttribute> argAttrs;
  SmallVector<std::string> argNames;
  for (const auto &in : graph.input()) {
    if (initializerNames.contains(in.name()))
      continue; // IR < 4 lists initializers among inputs too.
    auto type = inputType(in);
    if (failed(type))
      return {};
    argTypes.push_back(*type);
    argAttrs.push_back(b.getNamedAttr("tp.input", b.getStringAttr(in.name())));
    argNames.push_back(in.name());
  }
  SmallVector<const onnx::TensorProto *> constantInits;
  std::map<std::string, std::string> tiedCopies =
      findTransposedCopies(graph, payloads);
  for (auto &init : *graph.mutable_initializer()) {
    if (tiedCopies.count(init.name()))
      continue; // read as the transpose of the weight it copies
    Type elemType = convertOnnxElementType(init.data_type(), ctx);
    if (!elemType) {
      fileError() << "initializer '" << init.name()
                  << "' has unsupported type "
                  << onnxElementTypeName(init.data_type());
      return {};
    }
    if (!isa<FloatType>(elemType) || options.constantInputs.count(init.name())) {
      payloads.restore(init); // read as values
      constantInits.push_back(&init);
      continue;
    }
    SmallVector<int64_t> shape(init.dims().begin(), init.dims().end());
    argTypes.push_back(RankedTensorType::get(shape, elemType));
    argAttrs.push_back(
        b.getNamedAttr("tp.param", b.getStringAttr(init.name())));
    argNames.push_back(init.name());
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(ctx));
  b.setInsertionPointToEnd(module->getBody());
  auto funcType = b.getFunctionType(argTypes, {});
  auto func = func::FuncOp::create(b, NameLoc::get(b.getStringAttr(path)),
                                   options.functionName, funcType);
  Block *entry = func.addEntryBlock();
  // One array of argument attributes: set one by one, they cost a copy of
  // the whole array each.
  SmallVector<DictionaryAttr> argDicts;
  for (const NamedAttribute &attr : argAttrs)
    argDicts.push_back(b.getDictionaryAttr(attr));
  func.setAllArgAttrs(argDicts);
  for (unsigned i = 0; i < argAttrs.size(); ++i) {
    entry->getArgument(i).setLoc(NameLoc::get(b.getStringAttr(argNames[i])));
    values[argNames[i]] = entry->getArgument(i);
  }
  b.setInsertionPointToStart(entry);

  // A tied weight's folded copy is the original, transposed; tp-run --save
  // writes the copy from the trained original (module attr tp.tied_copies).
  SmallVector<NamedAttribute> tied;
  for (const auto &[copy, original] : tiedCopies) {
    Value w = values[original];
    auto type = cast<RankedTensorType>(w.getType());
    auto transposed = RankedTensorType::get(
        {type.getDimSize(1), type.getDimSize(0)}, type.getElementType());
    values[copy] = TransposeOp::create(b, NameLoc::get(b.getStringAttr(copy)),
                                       transposed, w,
                                       b.getDenseI64ArrayAttr({1, 0}));
    tied.push_back(b.getNamedAttr(copy, b.getStringAttr(original)));
  }
  if (!tied.empty())
    (*module)->setAttr("tp.tied_copies", b.getDictionaryAttr(tied));
  // tp-run names these if asked to feed them.
  if (!options.constantInputs.empty()) {
    SmallVector<Attribute> bound;
    for (const auto &entry : options.constantInputs)
      bound.push_back(b.getStringAttr(entry.first));
    (*module)->setAttr("tp.constant_inputs", b.getArrayAttr(bound));
  }

  for (const onnx::TensorProto *init : constantInits) {
    std::string error;
    DenseElementsAttr attr = convertOnnxTensor(*init, ctx, error);
    if (!attr) {
      fileError() << "initializer '" << init->name() << "': " << error;
      return {};
    }
    values[init->name()] = ConstantOp::create(
        b, NameLoc::get(b.getStringAttr(init->name())), attr);
  }

  for (const auto &[i, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, i)))
      return {};

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const auto &out : graph.output()) {
    auto it = values.find(out.name());
    if (it == values.end()) {
      fileError() << "graph output '" << out.name()
                  << "' is not produced by any node";
      return {};
    }
    // A declared shape must be what the graph computes: ONNX's inference
    // checks it only where it can infer. Dims without a value (symbolic)
    // match anything. With --shape, declarations describe the model as
    // exported, not as bound, and are not compared.
    ArrayRef<int64_t> ours =
        cast<RankedTensorType>(it->second.getType()).getShape();
    if (options.inputShapes.empty() && out.type().has_tensor_type() &&
        out.type().tensor_type().has_shape()) {
      const auto &dims = out.type().tensor_type().shape().dim();
      bool agrees = dims.size() == int64_t(ours.size());
      SmallVector<std::string> declared;
      for (const auto &[d, dim] : llvm::enumerate(dims)) {
        declared.push_back(dim.has_dim_value() ? std::to_string(dim.dim_value())
                           : dim.dim_param().empty() ? "?"
                                                     : dim.dim_param());
        agrees &= !dim.has_dim_value() ||
                  (d < ours.size() && dim.dim_value() == ours[d]);
      }
      if (!agrees) {
        fileError() << "graph output '" << out.name() << "' is declared ["
                    << llvm::join(declared, ", ")
                    << "] but the graph computes " << formatShape(ours);
        return {};
      }
    }
    results.push_back(it->second);
    resultTypes.push_back(it->second.getType());
  }
  // Updated buffers follow the graph outputs, named after their weight.
  SmallVector<std::string> bufferNames;
  if (options.bufferUpdates)
    for (auto [arg, updated] : bufferUpdates) {
      // Running statistics fed as graph inputs are the caller's to update.
      if (!func.getArgAttr(arg.getArgNumber(), "tp.param"))
        continue;
      results.push_back(updated);
      resultTypes.push_back(updated.getType());
      bufferNames.push_back(
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tp.param")
              .str());
    }
  // Training-mode Dropout: the next run draws other masks.
  if (dropoutStep) {
    auto type = cast<RankedTensorType>(dropoutStep.getType());
    Value one = ConstantOp::create(b, dropoutStep.getLoc(),
                                   DenseElementsAttr::get(type, ArrayRef<int64_t>{1}));
    results.push_back(AddOp::create(b, dropoutStep.getLoc(), dropoutStep, one));
    resultTypes.push_back(type);
    bufferNames.push_back(kDropoutStepName);
    // The argument's attributes go with the function's type.
    SmallVector<DictionaryAttr> argDicts;
    func.getAllArgAttrs(argDicts);
    argDicts.push_back(b.getDictionaryAttr(
        b.getNamedAttr("tp.state", b.getStringAttr(kDropoutStepName))));
    argTypes.push_back(type);
    func.setType(b.getFunctionType(argTypes, resultTypes));
    func.setAllArgAttrs(argDicts);
  }
  func::ReturnOp::create(b, func.getLoc(), results);
  // Shape-arithmetic constants that folded into static shapes are dead now.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  func.setType(b.getFunctionType(argTypes, resultTypes));
  SmallVector<DictionaryAttr> resultDicts;
  for (const auto &out : graph.output())
    resultDicts.push_back(b.getDictionaryAttr(
        b.getNamedAttr("tp.output", b.getStringAttr(out.name()))));
  for (const std::string &name : bufferNames)
    resultDicts.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("tp.output", b.getStringAttr(name)),
         b.getNamedAttr("tp.buffer_update", b.getUnitAttr())}));
  func.setAllResultAttrs(resultDicts);
  // PyTorch's names for weights the exporter renamed (folded W^T, tied).
  ModuleTree::build(func).annotate(func);
  return module;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> tp::importOnnxFile(MLIRContext *context, StringRef path,
                                         const OnnxImportOptions &options) {
  context->loadDialect<TPDialect, func::FuncDialect>();
  onnx::ModelProto model;
  OnnxWeightPayloads payloads;
  std::string error = loadOnnxModel(path.str(), model, payloads);
  if (!error.empty()) {
    emitError(UnknownLoc::get(context)) << error;
    return {};
  }
  if (options.untieMerged)
    tprt::untieMergedInitializers(
        model, [&](const onnx::TensorProto &from, onnx::TensorProto &to) {
          auto it = payloads.inFile.find(&from);
          if (it != payloads.inFile.end())
            payloads.inFile[&to] = it->second;
        });
  GraphImporter importer(context, path, options, payloads);
  OwningOpRef<ModuleOp> module = importer.run(model);
  if (module && options.untieMerged)
    (*module)->setAttr("tp.untie_merged", UnitAttr::get(context));
  if (module && failed(verify(*module)))
    return {};
  return module;
}

std::optional<std::string>
tp::parseConstantInputBinding(StringRef binding, OnnxImportOptions &options) {
  auto [name, file] = binding.split('=');
  if (name.empty() || file.empty())
    return "--constant-input expects <input>=<file.npy or tensor.pb>, got '" +
           binding.str() + "'";
  if (!options.constantInputs.emplace(name.str(), file.str()).second)
    return "--constant-input " + name.str() + " is given twice";
  return std::nullopt;
}

std::optional<std::string>
tp::parseShapeBinding(StringRef binding, OnnxImportOptions &options) {
  auto [name, dims] = binding.split('=');
  if (name.empty() || dims.empty())
    return "--shape expects <input>=<d0>x<d1>..., got '" + binding.str() + "'";
  if (options.inputShapes.count(name))
    return "--shape " + name.str() + " is given twice";
  // 2^40 elements (4 TiB of f32) is beyond any device; past it, sizes
  // would soon overflow the int64 byte counts downstream.
  constexpr int64_t kMaxElements = int64_t(1) << 40;
  SmallVector<int64_t> shape;
  SmallVector<StringRef> parts;
  dims.split(parts, 'x');
  int64_t elements = 1;
  for (StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d <= 0)
      return "--shape " + name.str() + ": '" + p.str() +
             "' is not a positive dimension in '" + dims.str() + "'";
    if (d > kMaxElements / elements)
      return "--shape " + name.str() + "=" + dims.str() +
             ": more than 2^40 elements, larger than any device holds";
    elements *= d;
    shape.push_back(d);
  }
  options.inputShapes[name] = shape;
  return std::nullopt;
}
