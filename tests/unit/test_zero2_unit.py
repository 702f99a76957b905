"""ZeRO-2's pure parts: the owner plan, and the errors for settings it cannot honour."""

from __future__ import annotations

import pytest
import torch

import unison
from unison.comm import LocalCommunicator
from unison.optim.buckets import plan_buckets
from unison.optim.zero2 import plan_owners

pytestmark = pytest.mark.timeout(60)


def _opt(**kwargs):
    model = torch.nn.Linear(3, 2)
    return unison.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1),
        named_parameters=model.named_parameters(),
        communicator=LocalCommunicator(),
        **kwargs,
    )


def test_plan_gives_every_parameter_one_owner_and_balances_each_bucket():
    params = [torch.nn.Parameter(torch.zeros(n)) for n in (7, 5, 5, 4, 3, 3, 1, 100)]
    buckets = plan_buckets(params, cap_bytes=4 * 20)
    plans = plan_owners(buckets, world_size=3)
    for bucket, plan in zip(buckets, plans):
        owned = sorted(i for seg in plan for i in seg[1:])
        assert owned == list(range(len(bucket.params)))  # each parameter exactly once
        for seg in plan:
            assert seg[0] == sum(bucket.params[i].numel() for i in seg[1:])
        sizes = [seg[0] for seg in plan]
        assert max(sizes) - min(sizes) <= max(p.numel() for p in bucket.params)
    assert plans == plan_owners(buckets, world_size=3)  # deterministic: every replica agrees


@pytest.mark.parametrize(
    "kwargs,expected",
    [
        ({"shard_gradients": "yes"}, "shard_gradients must be True or False. Received: shard_gradients='yes'"),
        ({"shard_gradients": True, "compression": "fp16"}, "without compression or error_feedback. Received:"),
        ({"shard_gradients": True, "op": unison.Adasum}, "it supports op=unison.Average or unison.Sum"),
    ],
)
def test_settings_zero2_cannot_honour_are_errors_naming_the_value(kwargs, expected):
    with pytest.raises(ValueError, match="shard_gradients") as info:
        _opt(**kwargs)
    assert expected in str(info.value)


def test_one_replica_with_shard_gradients_trains_as_plain():
    opt = _opt(shard_gradients=True)
    model_params = [p for g in opt.param_groups for p in g["params"]]
    before = [p.detach().clone() for p in model_params]
    sum(p.sum() for p in model_params).backward()
    opt.step()
    assert all(torch.allclose(b - 0.1, p) for b, p in zip(before, model_params))
    assert opt.zero2 is None and opt.sharded is None  # nothing to shard with one replica
