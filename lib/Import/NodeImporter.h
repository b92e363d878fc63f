//===- NodeImporter.h - the state one ONNX node is imported with -*- C++ -*-===//
#ifndef TP_LIB_IMPORT_NODEIMPORTER_H
#define TP_LIB_IMPORT_NODEIMPORTER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "onnx/onnx_pb.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Import/OnnxImporter.h"
#include "OnnxModelLoader.h"
#include <map>

namespace mlir::tp {

/// How messages and locations name a node: its name, or for unnamed nodes
/// (ONNX text syntax) its first output.
std::string onnxNodeName(const onnx::NodeProto &node, size_t index);

/// The ONNX element type as an MLIR type (ONNX bool is i1), or null.
Type convertOnnxElementType(int32_t onnxType, MLIRContext *ctx);

/// The ONNX TensorProto name of an element type, for messages.
std::string onnxElementTypeName(int32_t onnxType);

/// The contents of a TensorProto (raw_data or typed fields) as an attribute.
/// Fails with `error` set for external data or unsupported element types.
DenseElementsAttr convertOnnxTensor(const onnx::TensorProto &tensor,
                                    MLIRContext *ctx, std::string &error);

/// Renamed 2-D f32 initializers whose data is exactly the transpose of a
/// named one (a tied weight that constant folding copied): copy -> original.
/// Data left in the file is read there.
std::map<std::string, std::string>
findTransposedCopies(const onnx::GraphProto &graph,
                     const OnnxWeightPayloads &payloads);

/// One node being imported: its inputs as Values (null where an optional
/// input is absent), its attributes, and the outputs the handler produces.
/// Errors are emitted at the node's location and name it.
class NodeImporter {
public:
  NodeImporter(OpBuilder &builder, StringRef modelPath,
               const onnx::NodeProto &node, Location loc, int64_t opset,
               SmallVector<Value> inputs)
      : b(builder), modelPath(modelPath), node(node), loc(loc), opset(opset),
        inputs(std::move(inputs)) {}

  OpBuilder &b;
  StringRef modelPath;
  /// The import's options (BatchNormalization's mode and groups).
  const OnnxImportOptions *options = nullptr;
  /// Buffers (running statistics) the node updates: the weight argument
  /// and its new value, returned by the function when options ask for it.
  SmallVector<std::pair<BlockArgument, Value>> bufferUpdates;
  /// Dropout: this node's number among the graph's Dropout nodes, and the
  /// program's run counter (a state argument, made on first use).
  int64_t dropoutSite = 0;
  llvm::function_ref<Value()> dropoutStep;
  const onnx::NodeProto &node;
  Location loc;
  int64_t opset;
  SmallVector<Value> inputs;
  SmallVector<Value> outputs;

  /// `<model>: ONNX node '<name>' (<OpType>): ` and the caller's message.
  InFlightDiagnostic error();
  /// The node's name as used in locations and messages.
  StringRef nameLocName() const;

  /// Input `i`, or null if absent.
  Value input(unsigned i) const { return i < inputs.size() ? inputs[i] : Value(); }
  /// Input `i`, emitting an error if absent.
  FailureOr<Value> requiredInput(unsigned i, StringRef what);
  RankedTensorType typeOf(Value v) const {
    return cast<RankedTensorType>(v.getType());
  }
  /// Number of outputs the graph uses (trailing optional ones may be unnamed).
  unsigned numOutputs() const { return node.output_size(); }
  bool outputUsed(unsigned i) const {
    return int(i) < node.output_size() && !node.output(i).empty();
  }

  const onnx::AttributeProto *attr(StringRef name) const;
  int64_t intAttr(StringRef name, int64_t dflt) const;
  float floatAttr(StringRef name, float dflt) const;
  std::optional<SmallVector<int64_t>> intsAttr(StringRef name) const;
  std::string stringAttr(StringRef name, StringRef dflt) const;

  /// The integer contents of a compile-time constant input (shape, axes,
  /// starts...), or an error naming the input.
  /// Appends to `diag` why `v` is not a constant.
  void explainNotConstant(Value v, InFlightDiagnostic &diag);
  FailureOr<SmallVector<int64_t>> constantInts(Value v, StringRef what);

  /// Normalizes a possibly negative axis against `rank`, or an error.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                   StringRef what = "axis");

