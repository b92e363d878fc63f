//===- Mesh.cpp - ranks on a device mesh and their groups -----------------===//
#include "tprt/Mesh.h"

using namespace tprt;

int Mesh::numRanks() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return int(n);
}

std::vector<int64_t> Mesh::coords(int rank) const {
  std::vector<int64_t> c(sizes.size());
  for (int a = int(sizes.size()) - 1; a >= 0; --a) {
    c[a] = rank % sizes[a];
    rank /= sizes[a];
  }
  return c;
}

int64_t Mesh::indexAlong(int rank, int64_t mask) const {
  std::vector<int64_t> c = coords(rank);
  int64_t idx = 0;
  for (size_t a = 0; a < sizes.size(); ++a)
    if (mask & (int64_t(1) << a))
      idx = idx * sizes[a] + c[a];
  return idx;
}

std::vector<int> Mesh::group(int rank, int64_t mask) const {
  std::vector<int64_t> mine = coords(rank);
  std::vector<int> members;
  for (int r = 0; r < numRanks(); ++r) {
    std::vector<int64_t> c = coords(r);
    bool same = true;
    for (size_t a = 0; a < sizes.size(); ++a)
      if (!(mask & (int64_t(1) << a)) && c[a] != mine[a])
        same = false;
    if (same)
      members.push_back(r);
  }
  // Row-major enumeration already orders members by their masked coords.
  return members;
}

std::string Mesh::describe() const {
  std::string s;
  for (size_t a = 0; a < sizes.size(); ++a)
    s += (a ? "," : "") + names[a] + "=" + std::to_string(sizes[a]);
  return s;
}
