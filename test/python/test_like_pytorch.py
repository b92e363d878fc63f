# RUN: %pytest %s
"""Training a freshly initialized module from Python gives PyTorch's own
loop: every parameter trained apart although torch.onnx.export would merge
equal initializers (fresh LayerNorms' ones and zeros, the identical layers
nn.TransformerEncoder deep-copies), modules with nn.MultiheadAttention
export in eval mode, and cross entropy follows F.cross_entropy's
ignore_index, reduction and label_smoothing on every mesh."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import tp
from conftest import relative_error


class LayerNormNet(torch.nn.Module):
    """The issue's net: Linear, ReLU, LayerNorm, Linear, ReLU, LayerNorm,
    Linear, default initialization (the LayerNorms start equal)."""

    def __init__(self):
        super().__init__()
        self.l1, self.n1 = torch.nn.Linear(16, 32), torch.nn.LayerNorm(32)
        self.l2, self.n2 = torch.nn.Linear(32, 32), torch.nn.LayerNorm(32)
        self.l3 = torch.nn.Linear(32, 8)

    def forward(self, x):
        x = self.n1(torch.relu(self.l1(x)))
        x = self.n2(torch.relu(self.l2(x)))
        return self.l3(x)


def torch_loop(model, data, lr, loss_fn):
    """PyTorch's own SGD loop: the losses, then the state_dict."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for x, t in data:
        opt.zero_grad()
        loss = loss_fn(model(x), t)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model.state_dict()


@pytest.mark.parametrize("mesh,dp", [({"tp": 1}, None), ({"tp": 2}, None),
                                     ({"dp": 2, "tp": 2}, "dp")])
def test_fresh_layernorms_train_apart(mesh, dp):
    torch.manual_seed(0)
    model = LayerNormNet()
    reference = LayerNormNet()
    reference.load_state_dict(model.state_dict())
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(4, 16, generator=g), torch.randn(4, 8, generator=g))
            for _ in range(5)]
    compiled = tp.parallelize_module(
        model, tp.DeviceMesh(mesh),
        {"l1": tp.ColwiseParallel(), "l2": tp.RowwiseParallel()},
        example_inputs=(data[0][0],), data_parallel=dp)
    step = tp.train_step(compiled, loss="mse", optimizer=tp.SGD(lr=0.5))
    losses = [step(x, t) for x, t in data]
    want_losses, want_state = torch_loop(reference, data, 0.5, F.mse_loss)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5, atol=1e-6)
    state = compiled.state_dict()
    assert sorted(state) == sorted(want_state)
    for name, want in want_state.items():
        assert relative_error(state[name], want) < 1e-5, name
    # The two LayerNorms were trained apart, as PyTorch trains them.
    assert not torch.equal(state["n1.weight"], state["n2.weight"])


