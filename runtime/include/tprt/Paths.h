//===- Paths.h - the folder and the name of a file's path ---------*- C++ -*-===//
#ifndef TPRT_PATHS_H
#define TPRT_PATHS_H

#include <string>

namespace tprt {

/// The folder of a file's path: "." for a bare name, "/" for one at the root.
inline std::string folderOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// The last part of a path (the file's name).
inline std::string fileNameOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace tprt

#endif // TPRT_PATHS_H
