//===- Mesh.h - ranks on a device mesh and their groups --------*- C++ -*-===//
#ifndef TPRT_MESH_H
#define TPRT_MESH_H

#include <cstdint>
#include <string>
#include <vector>

namespace tprt {

/// Ranks laid out row-major on the mesh (axis 0 is the major axis).
struct Mesh {
  std::vector<std::string> names;
  std::vector<int64_t> sizes;

  int numRanks() const;
  std::vector<int64_t> coords(int rank) const;
  /// The ranks that share `rank`'s coordinates on every axis outside
  /// `axesMask`, in group order (linear index over the masked axes, major
  /// first). A collective over `axesMask` runs within this group.
  std::vector<int> group(int rank, int64_t axesMask) const;
  /// `rank`'s position in its group along `axesMask`.
  int64_t indexAlong(int rank, int64_t axesMask) const;
  /// `dp=2,tp=4`
  std::string describe() const;
};

} // namespace tprt

#endif // TPRT_MESH_H
