//===- Compare.cpp - tp-run's comparisons with references -----------------===//
#include "Compare.h"

#include "tprt/DType.h"
#include "tprt/OnnxTensor.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tprt;

double tprt::toDouble(const char *p, int32_t dtype) {
  switch (dtype) {
  case TPRT_F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case TPRT_F64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  case TPRT_F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
  }
  case TPRT_BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return bf16ToFloat(h);
  }
  case TPRT_I64: {
    int64_t i;
    std::memcpy(&i, p, 8);
    return double(i);
  }
  case TPRT_I16: {
    int16_t i;
    std::memcpy(&i, p, 2);
    return double(i);
  }
  case TPRT_I8:
    return double(*reinterpret_cast<const int8_t *>(p));
  case TPRT_BOOL:
    return double(*reinterpret_cast<const uint8_t *>(p) != 0);
  case TPRT_I32: {
    int32_t i;
    std::memcpy(&i, p, 4);
    return double(i);
  }
  }
  llvm_unreachable("an array's dtype is one of tprt_dtype's");
}

/// numpy.testing.assert_allclose's rule per element (NaNs equal, infinities
/// equal when they are the same); prints one line, true when it holds.
bool tprt::compareElementwise(const std::string &what, const NpyArray &got,
                              const NpyArray &ref, double tolerance,
                              double absTolerance) {
  int64_t gotCount = 1, refCount = 1;
  for (int64_t d : got.shape)
    gotCount *= d;
  for (int64_t d : ref.shape)
    refCount *= d;
  // ONNX test data sometimes stores a scalar as [1] or the reverse.
  if (got.shape != ref.shape && !(gotCount == 1 && refCount == 1)) {
    llvm::outs() << what << ": shape " << got.shapeString()
                 << ", the reference has " << ref.shapeString()
                 << " MISMATCH\n";
    return false;
  }
  double maxDiff = 0;
  int64_t bad = 0, firstBad = -1;
  for (int64_t i = 0; i < gotCount; ++i) {
    double a = toDouble(got.data.data() + i * dtypeSize(got.dtype), got.dtype);
    double b = toDouble(ref.data.data() + i * dtypeSize(ref.dtype), ref.dtype);
    if ((std::isnan(a) && std::isnan(b)) || a == b)
      continue;
    double diff = std::fabs(a - b);
    maxDiff = std::max(maxDiff, std::isnan(diff) ? INFINITY : diff);
    if (!(diff <= absTolerance + tolerance * std::fabs(b))) {
      if (firstBad < 0)
        firstBad = i;
      ++bad;
    }
  }
  llvm::outs() << llvm::format("%s: max |out - ref| = %.3g, ", what.c_str(),
                               maxDiff);
  if (bad)
    llvm::outs() << bad << " of " << gotCount
                 << " elements off (first at flat index " << firstBad
                 << ") MISMATCH\n";
  else
    llvm::outs() << "OK\n";
  return bad == 0;
}

std::optional<bool> tprt::compareWithFile(const std::string &name,
                                          const NpyArray &got,
                                          const std::string &file,
                                          double tolerance, double absTolerance,
                                          int numRanks, std::string &error) {
  NpyArray ref;
  if (Status s = readNpy(file, ref); !s) {
    error = s.message();
    return std::nullopt;
  }
  if (ref.shape != got.shape) {
    error = "--compare " + name + ": the reference has shape " +
            ref.shapeString() + ", the output " + got.shapeString();
    return std::nullopt;
  }
  // NaN and infinity pass only where both sides have the same one: a NaN
  // output must never hide in a max() that skips it.
  double maxDiff = 0, maxRef = 0;
  int64_t nonFinite = 0, firstNonFinite = -1;
  double badOut = 0, badRef = 0;
  size_t n = got.data.size() / dtypeSize(got.dtype);
  for (size_t i = 0; i < n; ++i) {
    double a = toDouble(got.data.data() + i * dtypeSize(got.dtype), got.dtype);
    double b = toDouble(ref.data.data() + i * dtypeSize(ref.dtype), ref.dtype);
    if (!std::isfinite(a) || !std::isfinite(b)) {
      if ((std::isnan(a) && std::isnan(b)) || a == b)
        continue;
      if (firstNonFinite < 0) {
        firstNonFinite = int64_t(i);
        badOut = a;
        badRef = b;
      }
      ++nonFinite;
      continue;
    }
    maxDiff = std::max(maxDiff, std::fabs(a - b));
    maxRef = std::max(maxRef, std::fabs(b));
  }
  double rel = maxRef > 0 ? maxDiff / maxRef : maxDiff;
  bool ok = nonFinite == 0 && maxDiff <= absTolerance + tolerance * maxRef;
  llvm::outs() << llvm::format(
      "%s: max |out - ref| = %.3g, max |ref| = %.3g, relative %.3g %s "
      "(tolerance %.3g, %d rank%s)\n",
      name.c_str(), maxDiff, maxRef, rel, ok ? "OK" : "MISMATCH", tolerance,
      numRanks, numRanks == 1 ? "" : "s");
  if (nonFinite)
    llvm::outs() << llvm::format(
        "%s: %lld of %zu elements are NaN or infinite on one side only "
        "(first at flat index %lld: out %g, ref %g)\n",
        name.c_str(), (long long)nonFinite, n, (long long)firstNonFinite,
        badOut, badRef);
  return ok;
}

std::string tprt::joinNames(const std::vector<std::string> &v) {
  std::string s;
  for (const auto &x : v)
    s += (s.empty() ? "" : ", ") + x;
  return s;
}

Status tprt::readTestTensors(const std::string &dir, const std::string &prefix,
                       const std::vector<std::string> &names,
                       std::vector<TestTensor> &out,
                       const std::vector<std::string> &skip) {
  for (size_t k = 0;; ++k) {
    std::string file = prefix + "_" + std::to_string(k) + ".pb";
    std::string path = dir + "/" + file;
    if (!llvm::sys::fs::exists(path))
      return Status::ok();
    std::string name;
    TestTensor t{file, k, {}};
    if (Status s = readTensorProto(path, name, t.data); !s)
      return s;
    if (std::find(skip.begin(), skip.end(), name) != skip.end())
      continue;
    auto it = std::find(names.begin(), names.end(), name);
    if (it != names.end())
      t.index = it - names.begin();
    else if (k >= names.size())
      return Status::error(path + ": more test " + prefix + "s than graph " +
                           prefix + "s (" + joinNames(names) + ")");
    out.push_back(std::move(t));
  }
}

std::string tprt::gradFileStem(const std::string &weight) {
  std::string out;
  for (char c : weight)
    out += c == '%' ? "%25" : c == '/' ? "%2F" : std::string(1, c);
  return out;
}

std::string tprt::weightOfGradFile(const std::string &stem) {
  std::string out;
  for (size_t i = 0; i < stem.size(); ++i) {
    if (stem.compare(i, 3, "%2F") == 0 || stem.compare(i, 3, "%2f") == 0) {
      out += '/';
      i += 2;
    } else if (stem.compare(i, 3, "%25") == 0) {
      out += '%';
      i += 2;
    } else {
      out += stem[i];
    }
  }
  return out;
}
