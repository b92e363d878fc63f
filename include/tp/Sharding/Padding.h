//===- Padding.h - the padding of unevenly split dims ----------*- C++ -*-===//
//
// tp-pad-uneven pads a dim split k ways to a multiple of k. Where a padded
// dim is a reshape of several, its padding may lie inside it: a dim is
// described as blocks, major first, each `real` elements laid out in
// `padded` places (element (i, j) of two blocks is at i * padded_j + j).
// The pass records the blocks of what it pads (`tp.padded_dims` on ops and
// arguments); tp-partition notes on each collective that moves a padded
// value how many of its elements are real on each rank, which the report
// prints.
//
//===----------------------------------------------------------------------===//
#ifndef TP_SHARDING_PADDING_H
#define TP_SHARDING_PADDING_H

#include "tp/Sharding/Sharding.h"

namespace mlir::tp {

/// On ops (per result) and function arguments: the blocks of each dim, as
/// [real, padded, real, padded, ...] per dim; absent when nothing is padded.
constexpr llvm::StringLiteral kPaddedDimsAttr = "tp.padded_dims";
/// On collectives of a padded value: per rank (mesh order), the real
/// elements of the block it hands to the collective.
constexpr llvm::StringLiteral kRealElementsAttr = "tp.real_elements";

struct PadBlock {
  int64_t real, padded;
  bool operator==(const PadBlock &o) const {
    return real == o.real && padded == o.padded;
  }
};
/// A dim as canonical blocks (see canonicalPadding): two layouts of a dim
/// are the same exactly when their blocks are equal.
using DimPadding = SmallVector<PadBlock, 2>;
using TensorPadding = SmallVector<DimPadding>;

/// Drops size-1 blocks and merges a block without padding into the block
/// before it ((r, p), (s, s) places elements exactly as (r * s, p * s)).
DimPadding canonicalPadding(ArrayRef<PadBlock> blocks, int64_t size);
int64_t paddedSize(const DimPadding &d);
int64_t realSize(const DimPadding &d);
bool isPadded(const DimPadding &d);
bool isPadded(const TensorPadding &t);
/// Whether each place of a padded dim holds an element.
SmallVector<bool> elementPlaces(const DimPadding &d);
/// `12 padded to 14`, for messages.
std::string describePadding(const DimPadding &d);

ArrayAttr paddingToAttr(MLIRContext *ctx, const TensorPadding &t);
/// Null attribute or a malformed one: std::nullopt.
std::optional<TensorPadding> paddingFromAttr(Attribute attr);

/// The real elements of `rank`'s block of a tensor padded as `t` and split
/// as `layout` (its local shape is the padded shape divided by the split).
int64_t realElementsOnRank(const TensorPadding &t,
                           const TensorSharding &layout, const Mesh &mesh,
                           int64_t rank);

} // namespace mlir::tp

#endif // TP_SHARDING_PADDING_H