  /// Builds the tp op and checks it verifies, so that shape errors are
  /// reported against this node rather than later.
  template <typename OpTy, typename... Args>
  FailureOr<Value> create(Type resultType, Args &&...args) {
    auto op = OpTy::create(b, loc, resultType, std::forward<Args>(args)...);
    return finish(op);
  }
  /// A two-operand op whose result type follows from its operands
  /// (broadcasting ops, matmul); reports incompatible operands as the op's
  /// verifier would.
  template <typename OpTy> FailureOr<Value> createInferred(Value lhs, Value rhs) {
    BinaryShapeFn shapeFn = std::is_same_v<OpTy, MatMulOp>
                                ? BinaryShapeFn(matmulShape)
                                : BinaryShapeFn(broadcastShapes);
    std::string why;
    RankedTensorType type =
        inferBinaryOpType(lhs.getType(), rhs.getType(), shapeFn, why);
    if (!type) {
      error() << "'" << OpTy::getOperationName() << "' op " << why;
      return failure();
    }
    return create<OpTy>(type, lhs, rhs);
  }

  /// A tp.constant of `attr`.
  Value constant(DenseElementsAttr attr);

private:
  FailureOr<Value> finish(Operation *op);
};

using NodeHandler = LogicalResult (*)(NodeImporter &);

/// An ONNX op type tp imports: its handler, from opset `since` on.
struct OnnxOpEntry {
  StringRef opType;
  int64_t since; // first opset of the semantics imported
  NodeHandler handler;
};

/// The op types of each op family's file; OnnxOps.cpp gathers them.
ArrayRef<OnnxOpEntry> elementwiseOnnxOps(); // OnnxElementwiseOps.cpp
ArrayRef<OnnxOpEntry> contractionOnnxOps(); // OnnxContractionOps.cpp
ArrayRef<OnnxOpEntry> normReduceOnnxOps();  // OnnxNormReduceOps.cpp
ArrayRef<OnnxOpEntry> shapeOnnxOps();       // OnnxShapeOps.cpp
ArrayRef<OnnxOpEntry> constantOnnxOps();    // OnnxConstantOps.cpp
ArrayRef<OnnxOpEntry> convOnnxOps();        // OnnxConvOps.cpp

// Compositions the op files share (OnnxShapeOps.cpp).

/// `v` reshaped to `shape` (folds away when it has it already).
FailureOr<Value> reshape(NodeImporter &n, Value v, ArrayRef<int64_t> shape);
/// `v` as [outer, inner] split at `axis` (Flatten; Softmax before opset 13).
FailureOr<Value> flattenAt(NodeImporter &n, Value v, int64_t axis);
/// `v` with dim `from` moved to `to`, the other dims in their order.
FailureOr<Value> moveDim(NodeImporter &n, Value v, int64_t from, int64_t to);
/// tp.one_hot of `indices` over `classes` (a last dim), of type `element`.
FailureOr<Value> oneHotLast(NodeImporter &n, Value indices, int64_t classes,
                            Type element);
/// The tp reduction `OpTy` of `v` over `axes` (sorted).
template <typename OpTy>
FailureOr<Value> reduceOver(NodeImporter &n, Value v, ArrayRef<int64_t> axes,
                            bool keepdims) {
  RankedTensorType type = n.typeOf(v);
  return n.create<OpTy>(
      RankedTensorType::get(reducedShape(type.getShape(), axes, keepdims),
                            type.getElementType()),
      v, n.b.getDenseI64ArrayAttr(axes), n.b.getBoolAttr(keepdims));
}

/// Range, CumSum, ScatterElements, ScatterND, TopK (OnnxIndexOps.cpp).
LogicalResult importRange(NodeImporter &n);
LogicalResult importCumSum(NodeImporter &n);
LogicalResult importScatterElements(NodeImporter &n);
LogicalResult importScatterND(NodeImporter &n);
LogicalResult importTopK(NodeImporter &n);
/// Resize and ConvTranspose (OnnxResampling.cpp).
LogicalResult importResize(NodeImporter &n);
LogicalResult importConvTranspose(NodeImporter &n);
/// Einsum (OnnxEinsum.cpp).
LogicalResult importEinsum(NodeImporter &n);
/// The loss ops (OnnxLossOps.cpp).
LogicalResult importNegativeLogLikelihoodLoss(NodeImporter &n);
LogicalResult importSoftmaxCrossEntropyLoss(NodeImporter &n);

/// The handler of ONNX `opType` (default domain) at `opset`; null when tp
/// does not import it (or not at that opset). (OnnxOps.cpp)
NodeHandler lookupNodeHandler(StringRef opType, int64_t opset);
/// The first opset from which tp imports `opType` (0 if it never does).
int64_t onnxOpSince(StringRef opType);

} // namespace mlir::tp

#endif // TP_LIB_IMPORT_NODEIMPORTER_H
