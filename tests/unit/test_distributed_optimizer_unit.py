"""DistributedOptimizer alone (one process): argument errors, accumulation, skip policy, buckets."""

from __future__ import annotations

import pytest
import torch

import unison
from unison.comm import LocalCommunicator
from unison.optim.buckets import plan_buckets
from unison.optim.zero import partition


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))


def _wrap(model: torch.nn.Module, **kw) -> unison.DistributedOptimizer:
    return unison.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=0.1),
        named_parameters=model.named_parameters(),
        communicator=LocalCommunicator(),
        **kw,
    )


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_backward_passes_per_step_below_one(k) -> None:
    with pytest.raises(ValueError, match=r"backward_passes_per_step must be an integer >= 1. Received"):
        _wrap(_model(), backward_passes_per_step=k)


def test_unknown_op_and_compression() -> None:
    with pytest.raises(ValueError, match=r"Unknown op 'mean'.*unison.Average"):
        _wrap(_model(), op="mean")
    with pytest.raises(ValueError, match=r"Unknown compression 'int8'.*'bf16', 'fp16', 'none'"):
        _wrap(_model(), compression="int8")
    with pytest.raises(ValueError, match="nonfinite must be one of"):
        _wrap(_model(), nonfinite="ignore")


def test_named_parameters_mistakes() -> None:
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(ValueError, match=r"must be \(name, tensor\) pairs"):
        unison.DistributedOptimizer(opt, named_parameters=list(model.parameters()))
    pairs = list(model.named_parameters())
    with pytest.raises(ValueError, match=r"duplicate names: \['0.weight'\]"):
        unison.DistributedOptimizer(opt, named_parameters=[pairs[0], ("0.weight", pairs[1][1])])
    stranger = torch.nn.Linear(2, 2)
    with pytest.raises(
        ValueError, match=r"\['extra.weight'\] are in named_parameters but not in the wrapped optimizer"
    ):
        unison.DistributedOptimizer(opt, named_parameters=pairs + [("extra.weight", stranger.weight)])


def test_wrapping_something_that_is_not_an_optimizer() -> None:
    with pytest.raises(TypeError, match="wraps a torch.optim.Optimizer. Received: Sequential"):
        unison.DistributedOptimizer(_model())  # type: ignore[arg-type]


def test_local_accumulation_averages_the_passes_and_counts_them() -> None:
    model, ref = _model(), _model()
    opt = _wrap(model, backward_passes_per_step=2)
    x = torch.randn(6, 4)
    for part in x.chunk(2):
        model(part).sum().backward()
    with pytest.raises(RuntimeError, match="computed 3 times before step"):
        model(x[:1]).sum().backward()
    opt.zero_grad()
    for part in x.chunk(2):
        model(part).sum().backward()
    opt.step()
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    (ref(x).sum() / 2).backward()
    ref_opt.step()
    for a, b in zip(model.parameters(), ref.parameters()):
        assert torch.allclose(a, b, atol=1e-6)


def test_skip_policy_leaves_parameters_untouched() -> None:
    model = _model()
    before = [p.detach().clone() for p in model.parameters()]
    opt = _wrap(model, nonfinite="skip")
    (model(torch.randn(2, 4)).sum() * float("inf")).backward()
    opt.step()
    assert opt.skipped_steps == 1
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    raising = _wrap(_model())
    m = raising.optimizer.param_groups[0]["params"]
    (sum(p.sum() for p in m) * float("nan")).backward()
    with pytest.raises(unison.optim.NonFiniteGradientError, match="on ranks \\[0\\]"):
        raising.step()


def test_skip_synchronize_and_manual_synchronize() -> None:
    model = _model()
    opt = _wrap(model, clip_grad_norm=1e-3)
    (model(torch.randn(3, 4)).sum() * 100).backward()
    opt.synchronize()
    total = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    assert total <= 1e-3 * 1.0001
    with opt.skip_synchronize():
        opt.step()


def test_buckets_are_reverse_order_and_capped() -> None:
    params = [torch.nn.Parameter(torch.zeros(n)) for n in (100, 100, 100)]
    buckets = plan_buckets(params, cap_bytes=800)
    assert [len(b.params) for b in buckets] == [2, 1]
    assert buckets[0].params[0] is params[2]


def test_zero_partition_balances_sizes() -> None:
    sizes = [torch.zeros(n) for n in (50, 40, 30, 20, 10)]
    owner = partition(sizes, 2)
    loads = [sum(t.numel() for t, o in zip(sizes, owner) if o == r) for r in range(2)]
    assert sorted(loads) == [70, 80]


@pytest.mark.parametrize("every", [-1, 2.5, True, "10"])
def test_recheck_every_must_be_a_count(every) -> None:
    with pytest.raises(ValueError, match=r"recheck_every must be an integer >= 0. Received: recheck_every="):
        _wrap(_model(), recheck_every=every)
