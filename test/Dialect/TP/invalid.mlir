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

func.func @constant_type_mismatch() -> tensor<3xf32> {
  // expected-error @+1 {{'tp.constant' op failed to verify that all of {value, result} have same type}}
  %0 = "tp.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
