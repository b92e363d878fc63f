//===- fuzz-npy.cpp - libFuzzer target: .npy files (tp-run --input) -------===//
#include "FuzzInput.h"
#include "tprt/Npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tpfuzz::InputFile file(data, size);
  if (!file.ok())
    return 0;
  tprt::NpyArray array;
  (void)tprt::readNpy(file.path(), array);
  return 0;
}
