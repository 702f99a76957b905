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
from typing import Any, cast

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


class OrthogonalRegularizer(Regularizer):
    """Push the rows (``mode="rows"``) or columns of a 2-D weight towards orthogonality.

    The penalty is ``factor * 0.5 * sum(|P - diag(P)|) / (n (n - 1) / 2)`` where ``P`` is the
    matrix of dot products of the L2-normalised rows (columns) and ``n`` their count.

    Raises:
        ValueError: a ``mode`` other than ``"rows"``/``"columns"``, a negative ``factor``, or a weight not of rank 2.

    Example:
        >>> round(OrthogonalRegularizer(1.0)(torch.tensor([[1.0, 0.0], [1.0, 1.0]])).item(), 4)
        0.7071
    """

    def __init__(self, factor: float = 0.01, mode: str = "rows") -> None:
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or factor < 0:
            raise ValueError(f"Invalid value for argument factor: expected a float >= 0. Received: factor={factor!r}")
        if mode not in ("rows", "columns"):
            raise ValueError(
                f'Invalid value for argument `mode`. Expected one of {{"rows", "columns"}}. Received: mode={mode}'
            )
        self.factor, self.mode = float(factor), mode

    def __call__(self, weight: torch.Tensor) -> torch.Tensor:
        if weight.dim() != 2:
            raise ValueError(
                f"Inputs to OrthogonalRegularizer must have rank 2. Received: inputs.shape={tuple(weight.shape)}"
            )
        w = weight if self.mode == "rows" else weight.T
        w = torch.nn.functional.normalize(w, dim=1, eps=1e-12)
        product = w @ w.T
        size = w.shape[0]
        off = product * (1.0 - torch.eye(size, dtype=w.dtype, device=w.device))
        pairs = size * (size - 1.0) / 2.0
        return self.factor * 0.5 * off.abs().sum() / pairs

    def get_config(self) -> dict[str, Any]:
        return {"factor": self.factor, "mode": self.mode}


l1, l2, l1_l2 = L1, L2, L1L2
orthogonal_regularizer = OrthogonalRegularizer
_NAMES: dict[str, Callable[[], Regularizer]] = {"l1": L1, "l2": L2, "l1_l2": L1L2, "l1l2": L1L2}

_NAMES["orthogonal_regularizer"] = OrthogonalRegularizer
_CLASSES: dict[str, type[Regularizer]] = {
    "L1": L1,
    "L2": L2,
    "L1L2": L1L2,
    "OrthogonalRegularizer": OrthogonalRegularizer,
}

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


def serialize(regularizer: Regularizer) -> dict[str, Any]:
    """Keras's serialized form: ``{"module": "keras.regularizers", "class_name", "config", "registered_name"}``.

    Example:
        >>> serialize(L2(0.1))["config"]
        {'l2': 0.1}
    """
    if not isinstance(regularizer, Regularizer):
        raise TypeError(f"serialize() takes a keras.regularizers.Regularizer. Received: {regularizer!r}")
    return {
        "module": "keras.regularizers",
        "class_name": type(regularizer).__name__,
        "config": regularizer.get_config(),
        "registered_name": None,
    }


def deserialize(config: dict[str, Any] | str, custom_objects: dict[str, Any] | None = None) -> Regularizer:
    """The regularizer a :func:`serialize` dict or a name (``"l2"``, ``"L1L2"``) describes.

    Raises:
        ValueError: an unknown name.
    """
    if isinstance(config, str):
        cls = (custom_objects or {}).get(config) or _NAMES.get(config.lower()) or _CLASSES.get(config)
        if cls is None:
            raise ValueError(f"Unknown regularizer: {config!r}. Expected one of: {format_choices(_NAMES)}.")
        return cls()
    name = str(config.get("class_name"))
    found: Any = (custom_objects or {}).get(name) or _CLASSES.get(name) or _NAMES.get(name.lower())
    if found is None:
        raise ValueError(f"Unknown regularizer: {name!r}. Expected one of: {format_choices(_CLASSES)}.")
    return cast(Regularizer, found.from_config(dict(config.get("config") or {})))
