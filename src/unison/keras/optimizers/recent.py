"""Keras 3's newer update rules: Adafactor, Lamb, Muon and ScheduleFreeAdamW.

Each is Keras 3.15's rule (``keras/src/optimizers/<name>.py``) written as a small
``torch.optim.Optimizer`` on ``adaptive.py``'s per-parameter base, so weight decay, clipping,
schedules, the step counter, ``use_ema`` and the strategies' gradient reduction are the base
``Optimizer``'s, as for every optimizer. Muon applies its own weight decay (two rates: one for the
matrices it orthogonalises, one for the rest).

Example:
    >>> import torch
    >>> from unison.keras import optimizers
    >>> w = torch.nn.Parameter(torch.tensor([3.0, 4.0]))
    >>> opt = optimizers.Lamb(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(torch.tensor([1.0, 1.0]), w)])
    >>> [round(float(x), 3) for x in w]   # the trust ratio scales the step to |w| = 5
    [2.646, 3.646]
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from unison.keras.optimizers.adaptive import _RuleOptimizer
from unison.keras.optimizers.optimizer import ClipOptions, Optimizer, OptimizerOptions, ParamList, _number

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Adafactor", "Lamb", "Muon", "ScheduleFreeAdamW"]


def _rms(x: torch.Tensor) -> torch.Tensor:
    return x.square().mean().sqrt()


class _AdafactorRule(_RuleOptimizer):
    _SLOTS = ("velocity",)

    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        t = float(state["step"])
        lr = group["lr"]
        if group["relative_step"]:
            lr = min(lr, 1.0 / math.sqrt(t))
        rho = min(lr, 1.0 / math.sqrt(t))
        alpha = torch.clamp(_rms(p), min=group["epsilon_2"]) * rho
        g2 = g.square() + group["epsilon_1"]
        beta = 1.0 - t ** group["beta_2_decay"]
        v = state["velocity"]
        if p.dim() >= 2:
            # Factored second moment: a row mean and a column mean instead of the full matrix.
            if "r" not in state:
                state["r"] = torch.zeros(p.shape[:-1], dtype=p.dtype, device=p.device)
                state["c"] = torch.zeros(p.shape[:-2] + p.shape[-1:], dtype=p.dtype, device=p.device)
            r, c = state["r"], state["c"]
            r.mul_(beta).add_(g2.mean(dim=-1), alpha=1.0 - beta)
            c.mul_(beta).add_(g2.mean(dim=-2), alpha=1.0 - beta)
            v.copy_((r / r.mean(dim=-1, keepdim=True)).unsqueeze(-1) * c.unsqueeze(-2))
        else:
            v.mul_(beta).add_(g2, alpha=1.0 - beta)
        u = g / v.sqrt()
        u = u / torch.clamp(_rms(u) / group["clip_threshold"], min=1.0)
        p.sub_(alpha * u)


class _LambRule(_RuleOptimizer):
    _SLOTS = ("momentum", "velocity")

    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        b1, b2, t = group["beta_1"], group["beta_2"], state["step"]
        m, v = state["momentum"], state["velocity"]
        m.lerp_(g, 1.0 - b1)
        v.lerp_(g.square(), 1.0 - b2)
        update = (m / (1.0 - b1**t)) / ((v / (1.0 - b2**t)).sqrt() + group["eps"])
        w_norm, u_norm = torch.linalg.vector_norm(p), torch.linalg.vector_norm(update)
        # The layer-wise trust ratio |w| / |update|, 1 where either norm is zero.
        one = torch.ones((), dtype=p.dtype, device=p.device)
        ratio = torch.where((w_norm > 0) & (u_norm > 0), w_norm / u_norm, one)
        p.sub_(ratio * group["lr"] * update)


class _ScheduleFreeRule(_RuleOptimizer):
    _SLOTS = ("momentum", "velocity")

    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        z, v = state["momentum"], state["velocity"]
        t = float(state["step"])
        b1, b2 = group["beta_1"], group["beta_2"]
        lr = group["lr"]
        if group["warmup_steps"] > 0:
            lr = lr * min(t / group["warmup_steps"], 1.0)
        v.lerp_(g.square(), 1.0 - b2)
        z.sub_(lr * g / ((v / (1.0 - b2**t)).sqrt() + group["eps"]))
        # y (the weights) = (1 - b1) z + b1 x; x is the running average of the z's. Keras 3.15
        # recovers x from the z it has just updated (its `momentum_old` is the variable, read
        # after the assignment), not the previous z as the paper does: so does this, to step
        # the same numbers.
        x_old = (p - (1.0 - b1) * z) / b1
        weight = 1.0 / t
        x_new = (1.0 - weight) * x_old + weight * z
        p.copy_((1.0 - b1) * z + b1 * x_new)


def _newton_schulz(x: torch.Tensor, steps: int, a: float, b: float, c: float) -> torch.Tensor:
    """Keras's quintic Newton-Schulz iteration towards the orthogonal factor ``U V^T`` of ``x``."""
    tall = x.shape[-2] > x.shape[-1]
    if tall:
        x = x.transpose(-2, -1)
    x = x / (torch.linalg.matrix_norm(x, keepdim=True) + 1e-7)
    for _ in range(steps):
        gram = x @ x.transpose(-2, -1)
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.transpose(-2, -1) if tall else x


