//===- CudaLoader.cpp - load libtprt_cuda.so when a CUDA program needs it -===//
//
// CPU programs must not need the CUDA libraries (libcublasLt alone maps
// hundreds of MiB, which a memory limit counts): libtprt does not link
// them, and loads libtprt_cuda.so, which does, from its own folder on the
// first CUDA call.
//
//===----------------------------------------------------------------------===//
#include "tprt/Cuda.h"

#include <dlfcn.h>
#include <mutex>

using namespace tprt;

const cuda::CudaApi *cuda::cudaApi(std::string *error) {
  static std::once_flag once;
  static const CudaApi *api = nullptr;
  static std::string why;
  std::call_once(once, [] {
#ifndef TPRT_HAVE_CUDA
    why = "this tp-run was built without the CUDA toolkit";
#else
    Dl_info self;
    std::string dir;
    if (dladdr(reinterpret_cast<void *>(&cudaApi), &self) && self.dli_fname) {
      dir = self.dli_fname;
      dir = dir.substr(0, dir.rfind('/') + 1);
    }
    std::string path = dir + "libtprt_cuda.so";
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
      why = std::string("cannot load the CUDA runtime: ") + dlerror();
      return;
    }
    auto entry = reinterpret_cast<const CudaApi *(*)()>(
        dlsym(handle, "tprt_cuda_api"));
    if (!entry) {
      why = path + " has no tprt_cuda_api";
      return;
    }
    api = entry();
#endif
  });
  if (!api && error)
    *error = why;
  return api;
}
