//===- Convolution.cpp - the convolutions generated code calls, on oneDNN -===//
//
// tprt_conv runs a convolution, or one of its two gradients, with oneDNN
// (Debian's libdnnl, the library PyTorch's CPU convolutions use): its
// direct kernels read the activations and filters in blocked layouts
// (channels in groups of 8 or 16, the CPU's vector width), so plain
// operands are reordered into that layout, the kernel runs, and its result
// is reordered back, as PyTorch does for tensors in its default layout.
// The primitives are made once per shape and thread; the reorder buffers
// and oneDNN's scratchpad live in a per-thread workspace that grows to the
// largest convolution and is kept for the next step (tp-run --profile
// prints its size). Mixed precision's convolutions (TPRT_CONV_BF16) read
// bf16 operands and write f32, on the CPU's bf16 instructions; where
// oneDNN has no bf16 kernels (no AVX-512) the operands are widened to f32
// in the workspace and the f32 convolution runs.
//
//===----------------------------------------------------------------------===//
#include "Dnnl.h"
#include "tprt/DType.h"
#include "tprt/Program.h"
#include "tprt/Watchdog.h"
#include "tprt/tprt.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

using namespace tprt;

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

/// The shape array tprt_conv reads (tprt.h's TPRT_CONV_* indices).
struct ConvShape {
  const int64_t *v;
  int64_t rank() const { return v[TPRT_CONV_RANK]; }
  memory::dims spatial(int field) const {
    return memory::dims(v + field, v + field + rank());
  }
  int64_t group() const { return v[TPRT_CONV_GROUP]; }

  memory::dims input() const {
    memory::dims d = {v[TPRT_CONV_N], v[TPRT_CONV_C]};
    for (int64_t s : spatial(TPRT_CONV_SPATIAL))
      d.push_back(s);
    return d;
  }
  memory::dims output() const {
    memory::dims d = {v[TPRT_CONV_N], v[TPRT_CONV_M]};
    for (int64_t s : spatial(TPRT_CONV_OUTPUT))
      d.push_back(s);
    return d;
  }
  /// [M, C/g, K...], or oneDNN's grouped [g, M/g, C/g, K...].
  memory::dims filter() const {
    int64_t g = group(), m = v[TPRT_CONV_M], c = v[TPRT_CONV_C];
    memory::dims d = g == 1 ? memory::dims{m, c} : memory::dims{g, m / g, c / g};
    for (int64_t k : spatial(TPRT_CONV_KERNEL))
      d.push_back(k);
    return d;
  }
  /// oneDNN counts dilation from 0 (no gaps), ONNX from 1.
  memory::dims dilations() const {
    memory::dims d = spatial(TPRT_CONV_DILATIONS);
    for (int64_t &x : d)
      x -= 1;
    return d;
  }
};

Tag activationTag(int64_t rank) {
  return rank == 1 ? Tag::ncw : rank == 2 ? Tag::nchw : Tag::ncdhw;
}
Tag filterTag(int64_t rank, bool grouped) {
  if (grouped)
    return rank == 1 ? Tag::goiw : rank == 2 ? Tag::goihw : Tag::goidhw;
  return rank == 1 ? Tag::oiw : rank == 2 ? Tag::oihw : Tag::oidhw;
}

/// One operand: the caller's plain layout and the primitive's, with the
/// reorder between them when they differ.
struct Operand {
  memory::desc plain, inner;
  dnnl::reorder toInner, toPlain;
  bool reordered() const { return plain != inner; }
};

/// A convolution of one shape and kind, ready to run.
struct Conv {
  dnnl::primitive primitive;
  Operand a, b, out;
  int aArg, bArg, outArg;
  memory::desc scratchpad;
  /// A bf16 convolution oneDNN has no kernel for on this CPU.
  bool unsupported = false;
};

/// The largest any thread's Workspace has grown.
std::atomic<size_t> peakWorkspace{0};

/// Buffers the reorders and oneDNN's scratchpad use, one per thread,
/// grown to the largest convolution.
struct Workspace {
  struct Slot {
    std::unique_ptr<void, decltype(&std::free)> data{nullptr, &std::free};
    size_t bytes = 0;
  };
  Slot slots[6];
  void *get(int i, size_t bytes) {
    Slot &s = slots[i];
    if (s.bytes < bytes) {
      size_t rounded = (bytes + 63) / 64 * 64;
      s.data.reset(std::aligned_alloc(64, rounded));
      if (!s.data)
        fatal("out of memory for a convolution's workspace (" +
              std::to_string(rounded) + " bytes)");
      s.bytes = rounded;
      size_t grown = total(), seen = peakWorkspace.load();
      while (grown > seen &&
             !peakWorkspace.compare_exchange_weak(seen, grown)) {
      }
    }
    return s.data.get();
  }
  size_t total() const {
    size_t n = 0;
    for (const Slot &s : slots)
      n += s.bytes;
    return n;
  }
};

