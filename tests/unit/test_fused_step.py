"""DirectAdam (optim/fused_step.py): torch's fused Adam kernel called straight does exactly what
``opt.step()`` does, and falls back to ``opt.step()`` wherever the shortcut could differ."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from unison.optim.fused_step import DirectAdam

pytestmark = pytest.mark.timeout(60)


def _params(seed: int = 0) -> list[torch.nn.Parameter]:
    g = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(s, generator=g)) for s in ((7, 5), (5,), (5, 3), (3,))]


def _grads(step: int, params: list[torch.nn.Parameter]) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(100 + step)
    return [torch.randn(p.shape, generator=g) for p in params]


@pytest.mark.parametrize(
    "make",
    [
        lambda ps: torch.optim.Adam(ps, lr=1e-2, eps=1e-7, fused=True),
        lambda ps: torch.optim.Adam(ps, lr=1e-2, weight_decay=0.1, maximize=True, fused=True),
        lambda ps: torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.05, fused=True),
    ],
    ids=["adam", "adam-l2-maximize", "adamw"],
)
def test_direct_steps_are_bit_identical_to_step(make):
    ref_p, dir_p = _params(), _params()
    ref, opt = make(ref_p), make(dir_p)
    direct = DirectAdam.of(opt)
    assert direct is not None
    for step in range(6):
        for ps in (ref_p, dir_p):
            for p, g in zip(ps, _grads(step, ps)):
                p.grad = g
        ref.step()
        if not direct.step():
            opt.step()
    assert direct.direct_steps == 5  # the first step builds the state through step()
    for a, b in zip(ref_p, dir_p):
        assert torch.equal(a, b)
    for a, b in zip(ref_p, dir_p):
        sa, sb = ref.state[a], opt.state[b]
        assert torch.equal(sa["step"], sb["step"]) and float(sb["step"]) == 6
        assert torch.equal(sa["exp_avg"], sb["exp_avg"]) and torch.equal(sa["exp_avg_sq"], sb["exp_avg_sq"])


def _stepped_adam() -> tuple[list[torch.nn.Parameter], torch.optim.Adam, DirectAdam]:
    ps = _params()
    opt = torch.optim.Adam(ps, lr=1e-2, fused=True)
    for p, g in zip(ps, _grads(0, ps)):
        p.grad = g
    opt.step()
    direct = DirectAdam.of(opt)
    assert direct is not None and direct.step()  # the shortcut applies before each change below
    return ps, opt, direct


def test_not_built_for_other_optimizers():
    ps = _params()
    assert DirectAdam.of(torch.optim.Adam(ps, lr=1e-2)) is None  # not fused
    assert DirectAdam.of(torch.optim.SGD(ps, lr=1e-2)) is None
    two_groups = torch.optim.Adam([{"params": ps[:2]}, {"params": ps[2:], "lr": 1.0}], fused=True)
    assert DirectAdam.of(two_groups) is None


def test_falls_back_with_hooks_scheduler_missing_grad_or_tensor_lr():
    ps, opt, direct = _stepped_adam()
    handle = opt.register_step_post_hook(lambda *a: None)
    assert not direct.step()
    handle.remove()
    assert direct.step()
    ps[1].grad = None
    assert not direct.step()  # step() would skip that parameter: leave it to step()
    ps[1].grad = torch.ones_like(ps[1])
    opt.param_groups[0]["lr"] = torch.tensor(1e-2)
    assert not direct.step()
    opt.param_groups[0]["lr"] = 1e-2
    torch.optim.lr_scheduler.StepLR(opt, step_size=1)  # patches opt.step to count its calls
    assert not direct.step()


def test_reads_the_state_again_after_load_state_dict():
    ps, opt, direct = _stepped_adam()
    saved = copy.deepcopy(opt.state_dict())
    ref_p, ref_opt, _ = _stepped_adam()
    opt.load_state_dict(saved)  # new state tensors: the lists must be read again
    ref_opt.load_state_dict(copy.deepcopy(saved))
    with torch.no_grad():
        for a, b in zip(ps, ref_p):
            a.copy_(b)
    for step in range(1, 4):
        for qs in (ps, ref_p):
            for p, g in zip(qs, _grads(step, qs)):
                p.grad = g
        assert direct.step()
        ref_opt.step()
    for a, b in zip(ps, ref_p):
        assert torch.equal(a, b)
    assert opt.state[ps[0]]["exp_avg"] is direct.exp_avgs[0]


def test_fit_with_adam_uses_the_kernel_and_matches_step(monkeypatch):
    """The seed model's fit (one replica) takes the direct path and ends on the same weights."""
    from unison import keras

    def train() -> list[np.ndarray]:
        keras.utils.set_random_seed(3)
        model = keras.Sequential(
            [keras.layers.Dense(16, activation="relu", input_shape=(12,)), keras.layers.Dense(4, activation="softmax")]
        )
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        rng = np.random.default_rng(0)
        x, y = rng.random((96, 12), dtype=np.float32), rng.integers(0, 4, 96)
        model.fit(x, y, epochs=2, batch_size=16, verbose=0)
        return [w.copy() for w in model.get_weights()]

    calls = []
    original = DirectAdam.step

    def counting(self: DirectAdam) -> bool:
        done = original(self)
        calls.append(done)
        return done

    monkeypatch.setattr(DirectAdam, "step", counting)
    direct = train()
    assert calls.count(True) == 11 and calls.count(False) == 1  # 12 steps, the first builds the state
    monkeypatch.setattr(DirectAdam, "step", lambda self: False)
    through_step = train()
    for a, b in zip(direct, through_step):
        np.testing.assert_array_equal(a, b)


