"""Weight regularizers (``keras.regularizers``): penalties added to the training loss.

Under a strategy the penalty is added on every replica, so the trainer divides it by the
number of replicas: the sum over replicas is then the one-device penalty (docs/semantics.md#loss).

Example:
    >>> import torch
    >>> round(get("l2")(torch.ones(2, 2)).item(), 6)
    0.04
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from unison.errors import format_choices


class Regularizer:
    """Base class: ``regularizer(weight) -> scalar tensor``."""

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def get_config(self) -> dict[str, Any]:
        """The constructor arguments (Keras's ``get_config``)."""
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Regularizer:
        """The regularizer ``get_config()`` describes.

        Example:
            >>> L1L2.from_config(L1L2(l1=0.5).get_config()).l1
            0.5
        """
        return cls(**config)


class L1L2(Regularizer):
    """``l1 * sum(|w|) + l2 * sum(w**2)``."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0) -> None:
        if l1 < 0 or l2 < 0:
            raise ValueError(f"Regularization factors must be >= 0. Received: l1={l1}, l2={l2}")
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        out = weight.new_zeros(())
        if self.l1:
            out = out + self.l1 * weight.abs().sum()
        if self.l2:
            out = out + self.l2 * weight.square().sum()
        return out

    def get_config(self) -> dict[str, Any]:
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """``l1 * sum(|w|)`` (Keras default factor 0.01)."""

    def __init__(self, l1: float = 0.01) -> None:
        super().__init__(l1=l1)

    def get_config(self) -> dict[str, Any]:
        return {"l1": self.l1}


class L2(L1L2):
    """``l2 * sum(w**2)`` (Keras default factor 0.01)."""

    def __init__(self, l2: float = 0.01) -> None:
        super().__init__(l2=l2)

    def get_config(self) -> dict[str, Any]:
        return {"l2": self.l2}


l1, l2, l1_l2 = L1, L2, L1L2
_NAMES: dict[str, Callable[[], Regularizer]] = {"l1": L1, "l2": L2, "l1_l2": L1L2, "l1l2": L1L2}

_CLASSES: dict[str, type[Regularizer]] = {"L1": L1, "L2": L2, "L1L2": L1L2}

RegularizerLike = dict[str, Any] | str | Regularizer | Callable[[torch.Tensor], torch.Tensor] | None


def get(identifier: RegularizerLike) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """Resolve a regularizer name, instance or callable (``None`` stays ``None``)."""
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _NAMES:
        return _NAMES[identifier.lower()]()
    if isinstance(identifier, dict) and identifier.get("class_name") in _CLASSES:
        # what keras.regularizers.serialize writes: {"class_name": "L1L2", "config": {...}}
        return _CLASSES[identifier["class_name"]].from_config(identifier.get("config") or {})
    raise ValueError(
        f"Unknown regularizer: {identifier!r}. Expected one of: {format_choices(_NAMES)}, a "
        f"keras.regularizers instance, or a callable. Received: regularizer={identifier!r}"
    )
