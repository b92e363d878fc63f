//===- FuzzInput.h - a fuzzer's bytes as a file a parser can open -*- C++ -*-===//
//
// tp's parsers read user files by path (the ONNX library and the ifstreams
// behind them); a memfd gives each input a path without touching the disk.
//
//===----------------------------------------------------------------------===//
#ifndef TP_TOOLS_FUZZ_FUZZINPUT_H
#define TP_TOOLS_FUZZ_FUZZINPUT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace tpfuzz {

/// The bytes as /proc/self/fd/N, closed on destruction.
class InputFile {
public:
  InputFile(const uint8_t *data, size_t size) {
    fd = memfd_create("tp-fuzz", 0);
    if (fd >= 0 && size && write(fd, data, size) != ssize_t(size)) {
      close(fd);
      fd = -1;
    }
  }
  ~InputFile() {
    if (fd >= 0)
      close(fd);
  }
  bool ok() const { return fd >= 0; }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd); }

private:
  int fd = -1;
};

} // namespace tpfuzz

#endif // TP_TOOLS_FUZZ_FUZZINPUT_H
