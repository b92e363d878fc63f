//===- Program.cpp - load and call a compiled program ---------------------===//
#include "tprt/Program.h"
#include "tprt/DType.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fstream>
#include <utility>
#include <vector>
#ifdef TPRT_HAVE_CUDA
#include "tprt/Cuda.h"
#endif

using namespace tprt;

/// dlopen maps a shared object cut short (an interrupted copy or compile)
/// and faults (SIGBUS) on the missing pages instead of failing: check first
/// that every segment and section table the ELF headers name is in the file.
static Status checkElfFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return Status::error(path + ": cannot open");
  uint64_t size = uint64_t(in.tellg());
  in.seekg(0);
  Elf64_Ehdr eh;
  auto cut = [&](const std::string &what) {
    return Status::error(path + ": not a complete shared object (" + what +
                         "; was it truncated? recompile the program)");
  };
  if (size < sizeof(eh) || !in.read(reinterpret_cast<char *>(&eh), sizeof(eh)))
    return cut("shorter than an ELF header");
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64)
    return cut("no 64-bit ELF header");
  auto within = [&](uint64_t offset, uint64_t bytes) {
    return offset <= size && bytes <= size - offset;
  };
  if (!within(eh.e_shoff, uint64_t(eh.e_shnum) * eh.e_shentsize) ||
      !within(eh.e_phoff, uint64_t(eh.e_phnum) * eh.e_phentsize) ||
      eh.e_phentsize != sizeof(Elf64_Phdr))
    return cut("its header tables lie past the end of the file");
  std::vector<Elf64_Phdr> segments(eh.e_phnum);
  in.seekg(std::streamoff(eh.e_phoff));
  in.read(reinterpret_cast<char *>(segments.data()),
          std::streamsize(segments.size() * sizeof(Elf64_Phdr)));
  if (!in)
    return cut("its program headers cannot be read");
  for (const Elf64_Phdr &ph : segments)
    if (ph.p_type == PT_LOAD && !within(ph.p_offset, ph.p_filesz))
      return cut("a segment lies past the end of the file");
  return Status::ok();
}

Status Program::load(const Manifest &m, std::unique_ptr<Program> &out) {
  if (m.target == "cuda") {
#ifdef TPRT_HAVE_CUDA
    // Its kernels load when the library does: a device must be there.
    int devices;
    std::string why;
    const cuda::CudaApi *api = cuda::cudaApi(&why);
    if (!api)
      return Status::error(m.dir + ": the program was built for target "
                                   "'cuda' and cannot run here: " +
                           why);
    if (Status s = api->deviceCount(devices); !s)
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
  if (Status s = checkElfFile(path); !s)
    return s;
  // A parallel loop nest's OpenMP threads wait for the next one spinning
  // for 1 ms, not LLVM libomp's 200: the GEMMs between nests run on
  // OpenBLAS's threads, on the same cores. (Sleeping at once costs a
  // wake-up per nest: resnet18's training step took 1.35x as long.)
  setenv("KMP_BLOCKTIME", "1", /*overwrite=*/0);
  p->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!p->handle)
    return Status::error(path + ": cannot load: " + dlerror());
  // The pair must come from one compile: an edited manifest, or one left by
  // another compile into the same folder, would describe other buffers.
  const char *hash =
      static_cast<const char *>(dlsym(p->handle, "tp_manifest_sha256"));
  if (!hash || m.sha256.empty() || m.sha256 != hash)
    return Status::error(
        path + " was not compiled with " + m.dir +
        "/manifest.json (" +
        (hash ? "the manifest has changed since, or the two come from "
                "different compiles"
              : "the library carries no manifest checksum") +
        "); recompile the program");
  p->entry = reinterpret_cast<void (*)(void **)>(dlsym(p->handle, m.entry.c_str()));
  if (!p->entry)
    return Status::error(path + ": no entry point '" + m.entry + "'");
  out = std::move(p);
  return Status::ok();
}

std::vector<std::vector<char>>
tprt::makeResultBuffers(const Manifest &m,
                        std::vector<std::vector<char>> &args, int rank) {
  std::vector<std::vector<char>> results;
  for (size_t r = 0; r < m.results.size(); ++r) {
    const TensorSpec &t = m.results[r];
    if (rank >= 0 && !m.needsBuffer(t, /*isResult=*/true, rank))
      results.emplace_back(); // another pipeline stage writes it
    else if (int a = m.inPlaceArgument(r); a >= 0)
      results.push_back(std::exchange(args[a], {}));
    else
      results.emplace_back(t.localElements() * dtypeSize(t.dtype));
  }
  return results;
}

Program::~Program() {
  if (handle)
    dlclose(handle);
}

double Program::run(const std::vector<void *> &args,
                    const std::vector<void *> &results) const {
#ifdef TPRT_HAVE_CUDA
  if (onGpu())
    return cuda::cudaApi()->runProgram(*this, args, results);
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
