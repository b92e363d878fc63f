//===- Npy.cpp - numpy .npy files (format 1.0 / 2.0) ----------------------===//
#include "tprt/Npy.h"
#include "tprt/DType.h"

#include <fstream>

using namespace tprt;

static const char *descr(int32_t dtype) {
  switch (dtype) {
  case TPRT_F32:
    return "<f4";
  case TPRT_F64:
    return "<f8";
  case TPRT_F16:
    return "<f2";
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

Status tprt::readNpy(const std::string &path, NpyArray &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path + ": cannot open");
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
  std::string header(headerLen, '\0');
  in.read(header.data(), headerLen);
  auto field = [&](const std::string &key) -> std::string {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos)
      return "";
    size_t colon = header.find(':', k);
    return header.substr(colon + 1);
  };
  std::string d = field("descr");
  size_t q1 = d.find('\''), q2 = d.find('\'', q1 + 1);
  std::string type = d.substr(q1 + 1, q2 - q1 - 1);
  out.dtype = -1;
  for (int32_t t : {TPRT_F32, TPRT_F64, TPRT_F16, TPRT_I64, TPRT_I32,
                    TPRT_I16, TPRT_I8, TPRT_BOOL})
    if (type == descr(t))
      out.dtype = t;
  if (out.dtype < 0)
    return Status::error(path + ": unsupported .npy dtype '" + type +
                         "' (f4, f8, f2, i8, i4 are)");
  if (field("fortran_order").find("True") < field("fortran_order").find(','))
    return Status::error(path + ": Fortran-order .npy files are not supported");
  std::string shape = field("shape");
  shape = shape.substr(shape.find('(') + 1, shape.find(')') - shape.find('(') - 1);
  out.shape.clear();
  size_t pos = 0;
  while (pos < shape.size()) {
    size_t comma = shape.find(',', pos);
    std::string part = shape.substr(pos, comma == std::string::npos
                                             ? std::string::npos
                                             : comma - pos);
    if (part.find_first_not_of(" ") != std::string::npos)
      out.shape.push_back(std::stoll(part));
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  int64_t n = 1;
  for (int64_t s : out.shape)
    n *= s;
  out.data.resize(n * dtypeSize(out.dtype));
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
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return Status::error(path + ": cannot write");
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = uint16_t(header.size());
  out.write(reinterpret_cast<const char *>(&len), 2);
  out.write(header.data(), header.size());
  out.write(a.data.data(), a.data.size());
  return out ? Status::ok() : Status::error(path + ": write failed");
}
