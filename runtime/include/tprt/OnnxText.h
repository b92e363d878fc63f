//===- OnnxText.h - tell ONNX text syntax from a binary model --*- C++ -*-===//
//
// Header-only so that the compiler's importer and the runtime's weight
// loader recognise the same files.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_ONNXTEXT_H
#define TPRT_ONNXTEXT_H

#include <cctype>
#include <string>

namespace tprt {

/// ONNX text syntax starts with `<` after whitespace and `#` comment lines.
inline bool looksLikeOnnxText(const std::string &bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    if (std::isspace(static_cast<unsigned char>(bytes[i]))) {
      ++i;
    } else if (bytes[i] == '#') {
      i = bytes.find('\n', i);
      if (i == std::string::npos)
        return false;
    } else {
      return bytes[i] == '<';
    }
  }
  return false;
}

} // namespace tprt

#endif // TPRT_ONNXTEXT_H
