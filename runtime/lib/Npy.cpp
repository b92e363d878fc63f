//===- Npy.cpp - numpy .npy files (format 1.0 / 2.0) ----------------------===//
#include "tprt/Npy.h"
#include "tprt/AtomicFile.h"
#include "tprt/DType.h"

#include <fstream>
#include <optional>

using namespace tprt;

static const char *descr(int32_t dtype) {
  switch (dtype) {
  case TPRT_F32:
    return "<f4";
  case TPRT_F64:
    return "<f8";
  case TPRT_F16:
    return "<f2";
  // numpy has no bfloat16: a bf16 array is its bit patterns as uint16
  // (torch: t.view(torch.int16).numpy().view(numpy.uint16)), and tp has no
  // uint16 of its own for the descr to mean.
  case TPRT_BF16:
    return "<u2";
  case TPRT_I64:
    return "<i8";
  case TPRT_I32:
    return "<i4";
  case TPRT_I16:
    return "<i2";
  case TPRT_I8:
    return "|i1";
  case TPRT_BOOL:
    return "|b1";
  default:
    return nullptr;
  }
}

std::string NpyArray::shapeString() const { return formatShape(shape); }

/// A non-negative decimal integer below 2^62, else nullopt (never throws:
/// headers are user input).
static std::optional<int64_t> parseDim(const std::string &text) {
  size_t b = text.find_first_not_of(' '), e = text.find_last_not_of(' ');
  if (b == std::string::npos)
    return std::nullopt;
  int64_t v = 0;
  for (size_t i = b; i <= e; ++i) {
    if (text[i] < '0' || text[i] > '9' || v > (int64_t(1) << 58))
      return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

Status tprt::parseNpyHeader(const std::string &what, const std::string &header,
                            NpyArray &out, int64_t &elements) {
  auto bad = [&](const std::string &why) {
    return Status::error(what + ": malformed .npy header (" + why + ")");
  };
  auto field = [&](const std::string &key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos)
      return "";
    size_t colon = header.find(':', k);
    return colon == std::string::npos ? "" : header.substr(colon + 1);
  };
  std::string d = field("descr");
  size_t q1 = d.find('\'');
  size_t q2 = q1 == std::string::npos ? q1 : d.find('\'', q1 + 1);
  if (q2 == std::string::npos)
    return bad("no 'descr'");
  std::string type = d.substr(q1 + 1, q2 - q1 - 1);
  out.dtype = -1;
  for (int32_t t : {TPRT_F32, TPRT_F64, TPRT_F16, TPRT_BF16, TPRT_I64,
                    TPRT_I32, TPRT_I16, TPRT_I8, TPRT_BOOL})
    if (type == descr(t))
      out.dtype = t;
  if (out.dtype < 0)
    return Status::error(what + ": unsupported .npy dtype '" + type +
                         "' (f4, f8, f2, u2 as bf16 bits, i8, i4, i2, i1, b1 are)");
  std::string order = field("fortran_order");
  if (order.find("True") < order.find(','))
    return Status::error(what + ": Fortran-order .npy files are not supported");
  std::string shape = field("shape");
  size_t open = shape.find('('), close = shape.find(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return bad("no 'shape' tuple");
  shape = shape.substr(open + 1, close - open - 1);
  out.shape.clear();
  elements = 1;
  size_t pos = 0;
  while (pos < shape.size()) {
    size_t comma = shape.find(',', pos);
    std::string part = shape.substr(pos, comma == std::string::npos
                                             ? std::string::npos
                                             : comma - pos);
    if (part.find_first_not_of(" ") != std::string::npos) {
      std::optional<int64_t> dim = parseDim(part);
      if (!dim)
        return bad("dim '" + part + "' is not a size");
      // Sizes multiply within 2^62 or the file cannot hold them anyway.
      if (*dim && elements > (int64_t(1) << 62) / *dim)
        return bad("shape (" + shape + ") has too many elements");
      elements *= *dim;
      out.shape.push_back(*dim);
    }
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return Status::ok();
}

Status tprt::readNpy(const std::string &path, NpyArray &out) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return Status::error(path + ": cannot open");
  uint64_t fileSize = uint64_t(in.tellg());
  in.seekg(0);
  char magic[8];
  in.read(magic, 8);
  if (!in || std::string(magic, 6) != "\x93NUMPY")
    return Status::error(path + ": not a .npy file");
  uint32_t headerLen = 0;
  if (magic[6] == 1) {
    uint16_t len;
    in.read(reinterpret_cast<char *>(&len), 2);
    headerLen = len;
  } else {
    in.read(reinterpret_cast<char *>(&headerLen), 4);
  }
  uint64_t dataStart = (magic[6] == 1 ? 10 : 12) + uint64_t(headerLen);
  if (!in || dataStart > fileSize)
    return Status::error(path + ": truncated .npy file (the header is cut)");
  std::string header(headerLen, '\0');
  in.read(header.data(), headerLen);
  int64_t n;
  if (Status s = parseNpyHeader(path, header, out, n); !s)
    return s;
  // Checked before allocating: a header may claim any size.
  uint64_t bytes = uint64_t(n) * dtypeSize(out.dtype);
  if (bytes > fileSize - dataStart)
    return Status::error(path + ": truncated .npy file (shape " +
                         out.shapeString() + " needs " +
                         std::to_string(bytes) + " bytes of data, the file "
                         "has " + std::to_string(fileSize - dataStart) + ")");
  out.data.resize(bytes);
  in.read(out.data.data(), out.data.size());
  if (!in)
    return Status::error(path + ": truncated .npy file");
  return Status::ok();
}

Status tprt::writeNpy(const std::string &path, const NpyArray &a) {
  const char *d = descr(a.dtype);
  if (!d)
    return Status::error(path + ": cannot write dtype " +
                         dtypeName(a.dtype) + " to .npy");
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i)
    shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : (i + 1 < a.shape.size() ? ", " : ""));
  shape += ")";
  std::string header = "{'descr': '" + std::string(d) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  AtomicFile out;
  if (Status s = out.open(path); !s)
    return s;
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = uint16_t(header.size());
  out.write(&len, 2);
  out.write(header.data(), header.size());
  out.write(a.data.data(), a.data.size());
  return out.commit();
}
