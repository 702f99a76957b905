"""The model suite's normalisation layers give the op-by-op formulas' results on 1 and 2 replicas.

For each layer the models of ``benchmarks/models_vs_tf.py`` use (ResNet-50's and DCGAN's
BatchNormalization on NHWC, FCN's on ``(batch, steps, channels)``, DCGAN's after a Dense, the
Transformer's LayerNormalization), a global batch is split over the replicas and each runs three
training steps and one inference step. Put together, the replicas' outputs, input gradients, summed
``gamma``/``beta`` gradients and moving statistics must equal Keras's formulas applied to the whole
batch (BatchNormalization is synchronised across replicas in unison: the statistics of the global
batch, exactly one device's). The references are written here from Keras 3's formulas, not from
unison's code; the comparison with Keras itself is the conformance suite's
(``tests/conformance/test_vs_keras_layers*.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from normalization_fns import CASES, STEPS, global_batch, run_cases, start_weights

from unison.testing import run_distributed

pytestmark = pytest.mark.timeout(240)


def _reference(name: str) -> dict[str, Any]:
    """Keras 3's BatchNormalization / LayerNormalization on the whole global batch, op by op."""
    kind, shape, kwargs = CASES[name]
    eps = kwargs.get("epsilon", 1e-3)
    momentum = kwargs.get("momentum", 0.99)
    g0, b0 = start_weights(name)
    gamma = torch.tensor(g0, requires_grad=True)
    beta = torch.tensor(b0, requires_grad=True) if kwargs.get("center", True) else None
    features = shape[-1]
    moving_mean, moving_var = torch.zeros(features), torch.ones(features)
    out: dict[str, Any] = {"y": [], "dx": [], "dparams": [], "moving": []}
    for s in range(STEPS + 1):
        x_np, seed_np = global_batch(name, s)
        x, seed = torch.tensor(x_np, requires_grad=True), torch.tensor(seed_np)
        training = s < STEPS
        if kind == "layer":  # moments of each example over its last axis
            mean, var = x.mean(-1, keepdim=True), ((x - x.mean(-1, keepdim=True)) ** 2).mean(-1, keepdim=True)
        elif training:  # biased moments over every axis but the channels
            dims = tuple(range(x.dim() - 1))
            mean, var = x.mean(dims), ((x - x.mean(dims)) ** 2).mean(dims)
            moving_mean = moving_mean * momentum + mean.detach() * (1 - momentum)
            moving_var = moving_var * momentum + var.detach() * (1 - momentum)
        else:
            mean, var = moving_mean, moving_var
        y = (x - mean) / torch.sqrt(var + eps) * gamma
        if beta is not None:
            y = y + beta
        params = [p for p in (gamma, beta) if p is not None]
        dx, *dparams = torch.autograd.grad((y * seed).sum(), [x, *params])
        out["y"].append(y.detach().numpy())
        out["dx"].append(dx.numpy())
        out["dparams"].append([g.numpy() for g in dparams])
        if kind == "batch":
            out["moving"].append([moving_mean.numpy(), moving_var.numpy()])
    return out


def _check(results: list[dict[str, dict[str, Any]]]) -> None:
    for name in CASES:
        want = _reference(name)
        per_replica = [r[name] for r in results]
        for s in range(STEPS + 1):
            where = f"{name}, step {s} ({'training' if s < STEPS else 'inference'}), {len(results)} replica(s)"
            y = np.concatenate([r["y"][s] for r in per_replica])
            np.testing.assert_allclose(y, want["y"][s], rtol=1e-4, atol=1e-4, err_msg=where)
            dx = np.concatenate([r["dx"][s] for r in per_replica])
            np.testing.assert_allclose(dx, want["dx"][s], rtol=1e-4, atol=1e-4, err_msg=where)
            # each replica holds its rows' share of d(gamma), d(beta): the all-reduce sums them
            for i, g in enumerate(want["dparams"][s]):
                got = sum(r["dparams"][s][i] for r in per_replica)
                np.testing.assert_allclose(got, g, rtol=1e-4, atol=1e-3, err_msg=where)
            for r in per_replica:  # every replica keeps the global batch's moving statistics
                for got, exp in zip(
                    r["moving"][s] if want["moving"] else [], want["moving"][s] if want["moving"] else []
                ):
                    np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-6, err_msg=where)


def test_one_replica_matches_the_op_by_op_reference() -> None:
    _check([run_cases(["/cpu:0"])])


def test_two_replicas_split_one_batch_and_match_the_op_by_op_reference() -> None:
    _check(run_distributed(run_cases, world_size=2, args=(["/cpu:0", "/cpu:1"],), timeout=180))
