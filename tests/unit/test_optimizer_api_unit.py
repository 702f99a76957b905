"""DistributedOptimizer as a torch.optim.Optimizer (one process) and Horovod's spellings."""

from __future__ import annotations

import pytest
import torch

import unison as hvd
from unison.comm import LocalCommunicator

pytestmark = pytest.mark.timeout(60)


def _opt(**kwargs):
    model = torch.nn.Linear(3, 1)
    inner = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return (
        model,
        inner,
        hvd.DistributedOptimizer(
            inner, named_parameters=model.named_parameters(), communicator=LocalCommunicator(), **kwargs
        ),
    )


def test_is_a_torch_optimizer_delegating_its_state():
    model, inner, opt = _opt()
    assert isinstance(opt, torch.optim.Optimizer)
    assert opt.param_groups is inner.param_groups and opt.state is inner.state
    assert opt.defaults is inner.defaults and opt.defaults["lr"] == 0.1
    model(torch.ones(2, 3)).sum().backward()
    opt.step()
    assert opt.state_dict()["param_groups"] == inner.state_dict()["param_groups"]
    saved = opt.state_dict()
    _, inner2, opt2 = _opt()
    opt2.load_state_dict(saved)
    assert inner2.state_dict()["state"][0]["momentum_buffer"].equal(saved["state"][0]["momentum_buffer"])
    opt.zero_grad()
    assert model.weight.grad is None
    assert "DistributedOptimizer" in repr(opt) and "lr: 0.1" in repr(opt)


def test_lr_schedulers_drive_the_wrapped_optimizer():
    _, inner, opt = _opt()
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
    opt.step()
    sched.step()
    assert inner.param_groups[0]["lr"] == pytest.approx(0.01)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    plateau.step(1.0)
    plateau.step(2.0)
    assert inner.param_groups[0]["lr"] == pytest.approx(0.001)


def test_grad_scaler_steps_and_unscales():
    model, _, opt = _opt(nonfinite="keep")
    scaler = torch.amp.GradScaler("cpu", init_scale=256.0)
    before = model.weight.detach().clone()
    scaler.scale(model(torch.ones(2, 3)).sum()).backward()
    opt.synchronize()
    scaler.unscale_(opt)
    assert model.bias.grad.item() == pytest.approx(2.0)  # unscaled
    with opt.skip_synchronize():
        scaler.step(opt)
    scaler.update()
    assert not torch.equal(before, model.weight)
    opt.zero_grad()
    scaler.scale(model(torch.full((2, 3), float("inf"))).sum()).backward()
    scaler.step(opt)  # overflow: skipped, scale reduced
    scaler.update()
    assert scaler.get_scale() == 128.0


def test_add_param_group_is_synchronised_and_step_hooks_run():
    model, inner, opt = _opt()
    extra = torch.nn.Parameter(torch.ones(2))
    opt.add_param_group({"params": [extra], "lr": 1.0})
    assert len(inner.param_groups) == 2 and any(extra is p for p in opt._trainable)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", o is opt)))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", o is opt)))
    (extra.sum() + model(torch.ones(1, 3)).sum()).backward()
    opt.step()
    assert extra.tolist() == [0.0, 0.0] and calls == [("pre", True), ("post", True)]


def test_horovod_spellings():
    assert hvd.Compression.none is not None and hvd.Compression.fp16 is not None
    assert {hvd.Average, hvd.Sum, hvd.Adasum} == set(hvd.optim.ReduceOp)
    _, _, opt = _opt(gradient_predivide_factor=4.0, op=hvd.Average, compression=hvd.Compression.fp16)
    assert opt._prescale == 0.25
    _, _, plain = _opt(compression=hvd.Compression.fp16)
    assert plain._prescale == 1.0  # one replica: 1 / world_size


def test_bad_predivide_and_double_wrapping():
    with pytest.raises(ValueError, match="only supported with op=unison.Average"):
        _opt(gradient_predivide_factor=2.0, op=hvd.Sum)
    with pytest.raises(ValueError, match="must be a number > 0"):
        _opt(gradient_predivide_factor=0)
    _, _, opt = _opt()
    with pytest.raises(ValueError, match="already a DistributedOptimizer"):
        hvd.DistributedOptimizer(opt)
    with pytest.raises(ValueError, match="nonfinite must be one of"):
        _opt(nonfinite="ignore")


def test_horovod_build_queries():
    assert hvd.gloo_built() is True and hvd.mpi_built() is False
    assert hvd.nccl_built() == torch.distributed.is_nccl_available()
