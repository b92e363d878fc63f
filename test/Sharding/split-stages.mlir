// tp-split-stages: the per-device program becomes one function per
// pipeline stage (ops found by ONNX node name in tp.pipeline's
// node_stages), a shard.send after a value another stage reads and a
// shard.recv where that stage first needs it, and a dispatch on the
// device's coordinate along the stage axis.
// RUN: tp-opt %s --split-input-file --tp-split-stages | FileCheck %s

// The MLP cut before fc2: fc1 and the ReLU on stage 0, fc2 on stage 1.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: tp.output = "output"{{.*}}tp.stage = 1 : i64
// CHECK: %[[STAGE:.*]] = shard.process_multi_index on @mesh axes = [0] : index
// CHECK: scf.index_switch %[[STAGE]]
// CHECK: case 0 {
// CHECK: func.call @forward_stage0(
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<8x64xf32>
// CHECK: scf.yield %[[EMPTY]]
// CHECK: default {
// CHECK: %[[OUT:.*]] = func.call @forward_stage1(
// CHECK: scf.yield %[[OUT]]
// CHECK-LABEL: func.func private @forward_stage1(
// CHECK: %[[BUF:.*]] = tensor.empty() : tensor<8x256xf32>
// CHECK: %[[H:.*]] = shard.recv %[[BUF]] on @mesh grid_axes = [0] source = [0]
// CHECK: %[[WT:.*]] = tp.transpose %arg3
// CHECK: tp.matmul %[[H]], %[[WT]]
// CHECK-LABEL: func.func private @forward_stage0(
// CHECK: %[[R:.*]] = tp.relu
// CHECK: shard.send %[[R]] on @mesh grid_axes = [0] destination = [1]
// CHECK-NOT: fc2
// CHECK: return{{$}}
module attributes {tp.pipeline = {axis = "pp", microbatches = 1 : i64, schedule = "gpipe", node_stages = {"/fc1/Gemm" = 0 : i64, "/act/Relu" = 0 : i64, "/fc2/Gemm" = 1 : i64}}} {
  shard.grid @mesh(shape = 2) {tp.axis_names = ["pp"]}
  func.func @forward(%arg0: tensor<8x64xf32> {tp.input = "x"}, %arg1: tensor<256x64xf32> {tp.param = "fc1.weight"}, %arg2: tensor<256xf32> {tp.param = "fc1.bias"}, %arg3: tensor<64x256xf32> {tp.param = "fc2.weight"}, %arg4: tensor<64xf32> {tp.param = "fc2.bias"}) -> (tensor<8x64xf32> {tp.output = "output"}) {
    %0 = tp.transpose %arg1 {perm = array<i64: 1, 0>} : tensor<256x64xf32> -> tensor<64x256xf32> loc("/fc1/Gemm")
    %1 = tp.matmul %arg0, %0 : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32> loc("/fc1/Gemm")
    %2 = tp.add %1, %arg2 : tensor<8x256xf32>, tensor<256xf32> -> tensor<8x256xf32> loc("/fc1/Gemm")
    %3 = tp.relu %2 : tensor<8x256xf32> loc("/act/Relu")
    %4 = tp.transpose %arg3 {perm = array<i64: 1, 0>} : tensor<64x256xf32> -> tensor<256x64xf32> loc("/fc2/Gemm")
    %5 = tp.matmul %3, %4 : tensor<8x256xf32>, tensor<256x64xf32> -> tensor<8x64xf32> loc("/fc2/Gemm")
    %6 = tp.add %5, %arg4 : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32> loc("/fc2/Gemm")
    return %6 : tensor<8x64xf32>
  }
}

// -----

// A weight both stages read (an embedding tied to the output projection):
// stage 0 sums its gradient and updates it (the update has no node of its
// own: it follows its operands), then sends the new weight to stage 1,
// which returns it too; the result counts from stage 0.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tp.output = "emb"{{.*}}tp.stage = 0 : i64
// CHECK-LABEL: func.func private @train_step_stage1(
// CHECK: %[[H:.*]] = shard.recv {{.*}} source = [0] : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[Y:.*]] = tp.matmul %[[H]], %arg1
// CHECK: %[[HT:.*]] = tp.transpose %[[H]]
// CHECK: %[[G1:.*]] = tp.matmul %[[HT]], %[[Y]]
// CHECK: shard.send %[[G1]] on @mesh grid_axes = [0] destination = [0]
// CHECK: %[[NEW:.*]] = shard.recv {{.*}} source = [0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK: return %[[NEW]] : tensor<8x8xf32>
// CHECK-LABEL: func.func private @train_step_stage0(
// CHECK: %[[H0:.*]] = tp.matmul %arg0, %arg1
// CHECK: shard.send %[[H0]] on @mesh grid_axes = [0] destination = [1]
// CHECK: %[[G0:.*]] = tp.matmul
// CHECK: %[[G:.*]] = shard.recv {{.*}} source = [1]
// CHECK: %[[SUM:.*]] = tp.add %[[G0]], %[[G]]
// CHECK: %[[UPD:.*]] = tp.sub %arg1, %[[SUM]]
// CHECK: shard.send %[[UPD]] on @mesh grid_axes = [0] destination = [1]
// CHECK: return %[[UPD]] : tensor<8x8xf32>
module attributes {tp.pipeline = {axis = "pp", microbatches = 1 : i64, schedule = "gpipe", node_stages = {"/embed/MatMul" = 0 : i64, "/head/MatMul" = 1 : i64}}} {
  shard.grid @mesh(shape = 2) {tp.axis_names = ["pp"]}
  func.func @train_step(%arg0: tensor<4x8xf32> {tp.input = "x"}, %arg1: tensor<8x8xf32> {tp.param = "emb"}) -> (tensor<8x8xf32> {tp.output = "emb"}) {
    %0 = tp.matmul %arg0, %arg1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("/embed/MatMul")
    %1 = tp.matmul %0, %arg1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("/head/MatMul")
    %2 = tp.transpose %0 {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32> loc("/head/MatMul")
    %3 = tp.matmul %2, %1 : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32> loc("/head/MatMul")
    %4 = tp.transpose %arg0 {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32> loc("/embed/MatMul")
    %5 = tp.matmul %4, %0 : tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32> loc("/embed/MatMul")
    %6 = tp.add %5, %3 : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32> loc("/embed/MatMul")
    %7 = tp.sub %arg1, %6 : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32> loc("sgd")
    return %7 : tensor<8x8xf32>
  }
}
