//===- Status.h - success or a message --------------------------*- C++ -*-===//
#ifndef TPRT_STATUS_H
#define TPRT_STATUS_H

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace tprt {

/// The runtime reports failures as values: every message names the rank and
/// the collective, tensor or file concerned.
class Status {
public:
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    s.failed_ = true;
    return s;
  }
  bool failed() const { return failed_; }
  explicit operator bool() const { return !failed_; }
  const std::string &message() const { return message_; }

private:
  bool failed_ = false;
  std::string message_;
};

/// "[8, 64]": how shapes read in messages.
inline std::string formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// "0.2 s", "60 s": how timeouts read in messages.
inline std::string formatSeconds(std::chrono::milliseconds t) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g s", t.count() / 1000.0);
  return buf;
}

} // namespace tprt

#endif // TPRT_STATUS_H
