"""DistributedOptimizer on real replicas: equivalence, buckets, accumulation, compression,
ZeRO-1, safety checks and timeouts that explain (issue: DistributedOptimizer)."""

from __future__ import annotations

import numpy as np
import optim_fns as fns
import pytest

from unison.optim.adasum import adasum_pair
from unison.testing import run_distributed

STEPS, BATCH = 8, 12  # 12 rows split evenly over 2 or 3 replicas


def _assert_close(got: list, want: list, rtol: float) -> None:
    for a, b in zip(got, want):
        assert np.allclose(a, b, rtol=rtol, atol=rtol * np.abs(b).max()), np.abs(a - b).max()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("world", [2, 3])
def test_replicas_equal_one_process_on_the_global_batch(kind: str, world: int) -> None:
    want = fns.reference(kind, STEPS, BATCH)
    for res in run_distributed(fns.train, world, args=(kind, STEPS, BATCH), timeout=120):
        _assert_close(res["params"], want, 1e-6)


@pytest.mark.slow
def test_zeroing_in_place_accumulates_into_the_lent_bucket_views_and_stays_exact() -> None:
    # After a step the gradients are views of the bucket; zero_grad(set_to_none=False) keeps
    # them, backward then accumulates into the bucket itself and pack must not copy over it.
    want = fns.reference("adam", STEPS, BATCH)
    for opts in ({}, {"bucket_cap_mb": 1e-4}):
        for res in run_distributed(fns.train, 2, args=("adam", STEPS, BATCH, opts, False), timeout=120):
            _assert_close(res["params"], want, 1e-6)
            # one host: the buckets live in the shared-memory segment, where backward accumulated
            assert res["in_arena"] and all(res["in_arena"]), res["in_arena"]


@pytest.mark.slow
def test_many_buckets_equal_one_bucket_and_fp16_halves_the_bytes() -> None:
    one, many, fp16 = (
        run_distributed(fns.train, 2, args=("adam", STEPS, BATCH, opts), timeout=120)[0]
        for opts in ({}, {"bucket_cap_mb": 1e-4}, {"compression": "fp16"})
    )
    assert one["buckets"] == 1 and many["buckets"] == 4
    _assert_close(many["params"], one["params"], 1e-6)
    assert one["bytes"] > 0
    # fp16 on the wire: half the bytes (the few flag slots aside)
    assert 0.45 < fp16["bytes"] / one["bytes"] < 0.55
    _assert_close(fp16["params"], one["params"], 5e-2)


@pytest.mark.slow
def test_accumulation_equals_big_batch_and_talks_only_on_the_last_pass() -> None:
    want = run_distributed(fns.train, 2, args=("sgd", 3, BATCH), timeout=120)[0]["params"]
    for res in run_distributed(fns.accumulate, 2, args=(3, BATCH), timeout=120):
        _assert_close(res["params"], fns.reference("sgd", 3, BATCH), 1e-6)
        _assert_close(res["params"], want, 1e-6)
        # per step: passes 1 and 2 issue nothing; the bucket goes out during pass 3 (the very
        # first time after the one-time consistency check)
        assert res["counts"][0:2] == [0, 0] and res["counts"][2] > 1
        assert res["counts"][3:9] == [0, 0, 1, 0, 0, 1]


@pytest.mark.slow
def test_zero1_equals_plain_and_holds_less_state() -> None:
    plain = run_distributed(fns.train, 2, args=("adam", STEPS, BATCH), timeout=120)
    sharded = run_distributed(fns.train, 2, args=("adam", STEPS, BATCH, {"shard_optimizer_state": True}), timeout=120)
    for res in sharded:
        _assert_close(res["params"], plain[0]["params"], 1e-6)
        assert 0 < res["state_bytes"] < plain[0]["state_bytes"]
    assert sum(r["state_bytes"] for r in sharded) == pytest.approx(plain[0]["state_bytes"], rel=0.05)


@pytest.mark.parametrize(
    "what,expected",
    [
        ("value", "different values for parameter '1.bias': ranks [1]"),
        ("shape", "parameter #0 is 0.weight (16, 10) float32 on rank 0 but 0.weight (17, 10)"),
    ],
)
@pytest.mark.slow
def test_inconsistent_replicas_raise_everywhere_naming_the_parameter(what: str, expected: str) -> None:
    for message in run_distributed(fns.inconsistent, 2, args=(what,), timeout=120):
        assert expected in message


@pytest.mark.slow
def test_nonfinite_gradient_raises_everywhere_or_is_skipped_together() -> None:
    for res in run_distributed(fns.nonfinite, 2, args=("raise",), timeout=120):
        assert "on ranks [1] (first: '0.weight' on rank 1)" in res["error"]
    for res in run_distributed(fns.nonfinite, 2, args=("skip",), timeout=120):
        assert res == {"skipped": 1, "unchanged": True}


def test_clipping_uses_the_reduced_gradients() -> None:
    want = fns.reference("sgd", STEPS, BATCH, clip=0.05)
    for res in run_distributed(fns.train, 2, args=("sgd", STEPS, BATCH, {"clip_grad_norm": 0.05}), timeout=120):
        _assert_close(res["params"], want, 1e-6)


def test_parameters_unused_by_some_or_all_replicas_do_not_hang() -> None:
    r0, r1 = run_distributed(fns.partly_unused, 2, timeout=60)
    assert r0["buckets"] > 1
    assert np.array_equal(r0["a"], r1["a"])
    assert r0["b"] is not None and np.array_equal(r0["b"], r1["b"])  # sum over the one user / 2
    assert r0["c"] and r1["c"]  # nobody used c: no gradient, as in one process


@pytest.mark.slow
def test_a_replica_that_does_not_arrive_is_named_within_the_timeout() -> None:
    results = run_distributed(fns.sleeper, 2, args=(1,), timeout=90)
    assert "CollectiveTimeoutError" in results[0]
    assert "gradients.bucket0" in results[0] and "Ranks [1] did not arrive" in results[0]


def test_adasum_combines_like_the_formula() -> None:
    import torch

    want = adasum_pair(torch.tensor([1.0, 0.0, 0.0]), torch.tensor([1.0, 1.0, 0.0])).numpy()
    for res in run_distributed(fns.adasum_grads, 2, timeout=60):
        assert np.allclose(res["grad"], want)


@pytest.mark.slow
@pytest.mark.timeout(1000)
def test_compressed_gradients_still_learn_mnist(mnist_dir) -> None:
    env = {"UNISON_DATA_DIR": str(mnist_dir)}
    acc = {
        c: run_distributed(fns.mnist_compressed, 2, args=(c, c == "bf16"), timeout=300, env=env)
        for c in ("none", "fp16", "bf16")
    }
    for c, (a0, a1) in acc.items():
        assert a0 == a1, c  # replicas hold the same model
    assert acc["none"][0] > 0.85  # 375 steps on 12,000 images
    assert acc["fp16"][0] > acc["none"][0] - 0.01
    assert acc["bf16"][0] > acc["none"][0] - 0.02
