# RUN: %pytest %s
"""A freshly initialized torchvision VisionTransformer (2 layers, image 32,
patch 8, 4 heads, hidden 64; default initialization: its layers' zero
in_proj_bias, LayerNorms' ones and zeros, zero head) trained five steps
through the Python package gives PyTorch's own loop, with Megatron's plan
on its attention and MLP, on 1 rank, tp=2 and dp=2 x tp=2."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
import torchvision

import tp
from conftest import relative_error

PLAN = {
    "encoder.layers.*.self_attention": tp.ColwiseParallel(),
    "encoder.layers.*.self_attention.out_proj": tp.RowwiseParallel(),
    "encoder.layers.*.mlp.0": tp.ColwiseParallel(),
    "encoder.layers.*.mlp.3": tp.RowwiseParallel(),
}


def vit():
    return torchvision.models.VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=4,
        hidden_dim=64, mlp_dim=128, num_classes=10)


@pytest.mark.parametrize("mesh,dp", [({"tp": 1}, None), ({"tp": 2}, None),
                                     ({"dp": 2, "tp": 2}, "dp")])
def test_fresh_vit_trains_as_pytorch(mesh, dp):
    torch.manual_seed(0)
    model = vit().train()
    reference = vit().train()
    reference.load_state_dict(model.state_dict())
    g = torch.Generator().manual_seed(1)
    data = [(torch.randn(2, 3, 32, 32, generator=g),
             torch.randint(0, 10, (2,), generator=g)) for _ in range(5)]
    compiled = tp.parallelize_module(model, tp.DeviceMesh(mesh), PLAN,
                                     example_inputs=(data[0][0],),
                                     data_parallel=dp)
    with torch.no_grad():
        assert relative_error(compiled(data[0][0]), reference(data[0][0])) \
            < 1e-5
    step = tp.train_step(compiled, loss="cross_entropy",
                         optimizer=tp.SGD(lr=0.05))
    losses = [step(x, y) for x, y in data]
    opt = torch.optim.SGD(reference.parameters(), lr=0.05)
    want = []
    for x, y in data:
        opt.zero_grad()
        loss = F.cross_entropy(reference(x), y)
        loss.backward()
        opt.step()
        want.append(loss.item())
    np.testing.assert_allclose(losses, want, rtol=1e-5, atol=1e-6)
    # Training moved the loss: the zero head learned.
    assert losses[-1] != losses[0]
    state = compiled.state_dict()
    assert sorted(state) == sorted(reference.state_dict())
    for name, value in reference.state_dict().items():
        assert relative_error(state[name], value) < 1e-5, name