def test_transformer_encoder_layers_export_and_train():
    """nn.TransformerEncoder deep-copies its layer: both layers start with
    equal weights, which an eval-mode export merges. Exported in eval mode
    (nn.MultiheadAttention's fast path is not taken), trained on tp=2 with
    the attention split by heads."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0,
                                             batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    model.eval()
    reference = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0,
                                         batch_first=True), 2,
        enable_nested_tensor=False)
    reference.load_state_dict(model.state_dict())
    reference.eval()
    g = torch.Generator().manual_seed(2)
    data = [(torch.randn(2, 6, 32, generator=g),
             torch.randn(2, 6, 32, generator=g)) for _ in range(3)]
    plan = {"layers.*.self_attn": tp.ColwiseParallel(),
            "layers.*.self_attn.out_proj": tp.RowwiseParallel(),
            "layers.*.linear1": tp.ColwiseParallel(),
            "layers.*.linear2": tp.RowwiseParallel()}
    compiled = tp.parallelize_module(model, tp.DeviceMesh({"tp": 2}), plan,
                                     example_inputs=(data[0][0],))
    with torch.no_grad():
        want = reference(data[0][0])
    assert relative_error(compiled(data[0][0]), want) < 1e-5
    step = tp.train_step(compiled, loss="mse", optimizer=tp.SGD(lr=0.1))
    losses = [step(x, t) for x, t in data]
    want_losses, want_state = torch_loop(reference, data, 0.1, F.mse_loss)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5, atol=1e-6)
    state = compiled.state_dict()
    for name, want in want_state.items():
        assert relative_error(state[name], want) < 1e-4, name


class SelfAttention(torch.nn.Module):
    """nn.MultiheadAttention on its own (its output, not the weights)."""

    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


LAYER_TYPES = {
    # name: (fresh module, input shapes)
    "encoder_layer_norm_first": (lambda: torch.nn.TransformerEncoderLayer(
        32, 4, 64, dropout=0.0, batch_first=True, norm_first=True),
        [(2, 6, 32)]),
    "encoder_layer_sequence_first": (lambda: torch.nn.TransformerEncoderLayer(
        32, 4, 64, dropout=0.0), [(6, 2, 32)]),
    "decoder_layer": (lambda: torch.nn.TransformerDecoderLayer(
        32, 4, 64, dropout=0.0, batch_first=True), [(2, 5, 32), (2, 6, 32)]),
    "transformer": (lambda: torch.nn.Transformer(
        32, 4, 1, 1, 64, dropout=0.0, batch_first=True),
        [(2, 6, 32), (2, 5, 32)]),
    "multihead_attention": (SelfAttention, [(2, 6, 32)]),
}


@pytest.mark.parametrize("layer_type", sorted(LAYER_TYPES))
def test_transformer_layer_types_export_and_train(layer_type):
    """Every torch.nn transformer layer type, freshly initialized, in
    eval(): exported as written (no fast path), its forward and three SGD
    steps equal PyTorch's."""
    make, shapes = LAYER_TYPES[layer_type]
    torch.manual_seed(0)
    model = make().eval()
    reference = make().eval()
    reference.load_state_dict(model.state_dict())
    g = torch.Generator().manual_seed(3)
    batches = [tuple(torch.randn(*s, generator=g) for s in shapes)
               for _ in range(3)]
    with torch.no_grad():
        target = torch.randn(reference(*batches[0]).shape, generator=g)
    compiled = tp.parallelize_module(model, tp.DeviceMesh({"tp": 1}), {},
                                     example_inputs=batches[0])
    with torch.no_grad():
        assert relative_error(compiled(*batches[0]),
                              reference(*batches[0])) < 1e-5
    step = tp.train_step(compiled, loss="mse", optimizer=tp.SGD(lr=0.1))
    losses = [step(inputs, target) for inputs in batches]
    opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    want = []
    for inputs in batches:
        opt.zero_grad()
        loss = F.mse_loss(reference(*inputs), target)
        loss.backward()
        opt.step()
        want.append(loss.item())
    np.testing.assert_allclose(losses, want, rtol=1e-5, atol=1e-6)
    state = compiled.state_dict()
    for name, value in reference.state_dict().items():
        assert relative_error(state[name], value) < 1e-4, name


