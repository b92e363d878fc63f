# RUN: %pytest %s
"""One compiled module called from several Python threads at once: every
output is the single-thread output for that thread's own input, and a
forward that runs while another thread trains sees the weights of one step
or the other, never a mix (docs/Python.md, "Threads")."""
import threading

import numpy as np
import torch

import tp

THREADS = 4
CALLS = 200


def run_threads(target, count):
    errors = []

    def guarded(i):
        try:
            target(i)
        except BaseException as e:  # reported by the main thread
            errors.append(e)
    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_forward_from_four_threads(example):
    model, plan = example
    compiled = tp.parallelize_module(model, tp.DeviceMesh({"tp": 2}), plan,
                                     example_inputs=(torch.randn(4, 16),))
    g = torch.Generator().manual_seed(7)
    inputs = [[torch.randn(4, 16, generator=g) for _ in range(CALLS)]
              for _ in range(THREADS)]
    # The single-thread outputs, by the same program.
    expected = [[compiled(x) for x in xs] for xs in inputs]
    for xs, ys in zip(inputs, expected):
        assert torch.allclose(ys[0], model(xs[0]).detach(), atol=1e-5)
    wrong = []

    def calls(i):
        for x, y in zip(inputs[i], expected[i]):
            if not torch.equal(compiled(x), y):
                wrong.append(i)
    run_threads(calls, THREADS)
    assert not wrong, "%d of %d outputs differ" % (len(wrong), THREADS * CALLS)


def test_forward_while_training(example):
    model, plan = example
    mesh = tp.DeviceMesh({"tp": 2})
    probe = torch.randn(4, 16)
    g = torch.Generator().manual_seed(3)
    data = [(torch.randn(4, 16, generator=g), torch.randn(4, 8, generator=g))
            for _ in range(5)]

    def trained():
        compiled = tp.parallelize_module(model, mesh, plan,
                                         example_inputs=(probe,))
        step = tp.train_step(compiled, loss="mse", optimizer=tp.SGD(lr=0.1))
        return compiled, step

    # The probe's output after each number of steps, one thread.
    compiled, step = trained()
    versions = [compiled(probe)]
    for x, t in data:
        step(x, t)
        versions.append(compiled(probe))
    assert not torch.equal(versions[0], versions[-1])

    compiled, step = trained()
    seen = []

    def work(i):
        if i == 0:
            for x, t in data:
                step(x, t)
        else:
            for _ in range(50):
                seen.append(compiled(probe))
    run_threads(work, 3)
    for y in seen:
        assert any(torch.equal(y, v) for v in versions), \
            "a forward saw weights of no single step"
    assert torch.equal(compiled(probe), versions[-1])
