"""Keras optimizers without an exact ``torch.optim`` twin: Adadelta, Adamax, Nadam, Lion, Ftrl.

torch's ``Adadelta``, ``Adamax`` and ``NAdam`` differ from Keras in details (torch's Adadelta
defaults to ``lr=1.0`` and ``eps=1e-6``; its Adamax adds ``eps`` differently; its NAdam has a
different momentum-decay schedule), so each update here is Keras 3's rule
(``keras/src/optimizers/*.py``) written as a small ``torch.optim.Optimizer``. Weight decay,
clipping, schedules and the step counter are the base ``Optimizer``'s, as for every optimizer.

Example:
    >>> import torch
    >>> from unison.keras import optimizers
    >>> w = torch.nn.Parameter(torch.tensor([1.0]))
    >>> opt = optimizers.Lion(learning_rate=0.1)
    >>> w.grad = torch.tensor([0.5])
    >>> _ = opt.apply_gradients([(w.grad, w)])
    >>> round(w.item(), 4)
    0.9
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from unison.keras.optimizers.optimizer import Optimizer, OptimizerOptions, ParamList, _for_torch, _number

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Adadelta", "Adamax", "Ftrl", "Lion", "Nadam"]


class _RuleOptimizer(torch.optim.Optimizer):
    """A ``torch.optim.Optimizer`` that applies one Keras update rule to each parameter.

    Subclasses set ``_SLOTS`` (the per-parameter state tensors, zeros like the parameter, in the
    order ``Optimizer.variables`` lists them) and ``_update``; the hyper-parameters live in the
    param groups, as torch's own optimizers keep them (so the object pickles, e.g. for workers).
    """

    _SLOTS: tuple[str, ...] = ()

    def __init__(self, params: ParamList, **defaults: Any) -> None:
        super().__init__(_for_torch(params), defaults)

    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        raise NotImplementedError

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]  # torch's overloads
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "step" not in state:
                    state["step"] = 0
                    for slot in self._SLOTS:
                        if slot not in state:  # a step pre-hook may have set one (ScheduleFreeAdamW's z)
                            initial = group.get(f"initial_{slot}", 0.0)
                            state[slot] = torch.full_like(p, initial, memory_format=torch.preserve_format)
                state["step"] += 1
                self._update(p, p.grad.to(p.dtype), state, group)
        return loss


class _AdadeltaRule(_RuleOptimizer):
    _SLOTS = ("accumulated_grad", "accumulated_delta_var")

    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        rho, eps = group["rho"], group["eps"]
        acc_grad, acc_delta = state["accumulated_grad"], state["accumulated_delta_var"]
        acc_grad.mul_(rho).addcmul_(g, g, value=1.0 - rho)
        delta = -(acc_delta + eps).sqrt() * g / (acc_grad + eps).sqrt()
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1.0 - rho)
        p.add_(delta, alpha=group["lr"])


class _AdamaxRule(_RuleOptimizer):
    _SLOTS = ("momentum", "norm")

    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        b1, b2, eps = group["beta_1"], group["beta_2"], group["eps"]
        m, u = state["momentum"], state["norm"]
        m.lerp_(g, 1.0 - b1)  # m + (1 - b1) (g - m)
        torch.maximum(u * b2, g.abs(), out=u)
        p.sub_(group["lr"] * m / ((1.0 - b1 ** state["step"]) * (u + eps)))


class _NadamRule(_RuleOptimizer):
    _SLOTS = ("momentum", "velocity")

    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        b1, b2, eps = group["beta_1"], group["beta_2"], group["eps"]
        t = state["step"]
        # Keras 3's schedule is 0.96**t; Keras 2's legacy Nadam raises 0.96 to (decay * t), with
        # its `decay` argument (0 by default, so a constant u = b1/2): `schedule_scale` is that factor
        k = group.get("schedule_scale", 1.0)
        u_t = b1 * (1.0 - 0.5 * 0.96 ** (k * t))
        u_next = b1 * (1.0 - 0.5 * 0.96 ** (k * (t + 1)))
        # Keras keeps the product of the u's in one variable (u_product); here per parameter,
        # the same number since every parameter steps every time.
        product = state.get("u_product", 1.0) * u_t
        state["u_product"] = product
        m, v = state["momentum"], state["velocity"]
        m.lerp_(g, 1.0 - b1)
        v.mul_(b2).addcmul_(g, g, value=1.0 - b2)
        m_hat = u_next * m / (1.0 - product * u_next) + (1.0 - u_t) * g / (1.0 - product)
        v_hat = v / (1.0 - b2**t)
        p.sub_(group["lr"] * m_hat / (v_hat.sqrt() + eps))


class _LionRule(_RuleOptimizer):
    _SLOTS = ("momentum",)

    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        b1, b2 = group["beta_1"], group["beta_2"]
        m = state["momentum"]
        p.sub_(group["lr"] * torch.sign(m * b1 + g * (1.0 - b1)))
        m.mul_(b2).add_(g, alpha=1.0 - b2)


class _FtrlRule(_RuleOptimizer):
    _SLOTS = ("accumulator", "linear")

    def _update(self, p: torch.Tensor, g: torch.Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, power = group["lr"], -group["learning_rate_power"]
        l1 = group["l1_regularization_strength"]
        l2 = group["l2_regularization_strength"] + group["beta"] / (2.0 * lr)
        accum, linear = state["accumulator"], state["linear"]
        grad_to_use = g + 2.0 * group["l2_shrinkage_regularization_strength"] * p
        new_accum = accum + g * g
        linear.add_(grad_to_use - (new_accum.pow(power) - accum.pow(power)) / lr * p)
        quadratic = new_accum.pow(power) / lr + 2.0 * l2
        p.copy_((linear.clamp(-l1, l1) - linear) / quadratic)
        accum.copy_(new_accum)


class Adadelta(Optimizer):
    """Adadelta; Keras 3 defaults (``learning_rate=0.001``, ``rho=0.95``, ``epsilon=1e-7``).

    Per step: ``a = rho a + (1 - rho) g**2``; ``d = -sqrt(b + eps) g / sqrt(a + eps)``;
    ``b = rho b + (1 - rho) d**2``; ``w += lr d``.

    Example:
        >>> Adadelta().get_config()["rho"]
        0.95
    """

    _CONFIG = ("rho", "epsilon")

    def __init__(
        self,
        learning_rate: float = 0.001,
        rho: float = 0.95,
        epsilon: float = 1e-7,
        **options: Unpack[OptimizerOptions],
    ) -> None:
        super().__init__(learning_rate, **options)
        self.rho = _number(rho, "rho", high=1.0)
        self.epsilon = _number(epsilon, "epsilon")

    def _make(self, params: ParamList) -> torch.optim.Optimizer:
        return _AdadeltaRule(params, lr=self._learning_rate, rho=self.rho, eps=self.epsilon)


class Adamax(Optimizer):
    """Adamax (Adam with the infinity norm); Keras 3 defaults.

    Per step ``t``: ``m = b1 m + (1 - b1) g``; ``u = max(b2 u, |g|)``;
    ``w -= lr m / ((1 - b1**t) (u + eps))``.

    Example:
        >>> Adamax().get_config()["epsilon"]
        1e-07
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
        return _AdamaxRule(params, lr=self._learning_rate, beta_1=self.beta_1, beta_2=self.beta_2, eps=self.epsilon)


