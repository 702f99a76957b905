"""``tf.train.ExponentialMovingAverage``: shadow variables that track variables' moving averages.

TF 2's eager semantics, line for line: ``apply(var_list)`` creates, on a variable's first
``apply``, a non-trainable shadow variable holding the variable's current value, then updates
every shadow as ``shadow -= (1 - decay) * (shadow - value)``. With ``num_updates`` the decay is
``min(decay, (1 + num_updates) / (10 + num_updates))``; the decay is a float32 number, as in TF,
cast to the variable's dtype after ``1 - decay``. ``zero_debias`` is accepted and, as in TF 2's
eager mode, changes nothing for variables (TF debiases only the averages of graph tensors, which
eager execution rejects).

Example:
    >>> import unison as tf
    >>> v = tf.Variable(1.0)
    >>> ema = tf.train.ExponentialMovingAverage(decay=0.9)
    >>> ema.apply([v])
    >>> _ = v.assign(3.0)
    >>> ema.apply([v])
    >>> round(float(ema.average(v)), 4)
    1.2
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from unison.core.variables import Variable

_FLOATS = (torch.bfloat16, torch.float16, torch.float32, torch.float64)


class ExponentialMovingAverage:
    """Maintain moving averages of variables by exponential decay (TF's ``tf.train.ExponentialMovingAverage``).

    Args:
        decay: the decay (typically close to 1, e.g. 0.999), a number or a 0-d tensor.
        num_updates: optional count of updates applied to the variables (a number or a variable
            read on every ``apply``); it caps the decay early in training.
        zero_debias: accepted for TF's signature; no effect on variables in eager TF 2.
        name: the shadow variables' name suffix.
    """

    def __init__(
        self,
        decay: Any,
        num_updates: Any = None,
        zero_debias: bool = False,
        name: str = "ExponentialMovingAverage",
    ) -> None:
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[int, tuple[torch.Tensor, Variable]] = {}  # id(var) -> (var, shadow)

    @property
    def name(self) -> str:
        """The name of this moving average (the shadow variables' suffix)."""
        return self._name

    def _decay_now(self) -> torch.Tensor:
        decay = torch.as_tensor(self._decay, dtype=torch.float32).detach().clone()
        if self._num_updates is not None:
            n = torch.as_tensor(self._num_updates).detach().to(torch.float32)
            decay = torch.minimum(decay, (1.0 + n) / (10.0 + n))
        return decay

    def apply(self, var_list: Iterable[Any] | None = None) -> None:
        """Create shadow variables on first sight, then move every shadow toward its variable once.

        Raises:
            TypeError: a tensor that is not a ``tf.Variable``, or a variable whose dtype is not
                bfloat16, half, float or double.
        """
        variables = list(var_list or [])
        for var in variables:
            if not isinstance(var, Variable):
                raise TypeError(
                    "tf.train.ExponentialMovingAverage does not support non-Variable tensors when eager "
                    f"execution is enabled. Received: {type(var).__name__}; wrap it in tf.Variable(...)."
                )
        for var in variables:
            if var.dtype not in _FLOATS:
                raise TypeError(f"The variables must be half, float, or double: {var.name} has dtype {var.dtype}.")
            if id(var) not in self._averages:
                shadow = Variable(var.detach(), trainable=False, name=f"{var.name[:-2]}/{self._name}")
                self._averages[id(var)] = (var, shadow)
        one_minus_decay = 1.0 - self._decay_now()  # float32, as TF computes it
        with torch.no_grad():
            for var in variables:
                shadow = self._averages[id(var)][1]
                rate = one_minus_decay.to(var.dtype).to(shadow.device)
                shadow.sub_((shadow - var.detach()) * rate)

    def average(self, var: Any) -> Variable | None:
        """The shadow variable of ``var``, or ``None`` if ``apply`` never saw it."""
        entry = self._averages.get(id(var))
        return entry[1] if entry is not None and entry[0] is var else None

    def average_name(self, var: Any) -> str:
        """The shadow variable's name (``"<var name>/<ema name>"``), whether or not it exists yet."""
        shadow = self.average(var)
        if shadow is not None:
            return shadow.name[:-2]
        return f"{var.name[:-2]}/{self._name}"


__all__ = ["ExponentialMovingAverage"]
