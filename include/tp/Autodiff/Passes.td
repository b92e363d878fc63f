//===- Passes.td - tp autodiff passes ---------------------*- tablegen -*-===//

#ifndef TP_AUTODIFF_PASSES_TD
#define TP_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def TPAutodiff : Pass<"tp-autodiff", "::mlir::ModuleOp"> {
  let summary = "Generate the training step: loss, gradients, optimizer update";
  let description = [{
    Replaces the imported `@forward` by `@train_step`, which takes the same
    arguments and returns the loss, the gradient of every weight
    (`tp.output = "grad_<weight>"`) and, with an optimizer, every updated
    weight (`tp.output = "<weight>"`). Optimizer state (SGD's momentum
    buffer, AdamW's moments and step count) is an argument with
    `tp.state = "<weight>.<name>"` and a result of the same name, so that the
    runtime feeds it from step to step (zeros at first). The backward pass is built in reverse
    from each op's VJP rule (`VJPOpInterface`), accumulating gradients where
    a value has several users; only values that depend on a weight get
    gradients. It runs on the global (unsharded) graph, so that
    tp-propagate-sharding and tp-partition produce the gradient exchange
    (Megatron's backward all_reduce, data parallelism's all_reduce over dp)
    like any other communication. An op without a rule is an error naming
    its ONNX node.
  }];
  let options = [
    Option<"loss", "loss", "std::string", "\"mse\"",
           "mse: mean of the squared output (against zeros, as the reference "
           "models' losses); cross_entropy: PyTorch's cross_entropy of the "
           "output logits (classes on the last dim) against integer "
           "`labels`; output: the model's own scalar output">,
    Option<"ignoreIndex", "ignore-index", "int64_t", "-100",
           "cross_entropy: labels equal to this count neither in the sum "
           "nor in the mean's denominator (PyTorch's ignore_index; how "
           "padded label positions are written)">,
    Option<"reduction", "reduction", "std::string", "\"mean\"",
           "cross_entropy: mean (over the labels not ignored, across every "
           "rank) or sum">,
    Option<"labelSmoothing", "label-smoothing", "double", "0",
           "cross_entropy: PyTorch's label_smoothing, in [0, 1]">,
    Option<"labels", "labels", "bool", "false",
           "mse against a `labels` input (a new last argument shaped like "
           "the output) instead of zeros; cross_entropy always has labels">,
    Option<"inputGrads", "input-grads", "bool", "false",
           "Also differentiate the float inputs: `grad_<input>` results "
           "(torch's x.requires_grad)">,
    Option<"optimizer", "optimizer", "std::string", "\"sgd\"",
           "sgd (PyTorch's SGD: momentum, weight decay), adamw (PyTorch's "
           "AdamW), or none (gradients only)">,
    Option<"lr", "lr", "double", "0.1", "Learning rate">,
    Option<"momentum", "momentum", "double", "0", "SGD momentum">,
    Option<"weightDecay", "weight-decay", "double", "0",
           "SGD: added to the gradient (L2); AdamW: decoupled">,
    Option<"beta1", "beta1", "double", "0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", "0.999", "AdamW beta2">,
    Option<"epsilon", "epsilon", "double", "1e-8", "AdamW epsilon">,
    ListOption<"frozen", "frozen", "std::string",
               "Weights not to train (globs over ONNX or PyTorch names, e.g. "
               "*.inv_freq): buffers such as rotary tables, which an ONNX "
               "file does not tell from parameters">,
    ListOption<"recompute", "recompute", "std::string",
               "Modules whose activations the backward pass recomputes "
               "instead of keeping (torch.utils.checkpoint; plan-style "
               "patterns over PyTorch's module names, e.g. layers.*): each "
               "keeps only its inputs from the forward pass">,
    Option<"rematerialize", "rematerialize", "bool", "true",
           "Recompute, before their first backward reader, the forward "
           "values an elementwise op computes from values kept anyway "
           "(a decomposed GELU's or layer norm's intermediates) instead of "
           "keeping them: less memory, bit-identical results">,
  ];
}

def TPExpandConvGradients : Pass<"tp-expand-conv-gradients", "::mlir::ModuleOp"> {
  let summary = "Write tp.conv_input_grad and tp.conv_filter_grad as tp.conv";
  let description = [{
    For targets without a library of convolution gradients (CUDA; the CPU
    for convs of more than 3 spatial dims, after tp-lower-conv-to-dnnl):
    the input's gradient becomes a stride-1 conv of the output's gradient,
    dilated by the stride, with the filter flipped in space and its
    channels swapped; the filter's gradient a conv of the input, batch and
    channels swapped, with the output's gradient as its filter (stride and
    dilation exchanged); plus the reshapes, transposes and slices around
    them. Groups stay groups.
  }];
}

#endif // TP_AUTODIFF_PASSES_TD
