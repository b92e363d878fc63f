//===- AtomicFile.h - files written whole or not at all ---------*- C++ -*-===//
//
// A file a user cares about (a trained model, a program's manifest, .npy
// outputs, dumped gradients) is written to a temporary in the same folder,
// flushed, fsynced and renamed over its name, and the folder is fsynced:
// a crash, a kill, a full disk (ENOSPC) or a file-size limit (EFBIG) at any
// point leaves the previous file as it was. tp-run ignores SIGXFSZ (and
// Python does), so that a file-size limit is an error message, not a signal.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_ATOMICFILE_H
#define TPRT_ATOMICFILE_H

#include "tprt/Status.h"

#include <cstddef>
#include <string>

namespace tprt {

class AtomicFile {
public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  /// Removes the temporary unless commit() succeeded.
  ~AtomicFile();

  /// Creates the temporary `.<name>.tmp-XXXXXX` beside `path` (beside the
  /// file a symbolic link names: the file is replaced, the link stays). A
  /// device or a pipe (/dev/stdout) is written in place.
  Status open(const std::string &path);
  /// Appends bytes; the first failure is kept and returned by commit().
  void write(const void *data, size_t size);
  /// The temporary's descriptor, for writers that take one (protobuf);
  /// call fail() when they report an error.
  int fd() const { return fd_; }
  void fail(int error);
  /// fsync, close, rename over the path, fsync the folder.
  Status commit();
  const std::string &path() const { return path_; }

private:
  std::string path_, temp_;
  int fd_ = -1;
  int error_ = 0;
  bool committed_ = false, direct_ = false;
};

/// `bytes` into `path`, through an AtomicFile.
Status writeFileAtomically(const std::string &path, const std::string &bytes);

/// Ignores SIGXFSZ: a write past `ulimit -f` then fails with EFBIG, which
/// the writers report, instead of killing the process.
void ignoreFileSizeSignal();

} // namespace tprt

#endif // TPRT_ATOMICFILE_H
