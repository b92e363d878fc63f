//===- fuzz-manifest.cpp - libFuzzer target: manifest.json (tp-run) -------===//
//
// A manifest that parses must describe tensors whose blocks stay inside
// their buffers: every rank's block of every tensor is computed, as
// tp-run does before it copies.
//
//===----------------------------------------------------------------------===//
#include "tprt/Manifest.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  tprt::Manifest m;
  if (!tprt::Manifest::parse("manifest.json", text, ".", m))
    return 0;
  for (int r = 0; r < m.mesh.numRanks() && r < 64; ++r)
    for (const auto *list : {&m.arguments, &m.results})
      for (const tprt::TensorSpec &t : *list) {
        std::vector<int64_t> block = t.blockOf(m.mesh, r);
        for (size_t d = 0; d < block.size(); ++d)
          if (block[d] < 0 ||
              (block[d] + 1) * t.localShape[d] > t.shape[d])
            std::abort(); // a block outside its tensor: a parser bug
      }
  return 0;
}