/// A thread's convolutions, by shape and kind, and their workspace.
struct ThreadConvs {
  std::map<std::vector<int64_t>, Conv> convs;
  Workspace workspace;
};

Operand operand(const dnnl::engine &e, const memory::desc &plain,
                const memory::desc &inner) {
  Operand o{plain, inner, {}, {}};
  if (o.reordered()) {
    o.toInner = dnnl::reorder(dnnl::reorder::primitive_desc(e, plain, e, inner));
    o.toPlain = dnnl::reorder(dnnl::reorder::primitive_desc(e, inner, e, plain));
  }
  return o;
}

/// Channels in blocks of the vector width (nChw16c with AVX-512, nChw8c
/// with AVX2), where they divide: oneDNN's direct kernels on these beat its
/// brgemm kernels on channels-last (which it picks for `any` on AVX-512
/// machines) by up to 2.8x on a CNN's small late feature maps, and they
/// are what PyTorch's convolutions run on. Otherwise oneDNN's choice.
memory::desc blockedActivation(const memory::dims &dims,
                               memory::data_type type) {
  static const int64_t block =
      dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core ? 16 : 8;
  int64_t r = dims.size() - 2;
  if (dims[1] % block)
    return memory::desc(dims, type, Tag::any);
  Tag tags[2][3] = {{Tag::nCw8c, Tag::nChw8c, Tag::nCdhw8c},
                    {Tag::nCw16c, Tag::nChw16c, Tag::nCdhw16c}};
  return memory::desc(dims, type, tags[block == 16][r - 1]);
}

/// `kind`'s convolution; with TPRT_CONV_BF16, its operands (a and b) are
/// bf16 and its result f32.
Conv makeConv(const dnnl::engine &e, int32_t kind, ConvShape s) {
  using namespace dnnl;
  using DT = memory::data_type;
  bool bf16 = kind & TPRT_CONV_BF16;
  kind &= ~TPRT_CONV_BF16;
  DT in = bf16 ? DT::bf16 : DT::f32;
  // The element type of x, w and y: the operands' for the two the kind
  // reads, f32 for the one it writes.
  DT tx = kind == TPRT_CONV_INPUT_GRAD ? DT::f32 : in;
  DT tw = kind == TPRT_CONV_FILTER_GRAD ? DT::f32 : in;
  DT ty = kind == TPRT_CONV_FORWARD ? DT::f32 : in;
  int64_t r = s.rank();
  memory::desc x(s.input(), tx, activationTag(r)),
      w(s.filter(), tw, filterTag(r, s.group() != 1)),
      y(s.output(), ty, activationTag(r));
  memory::desc xAny = blockedActivation(s.input(), tx),
               wAny(s.filter(), tw, Tag::any),
               yAny = blockedActivation(s.output(), ty);
  memory::dims strides = s.spatial(TPRT_CONV_STRIDES),
               dilations = s.dilations(),
               padBegin = s.spatial(TPRT_CONV_PADS_BEGIN),
               padEnd = s.spatial(TPRT_CONV_PADS_END);
  primitive_attr attr;
  attr.set_scratchpad_mode(scratchpad_mode::user);
  // A gradient's primitive is made from its forward's (oneDNN's hint): for
  // bf16, the forward that reads and writes bf16.
  auto forwardDesc =
      kind == TPRT_CONV_FORWARD
          ? convolution_forward::desc(prop_kind::forward_inference,
                                      algorithm::convolution_direct, xAny,
                                      wAny, yAny, strides, dilations,
                                      padBegin, padEnd)
          : convolution_forward::desc(
                prop_kind::forward_training, algorithm::convolution_direct,
                blockedActivation(s.input(), in),
                memory::desc(s.filter(), in, Tag::any),
                blockedActivation(s.output(), in), strides, dilations,
                padBegin, padEnd);
  auto forward = convolution_forward::primitive_desc(forwardDesc, attr, e);
  Conv c;
  if (kind == TPRT_CONV_FORWARD) {
    c.primitive = convolution_forward(forward);
    c.a = operand(e, x, forward.src_desc());
    c.b = operand(e, w, forward.weights_desc());
    c.out = operand(e, y, forward.dst_desc());
    c.aArg = DNNL_ARG_SRC, c.bArg = DNNL_ARG_WEIGHTS, c.outArg = DNNL_ARG_DST;
    c.scratchpad = forward.scratchpad_desc();
  } else if (kind == TPRT_CONV_INPUT_GRAD) {
    auto pd = convolution_backward_data::primitive_desc(
        convolution_backward_data::desc(algorithm::convolution_direct, xAny,
                                        wAny, yAny, strides, dilations,
                                        padBegin, padEnd),
        attr, e, forward);
    c.primitive = convolution_backward_data(pd);
    c.a = operand(e, y, pd.diff_dst_desc());
    c.b = operand(e, w, pd.weights_desc());
    c.out = operand(e, x, pd.diff_src_desc());
    c.aArg = DNNL_ARG_DIFF_DST, c.bArg = DNNL_ARG_WEIGHTS,
    c.outArg = DNNL_ARG_DIFF_SRC;
    c.scratchpad = pd.scratchpad_desc();
  } else {
    auto pd = convolution_backward_weights::primitive_desc(
        convolution_backward_weights::desc(algorithm::convolution_direct,
                                           xAny, wAny, yAny, strides,
                                           dilations, padBegin, padEnd),
        attr, e, forward);
    c.primitive = convolution_backward_weights(pd);
    c.a = operand(e, x, pd.src_desc());
    c.b = operand(e, y, pd.diff_dst_desc());
    c.out = operand(e, w, pd.diff_weights_desc());
    c.aArg = DNNL_ARG_SRC, c.bArg = DNNL_ARG_DIFF_DST,
    c.outArg = DNNL_ARG_DIFF_WEIGHTS;
    c.scratchpad = pd.scratchpad_desc();
  }
  return c;
}

