//===- Padding.cpp - the padding of unevenly split dims -------------------===//
#include "tp/Sharding/Padding.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::tp;

DimPadding tp::canonicalPadding(ArrayRef<PadBlock> blocks, int64_t size) {
  DimPadding out;
  for (PadBlock b : blocks) {
    if (b.padded == 1)
      continue;
    if (!out.empty() && b.real == b.padded) {
      out.back().real *= b.real;
      out.back().padded *= b.padded;
      continue;
    }
    out.push_back(b);
  }
  if (out.empty())
    out.push_back({size, size});
  return out;
}

int64_t tp::paddedSize(const DimPadding &d) {
  int64_t n = 1;
  for (PadBlock b : d)
    n *= b.padded;
  return n;
}

int64_t tp::realSize(const DimPadding &d) {
  int64_t n = 1;
  for (PadBlock b : d)
    n *= b.real;
  return n;
}

bool tp::isPadded(const DimPadding &d) {
  return llvm::any_of(d, [](PadBlock b) { return b.real != b.padded; });
}

bool tp::isPadded(const TensorPadding &t) {
  return llvm::any_of(t, [](const DimPadding &d) { return isPadded(d); });
}

SmallVector<bool> tp::elementPlaces(const DimPadding &d) {
  SmallVector<bool> out(paddedSize(d));
  for (int64_t i = 0; i < int64_t(out.size()); ++i) {
    int64_t rest = i;
    bool real = true;
    for (PadBlock b : llvm::reverse(d)) {
      real &= rest % b.padded < b.real;
      rest /= b.padded;
    }
    out[i] = real;
  }
  return out;
}

std::string tp::describePadding(const DimPadding &d) {
  std::string s;
  for (PadBlock b : d)
    s += (s.empty() ? "" : " x ") + std::to_string(b.real) +
         (b.real == b.padded ? "" : " padded to " + std::to_string(b.padded));
  return s;
}

ArrayAttr tp::paddingToAttr(MLIRContext *ctx, const TensorPadding &t) {
  Builder b(ctx);
  SmallVector<Attribute> dims;
  for (const DimPadding &d : t) {
    SmallVector<int64_t> flat;
    for (PadBlock blk : d) {
      flat.push_back(blk.real);
      flat.push_back(blk.padded);
    }
    dims.push_back(b.getDenseI64ArrayAttr(flat));
  }
  return b.getArrayAttr(dims);
}

std::optional<TensorPadding> tp::paddingFromAttr(Attribute attr) {
  auto list = dyn_cast_or_null<ArrayAttr>(attr);
  if (!list)
    return std::nullopt;
  TensorPadding t;
  for (Attribute a : list) {
    auto flat = dyn_cast<DenseI64ArrayAttr>(a);
    if (!flat || flat.size() == 0 || flat.size() % 2)
      return std::nullopt;
    DimPadding d;
    for (int64_t i = 0; i < flat.size(); i += 2)
      d.push_back({flat[i], flat[i + 1]});
    t.push_back(d);
  }
  return t;
}

int64_t tp::realElementsOnRank(const TensorPadding &t,
                               const TensorSharding &layout, const Mesh &mesh,
                               int64_t rank) {
  // The rank's coordinates, row-major over the mesh axes.
  SmallVector<int64_t> coords(mesh.sizes.size());
  for (int a = int(mesh.sizes.size()) - 1; a >= 0; --a) {
    coords[a] = rank % mesh.sizes[a];
    rank /= mesh.sizes[a];
  }
  int64_t n = 1;
  for (auto [d, dim] : llvm::enumerate(t)) {
    int64_t block = 0, split = 1;
    for (int a : layout.dims[d]) {
      block = block * mesh.sizes[a] + coords[a];
      split *= mesh.sizes[a];
    }
    int64_t size = paddedSize(dim) / split;
    if (dim.size() == 1) {
      n *= std::clamp<int64_t>(dim[0].real - block * size, 0, size);
      continue;
    }
    SmallVector<bool> places = elementPlaces(dim);
    n *= llvm::count(ArrayRef(places).slice(block * size, size), true);
  }
  return n;
}
