//===- Program.cpp - load and call a compiled program ---------------------===//
#include "tprt/Program.h"

#include <chrono>
#include <dlfcn.h>
#ifdef TPRT_HAVE_CUDA
#include "tprt/Cuda.h"
#endif

using namespace tprt;

Status Program::load(const Manifest &m, std::unique_ptr<Program> &out) {
  if (m.target == "cuda") {
#ifdef TPRT_HAVE_CUDA
    // Its kernels load when the library does: a device must be there.
    int devices;
    if (Status s = cuda::deviceCount(devices); !s)
      return Status::error(m.dir + ": the program was built for target "
                                   "'cuda' and cannot run here: " +
                           s.message());
#else
    return Status::error(m.dir + ": the program was built for target 'cuda'; "
                                 "this tp-run was built without the CUDA "
                                 "toolkit");
#endif
  } else if (m.target != "cpu") {
    return Status::error(m.dir + ": the program was built for target '" +
                         m.target + "'; this tp-run runs 'cpu' and 'cuda' "
                                    "programs");
  }
  std::unique_ptr<Program> p(new Program(m));
  std::string path = m.dir + "/" + m.library;
  p->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p->handle)
    return Status::error(path + ": cannot load: " + dlerror());
  p->entry = reinterpret_cast<void (*)(void **)>(dlsym(p->handle, m.entry.c_str()));
  if (!p->entry)
    return Status::error(path + ": no entry point '" + m.entry + "'");
  out = std::move(p);
  return Status::ok();
}

Program::~Program() {
  if (handle)
    dlclose(handle);
}

double Program::run(const std::vector<void *> &args,
                    const std::vector<void *> &results) const {
#ifdef TPRT_HAVE_CUDA
  if (onGpu())
    return runOnGpu(args, results);
#endif
  auto start = std::chrono::steady_clock::now();
  call(args, results);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start)
      .count();
}

/// The entry point takes a pointer per argument and result to an MLIR
/// memref descriptor: {allocated, aligned, offset, sizes[r], strides[r]}.
void Program::call(const std::vector<void *> &args,
                   const std::vector<void *> &results) const {
  std::vector<std::vector<int64_t>> descriptors;
  auto describe = [&](const TensorSpec &t, void *data) {
    size_t r = t.localShape.size();
    std::vector<int64_t> d(3 + 2 * r);
    d[0] = d[1] = reinterpret_cast<int64_t>(data);
    d[2] = 0;
    int64_t stride = 1;
    for (int i = int(r) - 1; i >= 0; --i) {
      d[3 + i] = t.localShape[i];
      d[3 + r + i] = stride;
      stride *= t.localShape[i];
    }
    descriptors.push_back(std::move(d));
  };
  for (size_t i = 0; i < args.size(); ++i)
    describe(manifest.arguments[i], args[i]);
  for (size_t i = 0; i < results.size(); ++i)
    describe(manifest.results[i], results[i]);
  std::vector<void *> pointers;
  for (auto &d : descriptors)
    pointers.push_back(d.data());
  entry(pointers.data());
}
