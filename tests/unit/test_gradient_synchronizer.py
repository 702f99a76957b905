"""One owner of gradient synchronisation: the strategy finds an optimizer's DistributedOptimizer, no flag on it."""

from __future__ import annotations

import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


def _optimizer() -> torch.optim.Optimizer:
    return torch.optim.SGD(torch.nn.Linear(3, 1).parameters(), lr=0.1)


def test_the_strategy_returns_the_distributed_optimizer_that_wraps_a_torch_optimizer() -> None:
    strategy = tf.distribute.get_strategy()
    opt = _optimizer()
    wrapper = tf.DistributedOptimizer(opt, op=tf.Sum, communicator=strategy.extended.communicator)
    assert tf.DistributedOptimizer.of(opt) is wrapper
    assert strategy.gradient_synchronizer(opt) is wrapper  # never a second synchroniser
    assert strategy.gradient_synchronizer(wrapper) is wrapper
    wrapper.remove_hooks()
    assert tf.DistributedOptimizer.of(opt) is None
    made = strategy.gradient_synchronizer(opt, clip_grad_norm=1.0)  # options for the one it makes
    assert made is not wrapper and made.clip_grad_norm == 1.0 and made.op is tf.Sum


def test_stepping_leaves_no_mark_on_the_users_optimizer() -> None:
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = set(vars(opt))
    wrapper = tf.DistributedOptimizer(opt)
    model(torch.ones(2, 3)).sum().backward()
    wrapper.step()
    assert set(vars(opt)) == before
