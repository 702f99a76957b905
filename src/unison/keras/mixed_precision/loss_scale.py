"""``keras.mixed_precision.LossScaleOptimizer``: dynamic loss scaling for float16 training.

float16 keeps about 5 significant decimal digits between 6e-8 and 65504: small gradients of
activations round to zero (underflow). Multiplying the loss by a large ``scale`` before
``backward()`` lifts them into range; the optimizer divides the gradients by the same scale
before the update. The scale is dynamic, as in Keras 3: a step whose gradients hold Inf/NaN
is skipped and the scale halves; after ``dynamic_growth_steps`` finite steps in a row it
doubles.

Across replicas the skip is one decision: under a strategy the gradients are reduced by
:class:`~unison.optim.DistributedOptimizer` with ``nonfinite="skip"``, whose non-finite flag
travels with every gradient bucket, so every replica skips the same step and keeps the same
scale.

Example:
    >>> from unison import keras
    >>> opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=8.0)
    >>> opt.update_scale(False); opt.dynamic_scale
    4.0
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import torch

from unison.keras import optimizers as optimizers_mod
from unison.keras.optimizers.optimizer import Optimizer, Params, _flatten


class LossScaleOptimizer(Optimizer):
    """Wraps a Keras optimizer with dynamic loss scaling.

    Args:
        inner_optimizer: the optimizer that updates the variables (an ``Optimizer`` or name).
        initial_scale: the first loss scale (Keras's default ``2**15``).
        dynamic_growth_steps: double the scale after this many finite steps in a row (2000).
        name: a name for logs.
        dynamic: Keras 2's switch (keyword only): ``False`` keeps ``initial_scale`` fixed, which
            must then be given, without ``dynamic_growth_steps``.

    Contract: ``fit`` multiplies the loss by :attr:`dynamic_scale` before ``backward()``;
    :meth:`clip_gradients` (called after the cross-replica reduction, before the update)
    divides the gradients by it, then clips as the inner optimizer is configured;
    :meth:`update_scale` is told whether the step was finite on every replica.
    """

    def __init__(
        self,
        inner_optimizer: Any,
        initial_scale: float | None = None,
        dynamic_growth_steps: int | None = None,
        name: str | None = None,
        *,
        dynamic: bool = True,
        **kwargs: Any,
    ) -> None:
        if not isinstance(dynamic, bool):
            raise TypeError(
                f'"dynamic" argument to LossScaleOptimizer.__init__ must be a bool, but got: {dynamic!r}. '
                "Pass dynamic=False with initial_scale=<the fixed scale> for Keras 2's fixed loss scale."
            )
        if not dynamic:
            # Keras 2's fixed scale: no growth, no halving
            if initial_scale is None:
                raise ValueError('"initial_scale" must be specified if "dynamic" is False')
            if dynamic_growth_steps is not None:
                raise ValueError(
                    f'"dynamic_growth_steps" must be None if "dynamic" is False, but got: {dynamic_growth_steps}'
                )
        initial_scale = 2.0**15 if initial_scale is None else initial_scale
        dynamic_growth_steps = 2000 if dynamic_growth_steps is None else dynamic_growth_steps
        if kwargs:
            raise TypeError(f"LossScaleOptimizer got unexpected keyword arguments: {sorted(kwargs)}.")
        inner = optimizers_mod.get(inner_optimizer)
        if isinstance(inner, LossScaleOptimizer):
            raise TypeError(
                "LossScaleOptimizer cannot wrap another LossScaleOptimizer. "
                f"Received: inner_optimizer={inner_optimizer!r}"
            )
        if not (isinstance(initial_scale, (int, float)) and math.isfinite(initial_scale) and initial_scale > 0):
            raise ValueError(
                f"`initial_scale` must be a positive finite number. Received: initial_scale={initial_scale!r}"
            )
        if (
            isinstance(dynamic_growth_steps, bool)
            or not isinstance(dynamic_growth_steps, int)
            or dynamic_growth_steps < 1
        ):
            raise ValueError(
                "`dynamic_growth_steps` must be an integer >= 1. "
                f"Received: dynamic_growth_steps={dynamic_growth_steps!r}"
            )
        super().__init__(inner.learning_rate, name=name or "loss_scale_optimizer")
        self.inner_optimizer = inner
        self.initial_scale = float(initial_scale)
        self.dynamic = dynamic
        self.dynamic_growth_steps = dynamic_growth_steps
        self.dynamic_scale = float(initial_scale)
        self.step_counter = 0  # finite steps since the scale last changed
        self.skipped_steps = 0
        self._custom_loop_finite: bool | None = None  # set while apply_gradients runs

    # --- the inner optimizer does the work ------------------------------------------------------
    def build(self, params: Params) -> torch.optim.Optimizer:
        self._torch_optimizer = self.inner_optimizer.build(params)
        return self._torch_optimizer

    def _before_step(self, iterations: int) -> None:
        self.inner_optimizer._before_step(iterations)  # Adam's per-step epsilon

    def prebuild(self, params: Params) -> None:
        self.inner_optimizer.prebuild(params)
        self._torch_optimizer = self.inner_optimizer.torch_optimizer

    @property
    def torch_optimizer(self) -> torch.optim.Optimizer | None:
        return self.inner_optimizer.torch_optimizer

    @property  # type: ignore[override]
    def learning_rate(self) -> float:
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self.inner_optimizer.learning_rate = value

    # --- scaling ----------------------------------------------------------------------------------
    def scale_loss(self, loss: torch.Tensor) -> torch.Tensor:
        """``loss * dynamic_scale`` (what ``backward()`` runs on)."""
        return loss * self.dynamic_scale

    def apply_gradients(
        self,
        grads_and_vars: Any,
        name: str | None = None,
        skip_gradients_aggregation: bool = False,
        **kwargs: Any,
    ) -> torch.Tensor:
        """Keras 3's custom-loop step: gradients of the scaled loss in, the inner optimizer's update out.

        A step whose (cross-replica reduced) gradients hold Inf/NaN changes no weight and does not
        count in ``iterations``; the scale halves. Otherwise the gradients are divided by the scale
        and the scale doubles after ``dynamic_growth_steps`` finite steps in a row.
        """
        self._custom_loop_finite = True
        try:
            iterations = super().apply_gradients(grads_and_vars, name, skip_gradients_aggregation, **kwargs)
            if not self._custom_loop_finite:
                self._counter.count.sub_(1)  # a skipped step is no iteration, as in Keras
            self.update_scale(bool(self._custom_loop_finite))
        finally:
            self._custom_loop_finite = None
        return iterations

    def clip_gradients(self, params: Params) -> None:
        """Divide the (reduced) gradients by the scale, then clip as the inner optimizer does."""
        params = list(params)
        if self._custom_loop_finite is not None:
            # apply_gradients (fit skips through its DistributedOptimizer instead): the reduced
            # gradients are the same on every replica, so every replica takes the same decision.
            grads = [p.grad for p in _flatten(params) if p.grad is not None]
            self._custom_loop_finite = all(bool(torch.isfinite(g).all()) for g in grads)
            if not self._custom_loop_finite:
                for p in _flatten(params):
                    p.grad = None  # torch optimizers leave a parameter without a gradient as it is
                return
        inv = 1.0 / self.dynamic_scale
        with torch.no_grad():
            for p in _flatten(params):
                if p.grad is not None:
                    p.grad.mul_(inv)
        self.inner_optimizer.clip_gradients(params)

    @property
    def loss_scale(self) -> torch.Tensor:
        """The current scale as a float32 scalar tensor (Keras 2's ``loss_scale``)."""
        return torch.tensor(self.dynamic_scale, dtype=torch.float32)

    def get_scaled_loss(self, loss: Any) -> Any:
        """Keras 2's ``loss * loss_scale`` (a callable loss gives a callable), for custom loops."""
        if callable(loss):
            return lambda: self.get_scaled_loss(loss())
        loss = torch.as_tensor(loss)
        return loss * torch.tensor(self.dynamic_scale, dtype=loss.dtype)

    def get_unscaled_gradients(self, grads: Sequence[Any]) -> list[Any]:
        """Keras 2's gradients divided by the scale (``None`` entries stay ``None``)."""
        inverse = 1.0 / torch.tensor(self.dynamic_scale, dtype=torch.float32)
        return [None if g is None else torch.as_tensor(g) * inverse.to(torch.as_tensor(g).dtype) for g in grads]

    def update_scale(self, finite: bool) -> None:
        """Keras's dynamic rule: halve and reset on overflow; double after a run of finite steps.

        A fixed scale (``dynamic=False``) never changes; a non-finite step is still skipped.
        """
        if not self.dynamic:
            self.skipped_steps += 0 if finite else 1
            return
        if not finite:
            self.dynamic_scale = max(self.dynamic_scale / 2.0, 1e-30)
            self.step_counter = 0
            self.skipped_steps += 1
            return
        self.step_counter += 1
        if self.step_counter >= self.dynamic_growth_steps:
            self.dynamic_scale *= 2.0
            self.step_counter = 0

    def get_config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "inner_optimizer": self.inner_optimizer.get_config(),
            "initial_scale": self.initial_scale,
            "dynamic_growth_steps": self.dynamic_growth_steps if self.dynamic else None,
            **({} if self.dynamic else {"dynamic": False}),
        }

    def __repr__(self) -> str:
        return f"LossScaleOptimizer({self.inner_optimizer!r}, dynamic_scale={self.dynamic_scale!r})"


class UnderflowWatch:
    """Warns, once, when float16 training without loss scaling loses whole gradients to underflow.

    Checked on the first ``steps`` steps only (one host sync each): a trainable variable whose
    gradient is exactly zero everywhere while the loss is not zero is the symptom.
    """

    def __init__(self, steps: int = 5) -> None:
        self.remaining = steps

    def check(self, named: Sequence[tuple[str, torch.Tensor]], loss: torch.Tensor) -> None:
        if self.remaining <= 0:
            return
        self.remaining -= 1
        if float(loss.detach()) == 0.0:
            return
        zero = [n for n, p in named if p.grad is not None and p.grad.numel() and not bool(p.grad.any())]
        if zero:
            self.remaining = 0
            warnings.warn(
                f"Under the 'mixed_float16' policy the gradients of {zero[:3]} underflowed to zero "
                "(float16 cannot hold values below ~6e-8) and training is not using loss scaling. "
                "Wrap the optimizer: optimizer=keras.mixed_precision.LossScaleOptimizer("
                "keras.optimizers.Adam()), or use the 'mixed_bfloat16' policy, which needs none.",
                RuntimeWarning,
                stacklevel=3,
            )


__all__ = ["LossScaleOptimizer", "UnderflowWatch"]
