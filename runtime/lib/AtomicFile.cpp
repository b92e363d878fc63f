//===- AtomicFile.cpp - files written whole or not at all -----------------===//
#include "tprt/AtomicFile.h"
#include "tprt/Paths.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace tprt;

AtomicFile::~AtomicFile() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!temp_.empty() && !committed_)
    ::unlink(temp_.c_str());
}

Status AtomicFile::open(const std::string &target) {
  path_ = target;
  struct stat st;
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A device or a pipe (/dev/stdout) cannot be replaced: written as it is.
    fd_ = ::open(target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd_ < 0)
      return Status::error(target + ": cannot write (" +
                           std::strerror(errno) + ")");
    direct_ = true;
    return Status::ok();
  }
  // A symbolic link: the file it names (which may not exist yet) is
  // written, not the link.
  for (int depth = 0; depth < 40 && ::lstat(path_.c_str(), &st) == 0 &&
                      S_ISLNK(st.st_mode);
       ++depth) {
    char link[PATH_MAX];
    ssize_t n = ::readlink(path_.c_str(), link, sizeof(link) - 1);
    if (n <= 0)
      break;
    std::string to(link, size_t(n));
    path_ = to.front() == '/' ? to : folderOf(path_) + "/" + to;
  }
  const std::string &path = path_;
  std::string name = fileNameOf(path);
  if (name.empty())
    return Status::error(path + ": not a file name");
  std::string folder = folderOf(path);
  std::string pattern = folder + "/." + name + ".tmp-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  fd_ = ::mkostemp(buffer.data(), O_CLOEXEC);
  if (fd_ < 0)
    return Status::error(path + ": cannot write (" + std::strerror(errno) +
                         " creating a temporary file in " + folder + ")");
  temp_ = buffer.data();
  // mkstemp makes it 0600; a saved model is as readable as any new file.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
  return Status::ok();
}

void AtomicFile::write(const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size && !error_) {
    ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      fail(n < 0 ? errno : EIO);
      return;
    }
    p += n;
    size -= size_t(n);
  }
}

void AtomicFile::fail(int error) {
  if (!error_)
    error_ = error ? error : EIO;
}

Status AtomicFile::commit() {
  if (fd_ < 0)
    return Status::error(path_ + ": not opened");
  auto failed = [&](const char *what, int error) {
    return Status::error(path_ + ": cannot write (" + std::strerror(error) +
                         " " + what + "); the previous file, if any, is "
                         "unchanged");
  };
  if (error_)
    return failed("while writing", error_);
  if (direct_) {
    int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0 ? Status::ok() : failed("at close", errno);
  }
  if (::fsync(fd_) != 0)
    return failed("at fsync", errno);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    return failed("at close", errno);
  if (::rename(temp_.c_str(), path_.c_str()) != 0)
    return failed("renaming the temporary over it", errno);
  committed_ = true;
  // The rename itself is durable once the folder is.
  int dir = ::open(folderOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::ok();
}

Status tprt::writeFileAtomically(const std::string &path,
                                 const std::string &bytes) {
  AtomicFile file;
  if (Status s = file.open(path); !s)
    return s;
  file.write(bytes.data(), bytes.size());
  return file.commit();
}

void tprt::ignoreFileSizeSignal() { std::signal(SIGXFSZ, SIG_IGN); }
