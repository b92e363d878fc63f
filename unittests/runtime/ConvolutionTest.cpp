//===- ConvolutionTest.cpp - tprt_conv on oneDNN against direct loops -----===//
//
// Each case runs the forward convolution and both gradients through
// tprt_conv and compares them with the definition summed in doubles:
// y[n, m, o] = sum over c, k of x[n, g(m) C/g + c, o s + k d - pad] w[m, c, k].
//
//===----------------------------------------------------------------------===//
#include "tprt/DType.h"
#include "tprt/tprt.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

struct ConvCase {
  int64_t rank, group, n, c, m;
  std::vector<int64_t> spatial, kernel, strides, dilations, padBegin, padEnd;
};

std::ostream &operator<<(std::ostream &os, const ConvCase &k) {
  return os << k.rank << "-d, group " << k.group << ", " << k.n << "x" << k.c
            << " -> " << k.m << ", stride " << k.strides[0] << ", dilation "
            << k.dilations[0] << ", pads " << k.padBegin[0] << "/"
            << k.padEnd[0];
}

class Convolution : public testing::TestWithParam<ConvCase> {
public:
  std::vector<int64_t> shape = std::vector<int64_t>(TPRT_CONV_SHAPE_SIZE, 0);
  std::vector<int64_t> out;
  int64_t outputs = 1, windows = 1;

  void SetUp() override {
    const ConvCase &k = GetParam();
    shape[TPRT_CONV_RANK] = k.rank;
    shape[TPRT_CONV_GROUP] = k.group;
    shape[TPRT_CONV_N] = k.n;
    shape[TPRT_CONV_C] = k.c;
    shape[TPRT_CONV_M] = k.m;
    for (int64_t i = 0; i < k.rank; ++i) {
      int64_t span = k.dilations[i] * (k.kernel[i] - 1) + 1;
      out.push_back((k.spatial[i] + k.padBegin[i] + k.padEnd[i] - span) /
                        k.strides[i] +
                    1);
      outputs *= out[i];
      windows *= k.kernel[i];
      shape[TPRT_CONV_SPATIAL + i] = k.spatial[i];
      shape[TPRT_CONV_KERNEL + i] = k.kernel[i];
      shape[TPRT_CONV_OUTPUT + i] = out[i];
      shape[TPRT_CONV_STRIDES + i] = k.strides[i];
      shape[TPRT_CONV_DILATIONS + i] = k.dilations[i];
      shape[TPRT_CONV_PADS_BEGIN + i] = k.padBegin[i];
      shape[TPRT_CONV_PADS_END + i] = k.padEnd[i];
    }
  }

  /// Calls f(x index, w index, y index) for every product the conv sums.
  template <typename F> void forEachProduct(F f) {
    const ConvCase &k = GetParam();
    int64_t cg = k.c / k.group, mg = k.m / k.group, inputs = 1;
    for (int64_t s : k.spatial)
      inputs *= s;
    for (int64_t n = 0; n < k.n; ++n)
      for (int64_t m = 0; m < k.m; ++m)
        for (int64_t o = 0; o < outputs; ++o)
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t w = 0; w < windows; ++w) {
              int64_t xi = 0, oRest = o, wRest = w, stride = 1;
              bool inside = true;
              std::vector<int64_t> pos(k.rank);
              for (int64_t i = k.rank - 1; i >= 0; --i) {
                int64_t oi = oRest % out[i], ki = wRest % k.kernel[i];
                oRest /= out[i], wRest /= k.kernel[i];
                int64_t p = oi * k.strides[i] + ki * k.dilations[i] - k.padBegin[i];
                inside &= p >= 0 && p < k.spatial[i];
                xi += p * stride;
                stride *= k.spatial[i];
              }
              if (!inside)
                continue;
              int64_t channel = (m / mg) * cg + c;
              f((n * k.c + channel) * inputs + xi,
                (m * cg + c) * windows + w, (n * k.m + m) * outputs + o);
            }
  }
};