class Classifier(torch.nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.body = torch.nn.Linear(16, 32)
        self.head = torch.nn.Linear(32, classes)

    def forward(self, x):
        return self.head(torch.tanh(self.body(x)))


def padded_labels(classes):
    """[4, 6] labels, -100 where padded: 3 ignored on the first two rows
    (the first dp rank's), 7 on the last two."""
    g = torch.Generator().manual_seed(5)
    labels = torch.randint(0, classes, (4, 6), generator=g)
    labels[0, 3:] = -100
    labels[2, 1:] = -100
    labels[3, 4:] = -100
    return labels


@pytest.mark.parametrize("options", [
    {},
    {"reduction": "sum"},
    {"label_smoothing": 0.1},
    {"ignore_index": 2, "label_smoothing": 0.2},
])
@pytest.mark.parametrize("mesh,dp,plan", [
    ({"tp": 1}, None, {}),
    ({"dp": 2}, "dp", {}),
    # The classes split: Megatron's vocab-parallel cross entropy.
    ({"dp": 2, "tp": 2}, "dp", {"head": tp.ColwiseParallel()}),
])
def test_cross_entropy_as_pytorch(options, mesh, dp, plan):
    classes = 10
    torch.manual_seed(3)
    model = Classifier(classes)
    x = torch.randn(4, 6, 16)
    labels = padded_labels(classes)
    if options.get("ignore_index") == 2:
        labels[labels == -100] = 2
    compiled = tp.parallelize_module(model, tp.DeviceMesh(mesh), plan,
                                     example_inputs=(x,), data_parallel=dp)
    step = tp.train_step(compiled, loss="cross_entropy", **options)
    loss = step(x, labels)
    logits = model(x)
    want = F.cross_entropy(logits.reshape(-1, classes), labels.reshape(-1),
                           **options)
    assert abs(loss - want.item()) <= 1e-5 * max(1.0, abs(want.item()))
    expected = torch.autograd.grad(want, list(model.parameters()))
    grads = step.get_gradients()
    for (name, _), g in zip(model.named_parameters(), expected):
        assert relative_error(grads[name], g) < 1e-5, name


def test_cross_entropy_options_are_checked(example):
    model, plan = example
    compiled = tp.parallelize_module(model, tp.DeviceMesh({"tp": 1}), plan)
    with pytest.raises(tp.Error, match="reduction='none'"):
        tp.train_step(compiled, loss="cross_entropy", reduction="none")
    with pytest.raises(tp.Error, match=r"label_smoothing=1.5: give a value in \[0, 1\]"):
        tp.train_step(compiled, loss="cross_entropy", label_smoothing=1.5)
    with pytest.raises(tp.Error, match="go with loss='cross_entropy'"):
        tp.train_step(compiled, loss="mse", ignore_index=0)


class SmallCNN(torch.nn.Module):
    """Conv, BatchNorm, ReLU, pool, Linear: the issue's CNN."""

    def __init__(self, dropout=0.0):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.drop = torch.nn.Dropout(dropout)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x))).mean((2, 3))
        return self.fc(self.drop(x))


def ddp_reference(model, data, ranks, lr):
    """PyTorch DDP on `ranks` ranks, by hand: each rank's replica
    normalizes with its own part of the batch, the gradients are averaged,
    and the running statistics are rank 0's (DDP broadcasts its buffers)."""
    import copy
    losses = []
    for x, y in data:
        replicas = [copy.deepcopy(model) for _ in range(ranks)]
        parts = zip(x.chunk(ranks), y.chunk(ranks))
        rank_losses = [F.cross_entropy(r(xs), ys)
                       for r, (xs, ys) in zip(replicas, parts)]
        losses.append(sum(l.item() for l in rank_losses) / ranks)
        grads = [torch.autograd.grad(l, list(r.parameters()))
                 for r, l in zip(replicas, rank_losses)]
        with torch.no_grad():
            for i, p in enumerate(model.parameters()):
                p -= lr * sum(g[i] for g in grads) / ranks
            for name, b in model.named_buffers():
                b.copy_(dict(replicas[0].named_buffers())[name])
    return losses


CNN_PLAN = {"conv": tp.ColwiseParallel(), "fc": tp.RowwiseParallel()}


@pytest.mark.parametrize("mesh,dp,plan", [
    ({"dp": 1}, None, {}), ({"dp": 2}, "dp", {}), ({"tp": 2}, None, CNN_PLAN),
    ({"dp": 2, "tp": 2}, "dp", CNN_PLAN)])
