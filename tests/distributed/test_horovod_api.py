"""Horovod's API (`import unison as hvd`) on two real processes: values checked against hand computation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from horovod_fns import collectives, keras_fit, sync_batch_norm, tape_and_variables

from unison.testing import run_distributed

pytestmark = pytest.mark.timeout(300)


def test_collectives_match_horovod_semantics() -> None:
    r0, r1 = run_distributed(collectives, world_size=2, timeout=240)
    for res in (r0, r1):
        assert res["size"] == 2 and res["initialized"] and res["cross"] == (0, 1)
        # rank 0 sends [1, 0], rank 1 [2, 2]
        assert res["average"] == [1.5, 1.0] and res["average_false"] == [3.0, 2.0]
        assert res["sum"] == [3.0, 2.0]
        assert res["scaled"] == [1.5, 1.0]  # (2 * sum) * 0.25
        assert res["fp16"].dtype == torch.float32 and res["fp16"].tolist() == [1.5, 1.0]
        assert res["adasum_orthogonal"] == [1.0, 1.0]  # orthogonal gradients add
        assert res["adasum_same"] == [2.0, 2.0]  # identical gradients are not doubled
        assert res["inplace_is_same"] and res["inplace"] == [3.0, 2.0]
        assert res["async"] == [3.0, 2.0] and res["polled"] is True
        assert res["async_inplace"] == [1.5, 1.0]
        assert res["grouped"] == [([1.0, 1.0], "torch.float32"), ([1.0], "torch.float64"), ([[3]], "torch.int64")]
        assert res["allgather"] == [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]
        assert res["broadcast"] == [1.0] and res["broadcast_"] == [1.0]
        assert res["allgather_object"] == [{"rank": 0}, {"rank": 1}]
        assert res["broadcast_object"] == {"from": 1}
        assert res["join"] in (0, 1)
    assert r0["join"] == r1["join"]
    assert r0["input_unchanged"] == [1.0, 0.0] and r1["input_unchanged"] == [2.0, 2.0]
    # rank 0 sends [0 | 1 2], rank 1 sends [10 11 | 12]
    assert r0["alltoall_splits"] == [[0, 10, 11], [1, 2]]
    assert r1["alltoall_splits"] == [[1, 2, 12], [2, 1]]
    assert r0["alltoall_equal"] == [0, 1, 10, 11] and r1["alltoall_equal"] == [2, 3, 12, 13]
    # sum of arange(5) * 1 and * 2 = [0, 3, 6, 9, 12]; rank 0 gets 3 rows, rank 1 two (Horovod's split)
    assert r0["reducescatter_sum"] == [0.0, 3.0, 6.0] and r1["reducescatter_sum"] == [9.0, 12.0]
    assert r0["reducescatter_avg"] == [0.0, 1.5, 3.0] and r1["reducescatter_avg"] == [4.5, 6.0]
    # allreduce's gradient is the Sum of the upstream gradients (2 ones), times this rank's factor r + 1
    assert r0["grad_allreduce"] == [2.0, 2.0, 2.0] and r1["grad_allreduce"] == [4.0, 4.0, 4.0]
    # allgather's gradient: every process's upstream gradient summed, this process's rows kept
    assert r0["grad_allgather"] == [2.0] and r1["grad_allgather"] == [4.0, 6.0]


def test_distributed_gradient_tape_and_broadcast_variables() -> None:
    r0, r1 = run_distributed(tape_and_variables, world_size=2, timeout=240)
    for res in (r0, r1):
        assert res["grad"] == [1.5, 1.5]  # (1 + 2) / 2: the average of the processes' gradients
        assert res["sum"] == [3.0, 3.0]
        assert res["predivided"] == [1.5, 1.5]  # the same average, split before/after the sum
        assert res["broadcast"] == [1.0, 10.0]  # rank 1's values
    # a registered local source is not reduced; Horovod divides its gradient by size()
    assert r0["local"] == [0.5] and r1["local"] == [1.0]


def _reference_sgd(
    initial: list[np.ndarray], x: np.ndarray, y: np.ndarray, lrs: list[float], per_update: int = 1, scale: float = 1.0
) -> list[np.ndarray]:
    """Plain SGD on the global batch (rank 0's rows k and rank 1's rows k), Keras's Dense layout.

    With ``per_update`` > 1 the gradients of that many global batches make one update, their
    mean times ``scale``.
    """
    kernel = torch.tensor(initial[0], requires_grad=True)
    bias = torch.tensor(initial[1], requires_grad=True)
    xt, yt = torch.tensor(x), torch.tensor(y)
    step, acc = 0, [torch.zeros_like(kernel), torch.zeros_like(bias)]
    for _ in range(2):  # epochs
        for k in range(2):  # batches of 4 rows on each of the 2 ranks
            rows = [*range(4 * k, 4 * k + 4), *range(8 + 4 * k, 8 + 4 * k + 4)]
            loss = ((xt[rows] @ kernel + bias - yt[rows]) ** 2).mean()
            for a, g in zip(acc, torch.autograd.grad(loss, [kernel, bias])):
                a += g / per_update
            if (k + 1) % per_update == 0:
                with torch.no_grad():
                    kernel -= lrs[step] * scale * acc[0]
                    bias -= lrs[step] * scale * acc[1]
                acc = [torch.zeros_like(kernel), torch.zeros_like(bias)]
                step += 1
    return [kernel.detach().numpy(), bias.detach().numpy()]


def test_keras_fit_with_distributed_optimizer_and_callbacks() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], dtype=np.float32) + 0.3).astype(np.float32)
    r0, r1 = run_distributed(keras_fit, world_size=2, args=(x, y), timeout=240)
    assert r0["optimizer"] == "DistributedOptimizer"
    assert not np.allclose(r0["initial"][0], r1["initial"][0])  # they started apart
    # warm-up over 1 epoch of 2 batches, size 2: lr = 0.1 / 2 * ((b + 1) / 2 + 1) -> 0.075, 0.1; then 0.1
    want = _reference_sgd(r0["initial"], x, y, [0.075, 0.1, 0.1, 0.1])
    for res in (r0, r1):
        for got, ref in zip(res["weights"], want):
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
        assert res["history"]["lr"] == pytest.approx([0.1, 0.1])
    # MetricAverageCallback: every process reports the average of the processes' losses
    assert r0["history"]["loss"] == pytest.approx(r1["history"]["loss"])


@pytest.mark.parametrize("average_aggregated", [True, False], ids=["mean-of-k", "sum-of-k"])
def test_keras_backward_passes_per_step_aggregates_locally(average_aggregated: bool) -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = (x @ np.array([[0.5], [1.0], [-1.0]], dtype=np.float32)).astype(np.float32)
    r0, r1 = run_distributed(keras_fit, world_size=2, args=(x, y, 2, average_aggregated), timeout=240)
    # one update per epoch (2 batches): Horovod's mean (or sum) of the 2 local gradients, averaged over ranks
    want = _reference_sgd(r0["initial"], x, y, [0.1, 0.1], per_update=2, scale=1.0 if average_aggregated else 2.0)
    for res in (r0, r1):
        for got, ref in zip(res["weights"], want):
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_keras_fit_reference_is_sensitive_to_the_warmup() -> None:
    # the reference above would not match with a constant rate: the warm-up really acts
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = x[:, :1].copy()
    init: list[Any] = [np.zeros((3, 1), np.float32), np.zeros(1, np.float32)]
    a = _reference_sgd(init, x, y, [0.075, 0.1, 0.1, 0.1])
    b = _reference_sgd(init, x, y, [0.1] * 4)
    assert not np.allclose(a[0], b[0])


def test_sync_batch_norm_matches_batch_norm_on_the_global_batch() -> None:
    rng = np.random.default_rng(1)
    x = (rng.normal(size=(8, 3)) * [1.0, 3.0, 0.2] + [0.0, 5.0, -1.0]).astype(np.float32)
    x[4:] += 2.0  # the two halves differ: local statistics would give other numbers
    upstream = rng.normal(size=(8, 3)).astype(np.float32)
    r0, r1 = run_distributed(sync_batch_norm, world_size=2, args=(x, upstream), timeout=240)
    ref = torch.nn.BatchNorm1d(3, momentum=0.5)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
        ref.bias.copy_(torch.tensor([0.0, 1.0, -1.0]))
    xt = torch.tensor(x, requires_grad=True)
    out = ref(xt)
    (out * torch.tensor(upstream)).sum().backward()
    for rank, res in enumerate((r0, r1)):
        rows = slice(4 * rank, 4 * (rank + 1))
        np.testing.assert_allclose(res["out"], out.detach().numpy()[rows], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(res["grad"], xt.grad.numpy()[rows], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(res["running"][0], ref.running_mean.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(res["running"][1], ref.running_var.numpy(), rtol=1e-5, atol=1e-6)
    # each rank's weight gradient covers its rows; together they are the global one
    np.testing.assert_allclose(r0["weight_grad"] + r1["weight_grad"], ref.weight.grad.numpy(), rtol=1e-4, atol=1e-5)