std::vector<float> randomData(size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(count);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// Runs the forward and both gradients with `kind` or'd in (a and b as
/// the values `toOperand` stores: f32, or bf16 bit patterns) on random
/// data (rounded by `round`, which the loops then read) and checks the
/// results against the loops.
template <typename T>
void expectMatchesLoops(Convolution &t, const ConvCase &k, int32_t flags,
                        float (*round)(float), T (*toOperand)(float)) {
  int64_t inputs = k.n * k.c,
          filters = k.m * (k.c / k.group) * t.windows;
  for (int64_t s : k.spatial)
    inputs *= s;
  int64_t results = k.n * k.m * t.outputs;
  auto data = [&](size_t count, unsigned seed, std::vector<T> &stored) {
    std::vector<float> v = randomData(count, seed);
    for (float &x : v) {
      x = round(x);
      stored.push_back(toOperand(x));
    }
    return v;
  };
  std::vector<T> xs, ws, gs;
  std::vector<float> x = data(inputs, 1, xs), w = data(filters, 2, ws),
                     g = data(results, 3, gs);
  std::vector<double> y(results), dx(inputs), dw(filters);
  t.forEachProduct([&](int64_t xi, int64_t wi, int64_t yi) {
    y[yi] += double(x[xi]) * w[wi];
    dx[xi] += double(g[yi]) * w[wi];
    dw[wi] += double(g[yi]) * x[xi];
  });
  // Garbage in the results: tprt_conv overwrites them.
  std::vector<float> gotY(results, 7), gotDx(inputs, 7), gotDw(filters, 7);
  auto addr = [](auto &v) { return int64_t(v.data()); };
  tprt_conv(TPRT_CONV_FORWARD | flags, addr(xs), addr(ws), addr(gotY),
            addr(t.shape));
  tprt_conv(TPRT_CONV_INPUT_GRAD | flags, addr(gs), addr(ws), addr(gotDx),
            addr(t.shape));
  tprt_conv(TPRT_CONV_FILTER_GRAD | flags, addr(xs), addr(gs), addr(gotDw),
            addr(t.shape));
  for (int64_t i = 0; i < results; ++i)
    ASSERT_NEAR(gotY[i], y[i], 1e-4) << "output " << i;
  for (int64_t i = 0; i < inputs; ++i)
    ASSERT_NEAR(gotDx[i], dx[i], 1e-4) << "input gradient " << i;
  for (int64_t i = 0; i < filters; ++i)
    ASSERT_NEAR(gotDw[i], dw[i], 1e-3) << "filter gradient " << i;
}

float same(float x) { return x; }
float roundToBf16(float x) { return tprt::bf16ToFloat(tprt::floatToBf16(x)); }

TEST_P(Convolution, ForwardAndGradientsMatchLoops) {
  expectMatchesLoops<float>(*this, GetParam(), 0, same, same);
}

// Mixed precision (TPRT_CONV_BF16): bf16 operands, f32 results, against
// the loops on the same bf16 values (each product exact in f32).
TEST_P(Convolution, Bf16OperandsMatchLoops) {
  expectMatchesLoops<uint16_t>(*this, GetParam(), TPRT_CONV_BF16, roundToBf16,
                               tprt::floatToBf16);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Convolution,
    testing::Values(
        // resnet's 3x3, padded, and its strided downsampling
        ConvCase{2, 1, 2, 16, 32, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        ConvCase{2, 1, 2, 16, 32, {9, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
        ConvCase{2, 1, 3, 3, 8, {11, 11}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}},
        ConvCase{2, 1, 2, 8, 16, {8, 8}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}},
        // dilated, uneven pads; depthwise; grouped
        ConvCase{2, 1, 1, 4, 6, {10, 9}, {3, 2}, {1, 2}, {2, 3}, {2, 0}, {1, 1}},
        ConvCase{2, 8, 2, 8, 8, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
        ConvCase{2, 2, 2, 6, 4, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
        // 1-d (audio) and 3-d (video)
        ConvCase{1, 1, 2, 4, 8, {20}, {5}, {2}, {1}, {2}, {2}},
        ConvCase{3, 1, 1, 3, 4, {4, 5, 6}, {3, 3, 3}, {1, 2, 1}, {1, 1, 1},
                 {1, 1, 1}, {1, 1, 1}}));

} // namespace
