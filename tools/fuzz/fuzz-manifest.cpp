//===- fuzz-manifest.cpp - libFuzzer target: manifest.json (tp-run) -------===//
//
// A manifest that parses must describe tensors whose blocks stay inside
// their buffers: every rank's block of every tensor is walked, as tp-run
// walks it when it copies (uneven blocks included).
//
//===----------------------------------------------------------------------===//
#include "tprt/Blocks.h"
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
        tprt::forEachBlockRun(
            t, m.mesh, r, [&](int64_t g, int64_t l, int64_t n) {
              if (g < 0 || l < 0 || g + n > t.numElements() ||
                  l + n > t.localElements())
                std::abort(); // a block outside its buffers: a parser bug
            });
      }
  return 0;
}