def _permuted(t: torch.Tensor) -> torch.Tensor:
    """``t`` with the same shape and values, stored channels-last as Keras's conv kernels are."""
    return t.permute(3, 0, 1, 2).contiguous().permute(1, 2, 3, 0)


@pytest.mark.parametrize("grad_layout", ["param's", "contiguous"])
def test_a_permuted_parameter_is_stepped_as_a_contiguous_view_with_no_copy(grad_layout):
    g = torch.Generator().manual_seed(0)
    start = torch.randn(3, 3, 4, 6, generator=g)
    ref_p = torch.nn.Parameter(start.clone())  # contiguous: torch's kernel needs no help
    dir_p = torch.nn.Parameter(_permuted(start))
    assert not dir_p.is_contiguous()
    ref = torch.optim.Adam([ref_p], lr=0.1, fused=True)
    opt = torch.optim.Adam([dir_p], lr=0.1, fused=True)
    direct = DirectAdam.of(opt)
    for step in range(5):
        grad = torch.randn(start.shape, generator=g)
        ref_p.grad = grad.clone()
        dir_p.grad = _permuted(grad) if grad_layout == "param's" or step == 0 else grad.clone()
        ref.step()
        if step == 0:
            # builds the state (torch's own step needs the gradient in the parameter's layout,
            # as backward gives it: with a contiguous one it would update the wrong elements)
            opt.step()
            continue
        with torch.profiler.profile(record_shapes=True) as prof:
            assert direct.step()
        copies = [  # of the parameter-sized tensors (the step counter's increment copies a scalar)
            e.name for e in prof.events() if e.name in ("aten::clone", "aten::copy_") and e.input_shapes[0]
        ]
        # the gradient in the parameter's own layout is used as it is; a contiguous one is
        # reordered once (torch's kernel would pair the elements by memory order)
        assert copies == ([] if grad_layout == "param's" else ["aten::copy_"])
    assert torch.equal(ref_p.detach(), dir_p.detach())
    assert dir_p.stride() == _permuted(start).stride()  # the parameter keeps its storage order
    assert torch.equal(ref.state[ref_p]["exp_avg_sq"], opt.state[dir_p]["exp_avg_sq"])
