//===- TPAttrs.cpp - tp dialect attributes --------------------------------===//
#include "tp/Dialect/TP/IR/TPDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tp;

#define GET_ATTRDEF_CLASSES
#include "tp/Dialect/TP/IR/TPAttrs.cpp.inc"

/// Parses `{"a", "b"}` into an array of string attributes.
static ParseResult parseAxisSet(AsmParser &parser, ArrayAttr &result) {
  SmallVector<Attribute> axes;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Braces, [&]() -> ParseResult {
            std::string name;
            if (parser.parseString(&name))
              return failure();
            axes.push_back(parser.getBuilder().getStringAttr(name));
            return success();
          }))
    return failure();
  result = parser.getBuilder().getArrayAttr(axes);
  return success();
}

static void printAxisSet(AsmPrinter &printer, ArrayAttr axes) {
  printer << '{';
  llvm::interleaveComma(axes, printer, [&](Attribute a) {
    printer << '"' << cast<StringAttr>(a).getValue() << '"';
  });
  printer << '}';
}

Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  SmallVector<Attribute> dims;
  ArrayAttr partial = parser.getBuilder().getArrayAttr({});
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       ArrayAttr axes;
                                       if (parseAxisSet(parser, axes))
                                         return failure();
                                       dims.push_back(axes);
                                       return success();
                                     }))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("partial") || parser.parseEqual() ||
       parseAxisSet(parser, partial)))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ShardingAttr>(
      parser.getContext(), parser.getBuilder().getArrayAttr(dims), partial);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getDims(), printer, [&](Attribute a) {
    printAxisSet(printer, cast<ArrayAttr>(a));
  });
  printer << ']';
  if (!getPartial().empty()) {
    printer << ", partial = ";
    printAxisSet(printer, getPartial());
  }
  printer << '>';
}

LogicalResult
ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     ArrayAttr dims, ArrayAttr partial) {
  llvm::StringSet<> seen;
  auto check = [&](ArrayAttr axes) -> LogicalResult {
    for (Attribute a : axes) {
      auto name = dyn_cast<StringAttr>(a);
      if (!name)
        return emitError() << "mesh axes must be strings";
      if (!seen.insert(name.getValue()).second)
        return emitError() << "mesh axis \"" << name.getValue()
                           << "\" is used more than once";
    }
    return success();
  };
  for (Attribute d : dims) {
    auto axes = dyn_cast<ArrayAttr>(d);
    if (!axes || failed(check(axes)))
      return failure();
  }
  return check(partial);
}

void TPDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tp/Dialect/TP/IR/TPAttrs.cpp.inc"
      >();
}