class _MuonRule(_RuleOptimizer):
    _SLOTS = ("momentum",)

    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        adam = group["adamw"]
        decay = group["adam_weight_decay"] if adam else group["muon_weight_decay"]
        if decay:
            p.mul_(1.0 - decay * group["lr"])  # Keras's decoupled decay, before the update
        m = state["momentum"]
        if adam:
            if "velocity" not in state:
                state["velocity"] = torch.zeros_like(p)
            v, t = state["velocity"], state["step"]
            b1, b2 = group["adam_beta_1"], group["adam_beta_2"]
            lr = group["lr"] * group["adam_lr_ratio"]
            alpha = lr * math.sqrt(1.0 - b2**t) / (1.0 - b1**t)
            m.lerp_(g, 1.0 - b1)
            v.lerp_(g.square(), 1.0 - b2)
            p.sub_(m * alpha / (v.sqrt() + group["eps"]))
            return
        mu = group["momentum"]
        m.mul_(mu).add_(g)
        direction = g + mu * m if group["nesterov"] else m
        update = group["lr"] * _newton_schulz(direction, group["ns_steps"], *group["abc"])
        if group["rms_rate"] is not None:
            # Moonlight's scaling: the update's RMS matches Adam's, so Adam's rate and decay carry over.
            update = update * math.sqrt(max(p.shape[0], p.shape[1])) * group["rms_rate"]
        p.sub_(update)


def _path_of(variable: torch.Tensor) -> str:
    """The name Keras matches ``exclude_layers`` against: the variable's ``path``, else its name."""
    path = getattr(variable, "path", None) or getattr(variable, "name", None) or ""
    return str(path)


class Adafactor(Optimizer):
    """Adafactor: Adam-like steps with a factored (row x column) second moment; Keras 3 defaults.

    Per step ``t``: ``rho = min(lr, 1/sqrt(t))`` (with ``relative_step`` and a constant rate the
    rate itself is also capped at ``1/sqrt(t)``), ``alpha = max(epsilon_2, rms(w)) * rho``,
    ``b = 1 - t**beta_2_decay``; for a matrix ``r``/``c`` are moving means of ``g**2 + epsilon_1``
    over its last/second-last axis and ``v = r / mean(r) x c``, otherwise ``v`` is the moving mean
    itself; ``u = g / sqrt(v)`` clipped to RMS ``clip_threshold``; ``w -= alpha * u``.

    Example:
        >>> Adafactor().get_config()["beta_2_decay"]
        -0.8
    """

    _CONFIG = ("beta_2_decay", "epsilon_1", "epsilon_2", "clip_threshold", "relative_step")

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta_2_decay: float = -0.8,
        epsilon_1: float = 1e-30,
        epsilon_2: float = 1e-3,
        clip_threshold: float = 1.0,
        relative_step: bool = True,
        **options: Unpack[OptimizerOptions],
    ) -> None:
        super().__init__(learning_rate, **options)
        self.beta_2_decay = _number(beta_2_decay, "beta_2_decay", low=-math.inf, high=0.0)
        self.epsilon_1 = _number(epsilon_1, "epsilon_1")
        self.epsilon_2 = _number(epsilon_2, "epsilon_2")
        self.clip_threshold = _number(clip_threshold, "clip_threshold", low_open=True)
        self.relative_step = bool(relative_step)

    def _make(self, params: ParamList) -> torch.optim.Optimizer:
        return _AdafactorRule(
            params,
            lr=self._learning_rate,
            relative_step=self.relative_step and self._schedule is None,
            **{key: getattr(self, key) for key in self._CONFIG if key != "relative_step"},
        )

    def _before_step(self, iterations: int) -> None:
        # Keras caps only a constant rate: a schedule set after build switches the cap off.
        if self._torch_optimizer is not None:
            for group in self._torch_optimizer.param_groups:
                group["relative_step"] = self.relative_step and self._schedule is None


