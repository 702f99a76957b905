"""``keras.optimizers.schedules``: learning rates that change with the optimizer's step.

An optimizer given a schedule as its ``learning_rate`` sets the rate to ``schedule(iterations)``
before every step (in ``fit``, in ``apply_gradients`` and in a raw loop alike), where
``iterations`` is the number of steps already taken, as in Keras. Subclass
``LearningRateSchedule`` and implement ``__call__(step)`` for your own; it may return a Python
number or a 0-d tensor.

Example:
    >>> from unison.keras.optimizers import schedules
    >>> s = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5, staircase=True)
    >>> [round(float(s(step)), 4) for step in (0, 9, 10, 25)]
    [0.1, 0.1, 0.05, 0.025]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import torch

__all__ = [
    "CosineDecay",
    "CosineDecayRestarts",
    "ExponentialDecay",
    "InverseTimeDecay",
    "LearningRateSchedule",
    "PiecewiseConstantDecay",
    "PolynomialDecay",
    "deserialize",
    "serialize",
]


def _step(step: Any) -> float:
    return float(step.item() if isinstance(step, torch.Tensor) else step)


def _positive(value: Any, arg: str, cls: str) -> float:
    number = float(value)
    if not number > 0:
        raise ValueError(f"{cls}: `{arg}` must be > 0. Received: {arg}={value!r}")
    return number


class LearningRateSchedule:
    """Base class: ``schedule(step)`` returns the learning rate for optimizer step ``step``."""

    def __call__(self, step: Any) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__} must implement __call__(self, step) and return the learning rate."
        )

    def get_config(self) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement get_config() to be serialised.")

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> LearningRateSchedule:
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (integer division if ``staircase``)."""

    def __init__(
        self,
        initial_learning_rate: float,
        decay_steps: int,
        decay_rate: float,
        staircase: bool = False,
        name: str = "ExponentialDecay",
    ) -> None:
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_steps = _positive(decay_steps, "decay_steps", "ExponentialDecay")
        self.decay_rate = float(decay_rate)
        self.staircase, self.name = bool(staircase), name

    def __call__(self, step: Any) -> float:
        p = _step(step) / self.decay_steps
        return self.initial_learning_rate * self.decay_rate ** (math.floor(p) if self.staircase else p)

    def get_config(self) -> dict[str, Any]:
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class InverseTimeDecay(LearningRateSchedule):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)`` (floored if ``staircase``)."""

    def __init__(
        self,
        initial_learning_rate: float,
        decay_steps: int,
        decay_rate: float,
        staircase: bool = False,
        name: str = "InverseTimeDecay",
    ) -> None:
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_steps = _positive(decay_steps, "decay_steps", "InverseTimeDecay")
        self.decay_rate = float(decay_rate)
        self.staircase, self.name = bool(staircase), name

    def __call__(self, step: Any) -> float:
        p = _step(step) / self.decay_steps
        return self.initial_learning_rate / (1.0 + self.decay_rate * (math.floor(p) if self.staircase else p))

    def get_config(self) -> dict[str, Any]:
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` while ``step <= boundaries[0]``, ``values[1]`` up to ``boundaries[1]``, ..."""

    def __init__(self, boundaries: Sequence[float], values: Sequence[float], name: str = "PiecewiseConstant") -> None:
        if len(values) != len(boundaries) + 1:
            raise ValueError(
                "PiecewiseConstantDecay: `values` must have one more element than `boundaries`. "
                f"Received: len(boundaries)={len(boundaries)}, len(values)={len(values)}"
            )
        if list(boundaries) != sorted(boundaries):
            raise ValueError(f"PiecewiseConstantDecay: `boundaries` must increase. Received: {list(boundaries)}")
        self.boundaries, self.values, self.name = list(boundaries), [float(v) for v in values], name

    def __call__(self, step: Any) -> float:
        s = _step(step)
        for boundary, value in zip(self.boundaries, self.values):
            if s <= boundary:
                return value
        return self.values[-1]

    def get_config(self) -> dict[str, Any]:
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay from the initial rate to ``alpha`` times it, after an optional linear warm-up.

    As Keras 3: with ``warmup_steps`` the rate rises linearly from ``initial_learning_rate`` to
    ``warmup_target`` and then decays from ``warmup_target``.
    """

    def __init__(
        self,
        initial_learning_rate: float,
        decay_steps: int,
        alpha: float = 0.0,
        name: str = "CosineDecay",
        warmup_target: float | None = None,
        warmup_steps: int = 0,
    ) -> None:
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_steps = _positive(decay_steps, "decay_steps", "CosineDecay")
        self.alpha, self.name = float(alpha), name
        self.warmup_target = None if warmup_target is None else float(warmup_target)
        self.warmup_steps = int(warmup_steps)

    def __call__(self, step: Any) -> float:
        s = _step(step)
        if self.warmup_target is not None and s < self.warmup_steps:
            return self.initial_learning_rate + (self.warmup_target - self.initial_learning_rate) * s / max(
                self.warmup_steps, 1
            )
        start = self.initial_learning_rate if self.warmup_target is None else self.warmup_target
        p = min(max(s - self.warmup_steps, 0.0), self.decay_steps) / self.decay_steps
        cosine = 0.5 * (1.0 + math.cos(math.pi * p))
        return start * ((1.0 - self.alpha) * cosine + self.alpha)

    def get_config(self) -> dict[str, Any]:
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "alpha": self.alpha,
            "name": self.name,
            "warmup_target": self.warmup_target,
            "warmup_steps": self.warmup_steps,
        }


class PolynomialDecay(LearningRateSchedule):
    """Polynomial decay from ``initial_learning_rate`` to ``end_learning_rate`` over ``decay_steps``."""

    def __init__(
        self,
        initial_learning_rate: float,
        decay_steps: int,
        end_learning_rate: float = 0.0001,
        power: float = 1.0,
        cycle: bool = False,
        name: str = "PolynomialDecay",
    ) -> None:
        self.initial_learning_rate = float(initial_learning_rate)
        self.decay_steps = _positive(decay_steps, "decay_steps", "PolynomialDecay")
        self.end_learning_rate, self.power, self.cycle, self.name = float(end_learning_rate), float(power), cycle, name

    def __call__(self, step: Any) -> float:
        s, steps = _step(step), self.decay_steps
        if self.cycle:
            steps = steps * max(math.ceil(s / steps), 1)
        else:
            s = min(s, steps)
        frac = (1.0 - s / steps) ** self.power
        return (self.initial_learning_rate - self.end_learning_rate) * frac + self.end_learning_rate

    def get_config(self) -> dict[str, Any]:
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "cycle": self.cycle,
            "name": self.name,
        }


class CosineDecayRestarts(LearningRateSchedule):
    """Cosine decay with warm restarts (SGDR): each period is ``t_mul`` times longer and starts ``m_mul`` times lower.

    Example:
        >>> s = CosineDecayRestarts(1.0, first_decay_steps=10)
        >>> round(s(5), 4), round(s(10), 4)
        (0.5, 1.0)
    """

    def __init__(
        self,
        initial_learning_rate: float,
        first_decay_steps: int,
        t_mul: float = 2.0,
        m_mul: float = 1.0,
        alpha: float = 0.0,
        name: str = "SGDRDecay",
    ) -> None:
        self.initial_learning_rate = float(initial_learning_rate)
        self.first_decay_steps = _positive(first_decay_steps, "first_decay_steps", "CosineDecayRestarts")
        self.t_mul, self.m_mul, self.alpha, self.name = float(t_mul), float(m_mul), float(alpha), name

    def __call__(self, step: Any) -> float:
        fraction = _step(step) / self.first_decay_steps
        if self.t_mul != 1.0:  # geometric periods: find the restart the step falls in
            i_restart = math.floor(math.log(1.0 - fraction * (1.0 - self.t_mul)) / math.log(self.t_mul))
            sum_r = (1.0 - self.t_mul**i_restart) / (1.0 - self.t_mul)
            fraction = (fraction - sum_r) / self.t_mul**i_restart
        else:
            i_restart = math.floor(fraction)
            fraction -= i_restart
        cosine = 0.5 * self.m_mul**i_restart * (1.0 + math.cos(math.pi * fraction))
        return self.initial_learning_rate * ((1 - self.alpha) * cosine + self.alpha)

    def get_config(self) -> dict[str, Any]:
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "first_decay_steps": self.first_decay_steps,
            "t_mul": self.t_mul,
            "m_mul": self.m_mul,
            "alpha": self.alpha,
            "name": self.name,
        }


def deserialize(config: dict[str, Any], custom_objects: dict[str, Any] | None = None) -> LearningRateSchedule:
    """The schedule :func:`serialize` described.

    Raises:
        ValueError: an unknown schedule class.

    Example:
        >>> deserialize(serialize(ExponentialDecay(0.1, 10, 0.5)))(10)
        0.05
    """
    name = str(config.get("class_name"))
    known = {cls.__name__: cls for cls in LearningRateSchedule.__subclasses__()}
    cls = (custom_objects or {}).get(name) or known.get(name)
    if cls is None:
        raise ValueError(f"Unknown learning rate schedule: {name!r}. Expected one of {sorted(known)}.")
    return cast(LearningRateSchedule, cls(**dict(config.get("config") or {})))


def serialize(schedule: LearningRateSchedule) -> dict[str, Any]:
    """Keras's ``{"class_name": ..., "config": ...}`` form of a schedule."""
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}
