//===- DType.h - element types the runtime moves and reduces ---*- C++ -*-===//
#ifndef TPRT_DTYPE_H
#define TPRT_DTYPE_H

#include "tprt/tprt.h"
#include <cstddef>
#include <cstdint>
#include <string>

namespace tprt {

/// Bytes per element of a TPRT_* dtype code (0 if unknown).
size_t dtypeSize(int32_t dtype);
/// "f32", "bf16", ... for messages and manifests; -1 if unknown.
const char *dtypeName(int32_t dtype);
int32_t dtypeFromName(const std::string &name);

/// dst[i] = dst[i] (op) src[i] for `count` elements; f16 / bf16 are
/// accumulated in float.
void reduceInto(void *dst, const void *src, int64_t count, int32_t dtype,
                int32_t reduction);

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f);
/// out[i] = the float of bf16 bit pattern bits[i], for `count` elements.
void widenBf16(const uint16_t *bits, float *out, int64_t count);

} // namespace tprt

#endif // TPRT_DTYPE_H