class Lamb(Optimizer):
    """Lamb: Adam's direction scaled per tensor by the trust ratio ``|w| / |update|``; Keras 3 defaults.

    Per step ``t``: ``m``, ``v`` as Adam's; ``u = m_hat / (sqrt(v_hat) + eps)``;
    ``w -= r * lr * u`` with ``r = |w| / |u|`` (1 when either norm is 0).

    Example:
        >>> Lamb().get_config()["beta_2"]
        0.999
    """

    _CONFIG = ("beta_1", "beta_2", "epsilon")

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-7,
        **options: Unpack[OptimizerOptions],
    ) -> None:
        super().__init__(learning_rate, **options)
        self.beta_1 = _number(beta_1, "beta_1", high=1.0, high_open=True)
        self.beta_2 = _number(beta_2, "beta_2", high=1.0, high_open=True)
        self.epsilon = _number(epsilon, "epsilon")

    def _make(self, params: ParamList) -> torch.optim.Optimizer:
        return _LambRule(params, lr=self._learning_rate, beta_1=self.beta_1, beta_2=self.beta_2, eps=self.epsilon)


class ScheduleFreeAdamW(Optimizer):
    """Schedule-free AdamW (Defazio et al. 2024); Keras 3 defaults (``learning_rate=0.0025``).

    Keeps ``z`` (Keras's ``momentum`` slot, starting at the weights) and Adam's ``v``; per step
    ``t`` (rate warmed up linearly over ``warmup_steps``): ``z -= lr g / (sqrt(v_hat) + eps)``;
    ``x`` (recovered from the weights ``y = (1 - b1) z + b1 x`` with the new ``z``, as Keras 3.15
    does) becomes the running average
    ``(1 - 1/t) x + z / t``; the weights become ``(1 - b1) z + b1 x``.

    Example:
        >>> ScheduleFreeAdamW().get_config()["warmup_steps"]
        0
    """

    _CONFIG = ("beta_1", "beta_2", "epsilon", "warmup_steps")

    def __init__(
        self,
        learning_rate: float = 0.0025,
        beta_1: float = 0.9,
        beta_2: float = 0.999,
        epsilon: float = 1e-8,
        warmup_steps: int = 0,
        **options: Unpack[OptimizerOptions],
    ) -> None:
        super().__init__(learning_rate, **options)
        # beta_1 divides (x = (y - (1 - b1) z) / b1): 0 would make every weight NaN.
        self.beta_1 = _number(beta_1, "beta_1", high=1.0, low_open=True, high_open=True)
        self.beta_2 = _number(beta_2, "beta_2", high=1.0, high_open=True)
        self.epsilon = _number(epsilon, "epsilon")
        if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int) or warmup_steps < 0:
            raise ValueError(
                f"Argument `warmup_steps` must be an integer >= 0. Received: warmup_steps={warmup_steps!r}"
            )
        self.warmup_steps = warmup_steps

    def _make(self, params: ParamList) -> torch.optim.Optimizer:
        rule = _ScheduleFreeRule(
            params,
            lr=self._learning_rate,
            beta_1=self.beta_1,
            beta_2=self.beta_2,
            eps=self.epsilon,
            warmup_steps=self.warmup_steps,
        )
        # Registered before the base's weight-decay hook, so z starts at the undecayed weights, as
        # Keras copies them when it builds, before its first decay.
        rule.register_step_pre_hook(_start_z_at_the_weights)
        return rule


