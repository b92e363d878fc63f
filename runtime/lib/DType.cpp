//===- DType.cpp - element types the runtime moves and reduces ------------===//
#include "tprt/DType.h"

#include <algorithm>
#include <cstring>

using namespace tprt;

size_t tprt::dtypeSize(int32_t dtype) {
  switch (dtype) {
  case TPRT_F32:
  case TPRT_I32:
    return 4;
  case TPRT_BOOL:
  case TPRT_I8:
    return 1;
  case TPRT_I16:
    return 2;
  case TPRT_F16:
  case TPRT_BF16:
    return 2;
  case TPRT_I64:
  case TPRT_F64:
    return 8;
  default:
    return 0;
  }
}

const char *tprt::dtypeName(int32_t dtype) {
  switch (dtype) {
  case TPRT_F32:
    return "f32";
  case TPRT_F16:
    return "f16";
  case TPRT_BF16:
    return "bf16";
  case TPRT_I64:
    return "i64";
  case TPRT_F64:
    return "f64";
  case TPRT_I32:
    return "i32";
  case TPRT_BOOL:
    return "i1";
  case TPRT_I8:
    return "i8";
  case TPRT_I16:
    return "i16";
  default:
    return "?";
  }
}

int32_t tprt::dtypeFromName(const std::string &name) {
  for (int32_t d : {TPRT_F32, TPRT_F16, TPRT_BF16, TPRT_I64, TPRT_F64,
                    TPRT_I32, TPRT_BOOL, TPRT_I8, TPRT_I16})
    if (name == dtypeName(d))
      return d;
  return -1;
}

float tprt::halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t tprt::floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = (bits >> 16) & 0x8000;
  int32_t exp = int32_t((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mant = bits & 0x7fffff;
  if (((bits >> 23) & 0xff) == 0xff) // inf / nan
    return sign | 0x7c00 | (mant ? 0x200 : 0);
  if (exp >= 31)
    return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10)
      return sign;
    mant |= 0x800000;
    uint32_t shift = 14 - exp;
    uint32_t half = mant >> shift;
    uint32_t rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, which is right
  return sign | uint16_t(half);
}

float tprt::bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t tprt::floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return uint16_t((bits >> 16) | 0x40); // keep NaN a NaN
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return uint16_t((bits + rounding) >> 16);
}

void tprt::widenBf16(const uint16_t *bits, float *out, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    out[i] = bf16ToFloat(bits[i]);
}

template <typename T>
static void reduceTyped(T *dst, const T *src, int64_t n, int32_t op) {
  if (op == TPRT_MAX)
    for (int64_t i = 0; i < n; ++i)
      dst[i] = std::max(dst[i], src[i]);
  else
    for (int64_t i = 0; i < n; ++i)
      dst[i] += src[i];
}

template <float (*ToF)(uint16_t), uint16_t (*FromF)(float)>
static void reduce16(uint16_t *dst, const uint16_t *src, int64_t n,
                     int32_t op) {
  for (int64_t i = 0; i < n; ++i) {
    float a = ToF(dst[i]), b = ToF(src[i]);
    dst[i] = FromF(op == TPRT_MAX ? std::max(a, b) : a + b);
  }
}

void tprt::reduceInto(void *dst, const void *src, int64_t count,
                      int32_t dtype, int32_t op) {
  switch (dtype) {
  case TPRT_F32:
    return reduceTyped(static_cast<float *>(dst),
                       static_cast<const float *>(src), count, op);
  case TPRT_F64:
    return reduceTyped(static_cast<double *>(dst),
                       static_cast<const double *>(src), count, op);
  case TPRT_I64:
    return reduceTyped(static_cast<int64_t *>(dst),
                       static_cast<const int64_t *>(src), count, op);
  case TPRT_I32:
    return reduceTyped(static_cast<int32_t *>(dst),
                       static_cast<const int32_t *>(src), count, op);
  case TPRT_I16:
    return reduceTyped(static_cast<int16_t *>(dst),
                       static_cast<const int16_t *>(src), count, op);
  case TPRT_I8:
    return reduceTyped(static_cast<int8_t *>(dst),
                       static_cast<const int8_t *>(src), count, op);
  case TPRT_BOOL: // sum and max of booleans: or
    for (int64_t i = 0; i < count; ++i)
      static_cast<uint8_t *>(dst)[i] |= static_cast<const uint8_t *>(src)[i];
    return;
  case TPRT_F16:
    return reduce16<halfToFloat, floatToHalf>(
        static_cast<uint16_t *>(dst), static_cast<const uint16_t *>(src),
        count, op);
  case TPRT_BF16:
    return reduce16<bf16ToFloat, floatToBf16>(
        static_cast<uint16_t *>(dst), static_cast<const uint16_t *>(src),
        count, op);
  default:
    return;
  }
}
