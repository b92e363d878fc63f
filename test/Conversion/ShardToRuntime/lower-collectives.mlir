// tp-lower-collectives: shard collectives become calls of the tprt C ABI on
// buffer addresses (element counts, dtype code, axes mask, site number);
// slices use this rank's index; sites and masks go to module attributes.
// With target=cuda the same calls go to the tprt_cuda_* entry points
// (device buffers, NCCL when the runtime has it), with the same arguments.
// RUN: tp-opt %s --tp-lower-collectives | FileCheck %s
// RUN: tp-opt %s --tp-lower-collectives=target=cuda | FileCheck %s --check-prefix=CUDA
// CUDA-LABEL: func.func @collectives
// CUDA: call @tprt_cuda_all_reduce(%{{.*}}, %{{.*}}, %c256_i64, %c0_i32, %c0_i32_0, %c2_i64, %c0_i64)
// CUDA: call @tprt_cuda_all_gather(%{{.*}}, %{{.*}}, %c4_i64, %c16_i64, %c0_i32_{{.*}}, %c2_i64_{{.*}}, %c1_i64)
// CUDA: call @tprt_cuda_reduce_scatter(%{{.*}}, %{{.*}}, %c4_i64_{{.*}}, %c16_i64_{{.*}}, %c0_i32_{{.*}}, %c2_i64_{{.*}}, %c2_i64_{{.*}})
// CUDA: call @tprt_axis_index
// CUDA-NOT: call @tprt_all_

// CHECK: module attributes {tp.axis_masks = [2], tp.collective_microbatches = array<i64: -1, -1, -1, -1>, tp.collective_phases = ["forward", "forward", "forward", "forward"], tp.collective_sites = ["all_reduce at /fc2/Gemm", "all_gather at /fc1/MatMul", "reduce_scatter", "all_to_all"], tp.mesh_axis_names = ["dp", "tp"], tp.mesh_shape = array<i64: 2, 4>}
// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @collectives
// all_reduce of 256 f32 (dtype 0), sum (0), over axis tp (mask 2), site 0:
// CHECK: %[[SRC:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK: %[[DST:.*]] = memref.alloc() : memref<4x64xf32>
// CHECK: call @tprt_all_reduce(%{{.*}}, %{{.*}}, %c256_i64, %c0_i32, %c0_i32_0, %c2_i64, %c0_i64)
// CHECK: bufferization.to_tensor %[[DST]] restrict writable
// all_gather along dim 1: 4 outer rows of 16 per rank, site 1:
// CHECK: call @tprt_all_gather(%{{.*}}, %{{.*}}, %c4_i64, %c16_i64, %c0_i32_{{.*}}, %c2_i64_{{.*}}, %c1_i64)
// reduce_scatter along dim 1: 4 outer rows, 16 kept per rank, site 2:
// CHECK: call @tprt_reduce_scatter(%{{.*}}, %{{.*}}, %c4_i64_{{.*}}, %c16_i64_{{.*}}, %c0_i32_{{.*}}, %c2_i64_{{.*}}, %c2_i64_{{.*}})
// all_slice: this rank's 4 columns.
// CHECK: %[[I:.*]] = call @tprt_axis_index(%c2_i64_{{.*}}) : (i64) -> i64
// CHECK: %[[IX:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK: %[[OFF:.*]] = arith.muli %[[IX]], %c4 : index
// CHECK: tensor.extract_slice %arg0[0, %[[OFF]]] [4, 4] [1, 1] : tensor<4x16xf32> to tensor<4x4xf32>
// all_to_all: gather along the concat dim, keep this rank's rows.
// CHECK: call @tprt_all_gather({{.*}}, %c3_i64)
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<1x64xf32>
shard.grid @mesh(shape = 2x4) {tp.axis_names = ["dp", "tp"]}
func.func @collectives(%x: tensor<4x16xf32>, %p: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x16xf32>, tensor<4x4xf32>, tensor<1x64xf32>) {
  %a = shard.all_reduce %p on @mesh grid_axes = [1] : tensor<4x64xf32> -> tensor<4x64xf32> loc("/fc2/Gemm")
  %g = shard.all_gather %x on @mesh grid_axes = [1] gather_axis = 1 : tensor<4x16xf32> -> tensor<4x64xf32> loc("/fc1/MatMul")
  %r = shard.reduce_scatter %p on @mesh grid_axes = [1] scatter_axis = 1 : tensor<4x64xf32> -> tensor<4x16xf32>
  %s = shard.all_slice %x on @mesh grid_axes = [1] slice_axis = 1 : tensor<4x16xf32> -> tensor<4x4xf32>
  %t = shard.all_to_all %x on @mesh grid_axes = [1] split_axis = 0 concat_axis = 1 : tensor<4x16xf32> -> tensor<1x64xf32>
  return %a, %g, %r, %s, %t : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x16xf32>, tensor<4x4xf32>, tensor<1x64xf32>
}
