//===- ProgramMemory.h - which memory a program's buffers are --*- C++ -*-===//
//
// Generated code allocates through finalize-memref-to-llvm's generic
// functions (tprt.h). CPU programs get host memory, CUDA programs GPU
// memory: the thread that calls a CUDA program holds a GpuProgramMemory for
// the duration of the call.
//
//===----------------------------------------------------------------------===//
#ifndef TPRT_PROGRAMMEMORY_H
#define TPRT_PROGRAMMEMORY_H

namespace tprt {

class GpuProgramMemory {
public:
  GpuProgramMemory();
  ~GpuProgramMemory();
  GpuProgramMemory(const GpuProgramMemory &) = delete;
  GpuProgramMemory &operator=(const GpuProgramMemory &) = delete;

private:
  bool previous;
};

} // namespace tprt

#endif // TPRT_PROGRAMMEMORY_H
