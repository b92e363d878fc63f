//===- fuzz-external-data.cpp - libFuzzer target: external-data locations -===//
//
// The input is an initializer's external-data `location`. Whatever it is,
// a location that is accepted must name a regular file inside the model's
// folder once every symbolic link is resolved; the folder is built once
// with the ways out a model could try: a symbolic link to the folder above,
// one to a file there, an absolute link, a hard link, a subfolder.
//
//===----------------------------------------------------------------------===//
#include "tprt/ExternalData.h"

#include <climits>
#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {
struct Folder {
  std::string root, model, realModel;
  Folder() {
    char tmpl[] = "/tmp/tp-fuzz-external-XXXXXX";
    root = mkdtemp(tmpl);
    model = root + "/model";
    mkdir(model.c_str(), 0700);
    mkdir((model + "/sub").c_str(), 0700);
    std::ofstream(root + "/outside.bin") << "outside";
    std::ofstream(model + "/weights.bin") << "inside";
    std::ofstream(model + "/sub/w.bin") << "inside";
    (void)symlink("..", (model + "/up").c_str());
    (void)symlink("../outside.bin", (model + "/out.bin").c_str());
    (void)symlink("/etc/hostname", (model + "/abs.bin").c_str());
    (void)symlink("weights.bin", (model + "/in.bin").c_str());
    (void)link((root + "/outside.bin").c_str(), (model + "/hard.bin").c_str());
    char buffer[PATH_MAX];
    realModel = realpath(model.c_str(), buffer);
  }
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Folder folder;
  std::string location(reinterpret_cast<const char *>(data), size);
  std::string path;
  if (!tprt::confineExternalLocation(folder.model, "w", location, path))
    return 0;
  struct stat st;
  if (path.compare(0, folder.realModel.size() + 1, folder.realModel + "/") != 0 ||
      lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_nlink != 1)
    std::abort(); // accepted a location that leads out: a resolution bug
  return 0;
}