def _start_z_at_the_weights(optimizer: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
    with torch.no_grad():
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None and "momentum" not in optimizer.state[p]:
                    optimizer.state[p]["momentum"] = p.detach().clone(memory_format=torch.preserve_format)


class Muon(Optimizer):
    """Muon: momentum orthogonalised by Newton-Schulz for 2-D weights, AdamW for the rest; Keras 3 defaults.

    A weight takes the AdamW step (rate ``learning_rate * adam_lr_ratio``, decay
    ``adam_weight_decay``) when it is not 2-D, when ``exclude_embeddings`` and its path names an
    embedding, or when a pattern of ``exclude_layers`` is found in its path (``re.search``); the
    path is the variable's ``path`` attribute, else its ``name``. Every other weight:
    ``m = momentum m + g``; ``d = g + momentum m`` (``nesterov``) or ``m``;
    ``w -= lr * NS5(d) * sqrt(max(rows, cols)) * rms_rate`` (decay ``weight_decay`` first).

    Example:
        >>> Muon().get_config()["ns_steps"]
        5
    """

    _CONFIG = (
        "adam_beta_1",
        "adam_beta_2",
        "epsilon",
        "exclude_layers",
        "muon_a",
        "muon_b",
        "muon_c",
        "adam_lr_ratio",
        "momentum",
        "ns_steps",
        "nesterov",
        "exclude_embeddings",
        "adam_weight_decay",
        "rms_rate",
    )

    def __init__(
        self,
        learning_rate: float = 0.001,
        adam_beta_1: float = 0.9,
        adam_beta_2: float = 0.999,
        adam_weight_decay: float | None = 0.004,
        epsilon: float = 1e-7,
        weight_decay: float | None = 0.004,
        exclude_layers: Sequence[str] | None = None,
        exclude_embeddings: bool = True,
        muon_a: float = 3.4445,
        muon_b: float = -4.7750,
        muon_c: float = 2.0315,
        adam_lr_ratio: float = 1.0,
        momentum: float = 0.95,
        ns_steps: int = 5,
        nesterov: bool = True,
        rms_rate: float | None = 0.2,
        **options: Unpack[ClipOptions],
    ) -> None:
        super().__init__(learning_rate, weight_decay=weight_decay, **options)
        self.adam_beta_1 = _number(adam_beta_1, "adam_beta_1", high=1.0, high_open=True)
        self.adam_beta_2 = _number(adam_beta_2, "adam_beta_2", high=1.0, high_open=True)
        self.adam_weight_decay = None if adam_weight_decay is None else _number(adam_weight_decay, "adam_weight_decay")
        self.epsilon = _number(epsilon, "epsilon")
        if exclude_layers is not None and (
            isinstance(exclude_layers, str) or not all(isinstance(k, str) for k in exclude_layers)
        ):
            raise TypeError(
                "Argument `exclude_layers` must be a list of strings (patterns searched in variable paths). "
                f"Received: exclude_layers={exclude_layers!r}"
            )
        self.exclude_layers = list(exclude_layers or [])
        self.exclude_embeddings = bool(exclude_embeddings)
        self.muon_a = _number(muon_a, "muon_a", low=-math.inf)
        self.muon_b = _number(muon_b, "muon_b", low=-math.inf)
        self.muon_c = _number(muon_c, "muon_c", low=-math.inf)
        self.adam_lr_ratio = _number(adam_lr_ratio, "adam_lr_ratio")
        self.momentum = _number(momentum, "momentum", high=1.0)
        if isinstance(ns_steps, bool) or not isinstance(ns_steps, int) or ns_steps < 0:
            raise ValueError(f"Argument `ns_steps` must be an integer >= 0. Received: ns_steps={ns_steps!r}")
        self.ns_steps = ns_steps
        self.nesterov = bool(nesterov)
        self.rms_rate = None if rms_rate is None else _number(rms_rate, "rms_rate")

    _OWN_DECAY = True  # two rates, applied in the rule

    def uses_adamw(self, variable: torch.Tensor) -> bool:
        """Whether ``variable`` takes the AdamW step (Keras's ``_should_use_adamw``)."""
        if variable.dim() != 2:
            return True
        path = _path_of(variable)
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in self.exclude_layers)

    def _make(self, params: ParamList) -> torch.optim.Optimizer:
        # Two param groups per given group: the weights that take the AdamW step and the rest.
        groups: list[dict[str, Any]] = []
        for item in params:
            base = dict(item) if isinstance(item, dict) else {"params": [item]}
            tensors = list(base.pop("params"))
            for adamw in (False, True):
                chosen = [t for t in tensors if self.uses_adamw(t) == adamw]
                if chosen:
                    groups.append({**base, "params": chosen, "adamw": adamw})
        return _MuonRule(
            list(groups),
            lr=self._learning_rate,
            adamw=False,
            adam_weight_decay=self.adam_weight_decay,
            muon_weight_decay=self.weight_decay,
            adam_beta_1=self.adam_beta_1,
            adam_beta_2=self.adam_beta_2,
            adam_lr_ratio=self.adam_lr_ratio,
            eps=self.epsilon,
            momentum=self.momentum,
            nesterov=self.nesterov,
            ns_steps=self.ns_steps,
            abc=(self.muon_a, self.muon_b, self.muon_c),
            rms_rate=self.rms_rate,
        )