class Nadam(Optimizer):
    """Nadam (Adam with Nesterov momentum, Dozat's momentum schedule); Keras 3 defaults.

    Per step ``t``: ``u_t = b1 (1 - 0.5 * 0.96**t)``, ``P_t = u_1 ... u_t``;
    ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g**2``;
    ``m_hat = u_{t+1} m / (1 - P_t u_{t+1}) + (1 - u_t) g / (1 - P_t)``; ``v_hat = v / (1 - b2**t)``;
    ``w -= lr m_hat / (sqrt(v_hat) + eps)``.

    Example:
        >>> Nadam().get_config()["beta_1"]
        0.9
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
        return _NadamRule(params, lr=self._learning_rate, beta_1=self.beta_1, beta_2=self.beta_2, eps=self.epsilon)


class Lion(Optimizer):
    """Lion (sign of interpolated momentum); Keras 3 defaults (``beta_2=0.99``).

    Per step: ``w -= lr sign(b1 m + (1 - b1) g)``; then ``m = b2 m + (1 - b2) g``.

    Example:
        >>> Lion().get_config()["beta_2"]
        0.99
    """

    _CONFIG = ("beta_1", "beta_2")

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta_1: float = 0.9,
        beta_2: float = 0.99,
        **options: Unpack[OptimizerOptions],
    ) -> None:
        super().__init__(learning_rate, **options)
        if isinstance(beta_1, (int, float)) and not isinstance(beta_1, bool) and beta_1 <= 0:
            raise ValueError(
                "Argument `beta_1` must be in the (0, 1] range. Otherwise, the optimizer "
                f"degenerates to SignSGD. Received: beta_1={beta_1}."
            )
        self.beta_1 = _number(beta_1, "beta_1", low_open=True, high=1.0)
        self.beta_2 = _number(beta_2, "beta_2", high=1.0)

    def _make(self, params: ParamList) -> torch.optim.Optimizer:
        return _LionRule(params, lr=self._learning_rate, beta_1=self.beta_1, beta_2=self.beta_2)


class Ftrl(Optimizer):
    """Follow-the-regularized-leader (FTRL-Proximal, with Keras's L2 shrinkage); Keras 3 defaults.

    Per step, with ``n`` the accumulator (starts at ``initial_accumulator_value``), ``z`` the
    linear term, ``c = -learning_rate_power`` and ``l2' = l2 + beta / (2 lr)``:
    ``n' = n + g**2``; ``z += g + 2 l2_shrinkage w - (n'**c - n**c) / lr * w``;
    ``w = (clip(z, -l1, l1) - z) / (n'**c / lr + 2 l2')``.

    Example:
        >>> Ftrl().get_config()["learning_rate_power"]
        -0.5
    """

    _CONFIG = (
        "learning_rate_power",
        "initial_accumulator_value",
        "l1_regularization_strength",
        "l2_regularization_strength",
        "l2_shrinkage_regularization_strength",
        "beta",
    )

    def __init__(
        self,
        learning_rate: float = 0.001,
        learning_rate_power: float = -0.5,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        l2_shrinkage_regularization_strength: float = 0.0,
        beta: float = 0.0,
        **options: Unpack[OptimizerOptions],
    ) -> None:
        super().__init__(learning_rate, **options)
        self.learning_rate_power = _number(learning_rate_power, "learning_rate_power", low=-math.inf, high=0.0)
        self.initial_accumulator_value = _number(initial_accumulator_value, "initial_accumulator_value")
        self.l1_regularization_strength = _number(l1_regularization_strength, "l1_regularization_strength")
        self.l2_regularization_strength = _number(l2_regularization_strength, "l2_regularization_strength")
        self.l2_shrinkage_regularization_strength = _number(
            l2_shrinkage_regularization_strength, "l2_shrinkage_regularization_strength"
        )
        self.beta = _number(beta, "beta")

    def _make(self, params: ParamList) -> torch.optim.Optimizer:
        return _FtrlRule(
            params,
            lr=self._learning_rate,
            initial_accumulator=self.initial_accumulator_value,
            **{key: getattr(self, key) for key in self._CONFIG if key != "initial_accumulator_value"},
        )
