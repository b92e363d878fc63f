// tp-apply-plan finds a module's weight by the PyTorch names the importer
// recorded (tp.torch_names), not only by the ONNX initializer name: a folded
// W^T named onnx::MatMul_<n>, and a weight tied between two modules, which an
// entry splits the way the module it names uses it.
// RUN: tp-opt %s --tp-apply-plan='mesh=tp=2 entry=model.layers.0.q_proj=colwise,lm_head=colwise' | FileCheck %s

// The folded Linear weight is stored [in, out]: colwise splits dim 1 (the
// node scope /model/layers.0/q_proj is ModuleList entry model.layers.0).
// The token embedding is also the LM head (read through a Transpose):
// lm_head=colwise splits the LM head's output features, the vocabulary
// (dim 0 of the table), not the embedding dim its first use, a Gather,
// would give.
// CHECK-LABEL: func.func @lm
// CHECK-SAME: tp.param = "wte.weight", tp.sharding = #tp.sharding<[{"tp"}, {}]>
// CHECK-SAME: tp.param = "onnx::MatMul_7", tp.sharding = #tp.sharding<[{}, {"tp"}]>
func.func @lm(%ids: tensor<4x8xi64> {tp.input = "ids"},
              %wte: tensor<96x32xf32> {tp.param = "wte.weight", tp.torch_names = ["wte.weight", "lm_head.weight"]},
              %w: tensor<32x32xf32> {tp.param = "onnx::MatMul_7", tp.stored_transposed, tp.torch_names = ["model.layers.0.q_proj.weight"]}) -> (tensor<4x8x96xf32> {tp.output = "logits"}) {
  %e = tp.gather %wte, %ids {axis = 0 : i64} : tensor<96x32xf32>, tensor<4x8xi64> -> tensor<4x8x32xf32> loc("/wte/Gather")
  %q = tp.matmul %e, %w : tensor<4x8x32xf32>, tensor<32x32xf32> -> tensor<4x8x32xf32> loc("/model/layers.0/q_proj/MatMul")
  %t = tp.transpose %wte {perm = array<i64: 1, 0>} : tensor<96x32xf32> -> tensor<32x96xf32> loc("/lm_head/MatMul")
  %y = tp.matmul %q, %t : tensor<4x8x32xf32>, tensor<32x96xf32> -> tensor<4x8x96xf32> loc("/lm_head/MatMul")
  return %y : tensor<4x8x96xf32>
}
