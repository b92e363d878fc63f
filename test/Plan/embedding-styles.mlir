// tp-apply-plan on embeddings: rowwise splits the vocabulary, colwise the
// embedding dim.
// RUN: tp-opt %s --tp-apply-plan='mesh=tp=2 entry=embed=rowwise,head=colwise' | FileCheck %s

// Embedding (the table of a Gather): rowwise splits the vocabulary,
// colwise the embedding dim.
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: tp.param = "embed.weight", tp.sharding = #tp.sharding<[{"tp"}, {}]>
// CHECK-SAME: tp.param = "head.weight", tp.sharding = #tp.sharding<[{}, {"tp"}]>
func.func @embedding(%ids: tensor<4x16xi64> {tp.input = "ids"},
                     %table: tensor<1000x64xf32> {tp.param = "embed.weight"},
                     %table2: tensor<100x64xf32> {tp.param = "head.weight"}) -> (tensor<4x16x64xf32> {tp.output = "y"}, tensor<4x16x64xf32> {tp.output = "z"}) {
  %e = tp.gather %table, %ids {axis = 0 : i64} : tensor<1000x64xf32>, tensor<4x16xi64> -> tensor<4x16x64xf32> loc("/embed/Gather")
  %f = tp.gather %table2, %ids {axis = 0 : i64} : tensor<100x64xf32>, tensor<4x16xi64> -> tensor<4x16x64xf32> loc("/head/Gather")
  return %e, %f : tensor<4x16x64xf32>, tensor<4x16x64xf32>
}