def test_batchnorm_follows_train_mode(mesh, dp, plan):
    torch.manual_seed(4)
    model = SmallCNN()
    reference = SmallCNN()
    reference.load_state_dict(model.state_dict())
    g = torch.Generator().manual_seed(6)
    data = [(torch.randn(4, 3, 8, 8, generator=g),
             torch.randint(0, 5, (4,), generator=g)) for _ in range(5)]
    model.train()
    compiled = tp.parallelize_module(model, tp.DeviceMesh(mesh), plan,
                                     example_inputs=(data[0][0],),
                                     data_parallel=dp)
    step = tp.train_step(compiled, loss="cross_entropy",
                         optimizer=tp.SGD(lr=0.1))
    losses = [step(x, y) for x, y in data]
    want = ddp_reference(reference, data, 2 if dp else 1, 0.1)
    np.testing.assert_allclose(losses, want, rtol=1e-5, atol=1e-6)
    state = compiled.state_dict()
    for name, value in reference.state_dict().items():
        if name.endswith("num_batches_tracked"):
            continue
        assert relative_error(state[name], value) < 1e-5, name
    # eval(): the running statistics, as PyTorch's eval forward.
    model.eval()
    reference.eval()
    x = data[0][0]
    with torch.no_grad():
        assert relative_error(compiled(x), reference(x)) < 1e-5
    # train(): the batch's statistics (on one rank: the whole batch).
    model.train()
    reference.train()
    if dp is None:
        with torch.no_grad():
            assert relative_error(compiled(x), reference(x)) < 1e-5
    # The step was compiled in train(); in eval() it says why it stops.
    model.eval()
    with pytest.raises(tp.Error, match=r"was in train\(\) mode when its "
                       r"training step was compiled and is in eval\(\) mode"):
        step(x, data[0][1])


def test_running_statistics_follow_forward_calls():
    """In train(), each forward call updates BatchNorm's running statistics
    as PyTorch's does, and the next training step starts from them."""
    torch.manual_seed(4)
    model = SmallCNN(dropout=0.0).train()
    reference = SmallCNN(dropout=0.0).train()
    reference.load_state_dict(model.state_dict())
    g = torch.Generator().manual_seed(6)
    xs = [torch.randn(4, 3, 8, 8, generator=g) for _ in range(3)]
    y = torch.randint(0, 5, (4,), generator=g)
    compiled = tp.parallelize_module(model, tp.DeviceMesh({"tp": 1}), {},
                                     example_inputs=(xs[0],))
    with torch.no_grad():
        for x in xs[:2]:
            assert relative_error(compiled(x), reference(x)) < 1e-5
    state = compiled.state_dict()
    for name in ("bn.running_mean", "bn.running_var"):
        assert relative_error(state[name], reference.state_dict()[name]) \
            < 1e-5, name
    step = tp.train_step(compiled, loss="cross_entropy",
                         optimizer=tp.SGD(lr=0.1))
    loss = step(xs[2], y)
    opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    want = F.cross_entropy(reference(xs[2]), y)
    want.backward()
    opt.step()
    assert abs(loss - want.item()) <= 1e-5 * abs(want.item())
    state = compiled.state_dict()
    for name, value in reference.state_dict().items():
        if not name.endswith("num_batches_tracked"):
            assert relative_error(state[name], value) < 1e-5, name


class SyncCNN(SmallCNN):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.SyncBatchNorm(8)


def test_sync_batchnorm_normalizes_over_the_whole_batch():
    """nn.SyncBatchNorm on dp=2: the statistics of the whole global batch,
    which is plain BatchNorm on one device."""
    torch.manual_seed(4)
    model = SyncCNN().train()
    reference = SmallCNN().train()
    reference.load_state_dict(model.state_dict())
    g = torch.Generator().manual_seed(6)
    data = [(torch.randn(4, 3, 8, 8, generator=g),
             torch.randint(0, 5, (4,), generator=g)) for _ in range(3)]
    compiled = tp.parallelize_module(model, tp.DeviceMesh({"dp": 2}), {},
                                     example_inputs=(data[0][0],),
                                     data_parallel="dp")
    step = tp.train_step(compiled, loss="cross_entropy",
                         optimizer=tp.SGD(lr=0.1))
    losses = [step(x, y) for x, y in data]
    want, state = torch_loop(reference, data, 0.1, F.cross_entropy)
    np.testing.assert_allclose(losses, want, rtol=1e-5, atol=1e-6)
    got = compiled.state_dict()
    for name, value in state.items():
        if not name.endswith("num_batches_tracked"):
            assert relative_error(got[name], value) < 1e-5, name
    # The module still holds its SyncBatchNorm.
    assert isinstance(model.bn, torch.nn.SyncBatchNorm)