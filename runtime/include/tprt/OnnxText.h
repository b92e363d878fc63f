//===- OnnxText.h - tell ONNX text syntax from a binary model --*- C++ -*-===//
//
// Header-only so that the compiler's importer and the runtime's weight
// loader recognise and parse the same files. ONNX's text parser throws
// (std::out_of_range, std::invalid_argument) on some malformed input, so a
// file that includes this is built with -fexceptions.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_ONNXTEXT_H
#define TPRT_ONNXTEXT_H

#include "onnx/defs/parser.h"

#include <cctype>
#include <exception>
#include <string>
#include <string_view>

namespace tprt {

/// ONNX text syntax starts with `<` after whitespace and `#` comment lines.
inline bool looksLikeOnnxText(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    if (std::isspace(static_cast<unsigned char>(bytes[i]))) {
      ++i;
    } else if (bytes[i] == '#') {
      i = bytes.find('\n', i);
      if (i == std::string_view::npos)
        return false;
    } else {
      return bytes[i] == '<';
    }
  }
  return false;
}

/// Parses ONNX text into `model`; false with `error` set when it does not.
inline bool parseOnnxText(const std::string &bytes, onnx::ModelProto &model,
                          std::string &error) {
  try {
    onnx::OnnxParser parser(bytes.c_str());
    auto status = parser.Parse(model);
    if (!status.IsOK()) {
      error = status.ErrorMessage();
      return false;
    }
    return true;
  } catch (const std::exception &e) {
    // The parser's own number conversions (std::stoll and friends).
    error = std::string("a number in it is malformed or out of range (") +
            e.what() + ")";
    return false;
  }
}

} // namespace tprt

#endif // TPRT_ONNXTEXT_H
