// Verifier errors of tp ops: each names the op and the shapes involved.
// RUN: tp-opt %s -split-input-file -verify-diagnostics

func.func @add_not_broadcastable(%a: tensor<8x64xf32>, %b: tensor<32xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tp.add' op shapes [8, 64] and [32] do not broadcast: dim 1 of the broadcast result would be 64 and 32}}
  %0 = tp.add %a, %b : tensor<8x64xf32>, tensor<32xf32> -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @add_wrong_result(%a: tensor<8x64xf32>, %b: tensor<64xf32>) -> tensor<8x1xf32> {
  // expected-error @+1 {{'tp.add' op result type 'tensor<8x1xf32>' does not match 'tensor<8x64xf32>', the type its operands give}}
  %0 = tp.add %a, %b : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

func.func @mul_mixed_element_types(%a: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'tp.mul' op operand element types differ: f32 vs f16}}
  %0 = tp.mul %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @add_dynamic_shape(%a: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{'tp.add' op operand #0 must be statically shaped tensor of floating-point or signless integer values}}
  %0 = tp.add %a, %b : tensor<?x64xf32>, tensor<64xf32> -> tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// -----

func.func @relu_type_mismatch(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tp.relu' op requires the same type for all operands and results}}
  %0 = "tp.relu"(%x) : (tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @relu_integer(%x: tensor<8xi32>) -> tensor<8xi32> {
  // expected-error @+1 {{'tp.relu' op operand #0 must be statically shaped tensor of floating-point values}}
  %0 = tp.relu %x : tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

func.func @matmul_contraction_mismatch(%x: tensor<8x64xf32>, %w: tensor<32x256xf32>) -> tensor<8x256xf32> {
  // expected-error @+1 {{'tp.matmul' op contracted dims differ: [8, 64] x [32, 256] needs lhs dim -1 (64) == rhs dim -2 (32)}}
  %0 = tp.matmul %x, %w : tensor<8x64xf32>, tensor<32x256xf32> -> tensor<8x256xf32>
  return %0 : tensor<8x256xf32>
}

// -----

func.func @matmul_rank1(%x: tensor<64xf32>, %w: tensor<64x256xf32>) -> tensor<256xf32> {
  // expected-error @+1 {{'tp.matmul' op operands must have rank >= 2, got [64] and [64, 256]}}
  %0 = tp.matmul %x, %w : tensor<64xf32>, tensor<64x256xf32> -> tensor<256xf32>
  return %0 : tensor<256xf32>
}

// -----

func.func @matmul_batch_mismatch(%x: tensor<3x8x64xf32>, %w: tensor<2x64x16xf32>) -> tensor<3x8x16xf32> {
  // expected-error @+1 {{'tp.matmul' op batch dims of [3, 8, 64] x [2, 64, 16] do not broadcast: shapes [3] and [2] do not broadcast: dim 0 of the broadcast result would be 3 and 2}}
  %0 = tp.matmul %x, %w : tensor<3x8x64xf32>, tensor<2x64x16xf32> -> tensor<3x8x16xf32>
  return %0 : tensor<3x8x16xf32>
}

// -----

func.func @matmul_wrong_result(%x: tensor<8x64xf32>, %w: tensor<64x256xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tp.matmul' op result type 'tensor<8x64xf32>' does not match 'tensor<8x256xf32>', the type its operands give}}
  %0 = tp.matmul %x, %w : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// Only bf16 / f16 products may be summed into a wider (f32) result.
func.func @matmul_narrowing_result(%x: tensor<8x64xf32>, %w: tensor<64x256xf32>) -> tensor<8x256xbf16> {
  // expected-error @+1 {{'tp.matmul' op result type 'tensor<8x256xbf16>' does not match 'tensor<8x256xf32>', the type its operands give}}
  %0 = tp.matmul %x, %w : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xbf16>
  return %0 : tensor<8x256xbf16>
}

// -----

func.func @matmul_mixed_operands(%x: tensor<8x64xbf16>, %w: tensor<64x256xf32>) -> tensor<8x256xf32> {
  // expected-error @+1 {{'tp.matmul' op operand element types differ: bf16 vs f32}}
  %0 = tp.matmul %x, %w : tensor<8x64xbf16>, tensor<64x256xf32> -> tensor<8x256xf32>
  return %0 : tensor<8x256xf32>
}

// -----

func.func @conv_mixed_operands(%x: tensor<1x3x8x8xbf16>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  // expected-error @+1 {{'tp.conv' op expects input and filter of one element type, got 'tensor<1x3x8x8xbf16>' and 'tensor<4x3x3x3xf32>'}}
  %0 = tp.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<1x3x8x8xbf16>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  return %0 : tensor<1x4x8x8xf32>
}

// -----

func.func @constant_type_mismatch() -> tensor<3xf32> {
  // expected-error @+1 {{'tp.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "tp.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @cast_shape(%x: tensor<4xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{'tp.cast' op changes the shape: 'tensor<4xf32>' -> 'tensor<2xi32>'}}
  %0 = tp.cast %x : tensor<4xf32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @where_branches(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+1 {{'tp.where' op branch element types differ: 'tensor<4xf32>' vs 'tensor<4xf16>'}}
  %0 = tp.where %c, %x, %y : tensor<4xi1>, tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @softmax_axis(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tp.softmax' op axis 2 is out of range for rank 2 (expected 0 <= axis < 2)}}
  %0 = tp.softmax %x {axis = 2 : i64} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @layer_norm_scale(%x: tensor<4x64xf32>, %g: tensor<32xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'tp.layer_norm' op scale and bias must be 'tensor<64xf32>' (the normalized dims of 'tensor<4x64xf32>'), got 'tensor<32xf32>'}}
  %0 = tp.layer_norm %x, %g, %g {axis = 1 : i64, epsilon = 1.0e-05 : f32} : tensor<4x64xf32>, tensor<32xf32>, tensor<32xf32> -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

func.func @reduce_axes(%x: tensor<4x8xf32>) -> tensor<f32> {
  // expected-error @+1 {{'tp.reduce_sum' op axes must be sorted and unique, got [1, 0]}}
  %0 = tp.reduce_sum %x {axes = array<i64: 1, 0>, keepdims = false} : tensor<4x8xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @reduce_result(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tp.reduce_mean' op result type 'tensor<4xf32>' does not match 'tensor<4x1xf32>', the type its operands give}}
  %0 = tp.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tp.reshape' op changes the number of elements: [4, 8] has 32, [4, 4] has 16}}
  %0 = tp.reshape %x : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @transpose_perm(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'tp.transpose' op perm [1, 1] is not a permutation of the 2 dims of 'tensor<4x8xf32>'}}
  %0 = tp.transpose %x {perm = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @concat_mismatch(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'tp.concat' op input 'tensor<3x8xf32>' does not match 'tensor<4x8xf32>' outside axis 1}}
  %0 = tp.concat %a, %b {axis = 1 : i64} : tensor<4x8xf32>, tensor<3x8xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @slice_bounds(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tp.slice' op dim 1: start 6, limit 10, step 1 is not a valid slice of size 8 (expected 0 <= start <= limit <= size, step > 0)}}
  %0 = tp.slice %x {starts = array<i64: 0, 6>, limits = array<i64: 4, 10>, steps = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @gather_result(%t: tensor<100x64xf32>, %i: tensor<4xi64>) -> tensor<4x32xf32> {
  // expected-error @+1 {{'tp.gather' op result type 'tensor<4x32xf32>' does not match 'tensor<4x64xf32>', the type its operands give}}
  %0 = tp.gather %t, %i {axis = 0 : i64} : tensor<100x64xf32>, tensor<4xi64> -> tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

func.func @expand_incompatible(%x: tensor<3x64xf32>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'tp.expand' op cannot broadcast 'tensor<3x64xf32>' to 'tensor<8x64xf32>'}}
  %0 = tp.expand %x : tensor<3x64xf32> -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

// expected-error @+1 {{mesh axis "tp" is used more than once}}
func.func @sharding_axis_twice(%x: tensor<8x4xf32> {tp.sharding = #tp.sharding<[{"tp"}, {"tp"}]>}) -> tensor<8x4xf32> {
  return %x : tensor<8x4xf32>
}

// -----

func.func @one_hot_shape(%labels: tensor<8xi64>, %off: tensor<i64>) -> tensor<4x10xf32> {
  // expected-error @+1 {{'tp.one_hot' op result shape must be the indices' shape plus a class dim, got 'tensor<8xi64>' -> 'tensor<4x10xf32>'}}
  %0 = tp.one_hot %labels, %off : tensor<8xi64>, tensor<i64> -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

func.func @gather_elements_rank(%x: tensor<4x10xf32>, %i: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'tp.gather_elements' op indices [4] must have the rank of data [4, 10]}}
  %0 = tp.gather_elements %x, %i {axis = 1 : i64} : tensor<4x10xf32>, tensor<4xi64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_elements_larger(%x: tensor<4x10xf32>, %i: tensor<8x1xi64>) -> tensor<8x1xf32> {
  // expected-error @+1 {{'tp.gather_elements' op indices [8, 1] exceed data [4, 10] in dim 0}}
  %0 = tp.gather_elements %x, %i {axis = 1 : i64} : tensor<4x10xf32>, tensor<8x1xi64> -> tensor<8x1xf32>
  return %0 : tensor<8x1xf32>
}

// -----

// tp.pow is for floats (the importer raises an integer base in f64).
func.func @pow_integers(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'tp.pow' op operand #0 must be}}
  %0 = tp.pow %x, %x : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// A conv gradient's operands must make the conv whose output gradient it
// takes: input [2, 4, 9, 9] and this filter give [2, 6, 5, 5], not 4x4.
func.func @conv_input_grad_wrong_output(%g: tensor<2x6x4x4xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<2x4x9x9xf32> {
  // expected-error @+1 {{'tp.conv_input_grad' op output gradient 'tensor<2x6x4x4xf32>' does not match the conv's output [2, 6, 5, 5]}}
  %0 = tp.conv_input_grad %g, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 1 : i64} : tensor<2x6x4x4xf32>, tensor<6x4x3x3xf32> -> tensor<2x4x9x9xf32>
  return %0 : tensor<2x4x9x9xf32>
}

// -----

func.func @conv_filter_grad_wrong_group(%x: tensor<2x4x9x9xf32>, %g: tensor<2x6x5x5xf32>) -> tensor<6x4x3x3xf32> {
  // expected-error @+1 {{'tp.conv_filter_grad' op input channels 4 and filter [6, 4, 3, 3] do not match group 2}}
  %0 = tp.conv_filter_grad %x, %g {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, group = 2 : i64} : tensor<2x4x9x9xf32>, tensor<2x6x5x5xf32> -> tensor<6x4x3x3xf32>
  return %0 : tensor<6x4x3x3xf32>
}