/// makeConv, or for a bf16 kind oneDNN has no kernels for on this CPU, a
/// Conv marked unsupported.
Conv makeConvOrNone(const dnnl::engine &e, int32_t kind, ConvShape s) {
  try {
    return makeConv(e, kind, s);
  } catch (const dnnl::error &err) {
    if (!(kind & TPRT_CONV_BF16) || err.status != dnnl_unimplemented)
      throw;
    Conv c;
    c.unsupported = true;
    return c;
  }
}

void run(DnnlThread &st, Workspace &ws, Conv &c, void *a, void *b,
         void *out) {
  const dnnl::engine &e = st.engine;
  auto inner = [&](const Operand &o, void *plain, int slot) {
    if (!o.reordered())
      return memory(o.plain, e, plain);
    memory m(o.inner, e, ws.get(slot, o.inner.get_size())),
        user(o.plain, e, plain);
    o.toInner.execute(st.stream, user, m);
    return m;
  };
  memory am = inner(c.a, a, 0), bm = inner(c.b, b, 1);
  memory om = c.out.reordered()
                  ? memory(c.out.inner, e, ws.get(2, c.out.inner.get_size()))
                  : memory(c.out.plain, e, out);
  std::unordered_map<int, memory> args = {
      {c.aArg, am}, {c.bArg, bm}, {c.outArg, om}};
  if (size_t bytes = c.scratchpad.get_size())
    args.insert({DNNL_ARG_SCRATCHPAD,
                 memory(c.scratchpad, e, ws.get(3, bytes))});
  c.primitive.execute(st.stream, args);
  if (c.out.reordered()) {
    memory user(c.out.plain, e, out);
    c.out.toPlain.execute(st.stream, om, user);
  }
  st.stream.wait();
}

} // namespace

extern "C" void tprt_conv(int32_t kind, int64_t a, int64_t b, int64_t out,
                          int64_t shape) {
  ConvShape s{reinterpret_cast<const int64_t *>(shape)};
  thread_local ThreadConvs state;
  std::vector<int64_t> key(s.v, s.v + TPRT_CONV_SHAPE_SIZE);
  key.push_back(kind);
  callDnnl("a convolution", [&](DnnlThread &t) {
    auto conv = [&](int32_t k) -> Conv & {
      key.back() = k;
      auto it = state.convs.find(key);
      if (it == state.convs.end())
        it = state.convs.emplace(key, makeConvOrNone(t.engine, k, s)).first;
      return it->second;
    };
    Conv *c = &conv(kind);
    void *pa = reinterpret_cast<void *>(a), *pb = reinterpret_cast<void *>(b);
    if (c->unsupported) {
      // bf16 operands widened to f32 (slots 4 and 5), the f32 convolution.
      sayBf16RunsInF32();
      auto widen = [&](void *from, const Operand &o, int slot) {
        size_t bytes = o.plain.get_size();
        auto *to = static_cast<float *>(state.workspace.get(slot, bytes));
        widenBf16(static_cast<const uint16_t *>(from), to,
                  int64_t(bytes / sizeof(float)));
        return to;
      };
      c = &conv(kind & ~TPRT_CONV_BF16);
      pa = widen(pa, c->a, 4);
      pb = widen(pb, c->b, 5);
    }
    run(t, state.workspace, *c, pa, pb, reinterpret_cast<void *>(out));
  });
  markProgress(Activity::Code, "after a convolution");
}

size_t tprt::convolutionWorkspaceBytes() { return peakWorkspace.load(); }
