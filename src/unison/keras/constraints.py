"""Keras's weight constraints: projections applied to a weight after each optimizer update.

A layer argument such as ``Dense(kernel_constraint=keras.constraints.MaxNorm(2.0))`` or
``add_weight(constraint=...)`` attaches the constraint to the weight (``weight.constraint``,
TF's ``tf.Variable.constraint``). As in Keras, the optimizer runs ``w <- constraint(w)`` right
after it updates ``w`` (``fit``, ``apply_gradients``, ``minimize``, every strategy: each replica
updates the same weights the same way, so they stay equal). The constraint is not part of the
gradient: it is a projection of the updated value.

The formulas are Keras 3's (``keras/src/constraints/constraints.py``), with Keras's
``epsilon()`` (``1e-7``) in the divisions.

Example:
    >>> import torch
    >>> from unison.keras import constraints
    >>> w = torch.tensor([[3.0, 0.5], [4.0, 0.0]])
    >>> constraints.MaxNorm(max_value=2.0)(w).norm(dim=0).round(decimals=4).tolist()
    [2.0, 0.5]
    >>> constraints.get("non_neg")(torch.tensor([-1.0, 2.0])).tolist()
    [-0.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import torch

from unison.errors import InvalidArgumentError

__all__ = [
    "Constraint",
    "MaxNorm",
    "MinMaxNorm",
    "NonNeg",
    "RadialConstraint",
    "UnitNorm",
    "deserialize",
    "get",
    "max_norm",
    "min_max_norm",
    "non_neg",
    "radial_constraint",
    "serialize",
    "unit_norm",
]

_EPSILON = 1e-7  # keras.backend.epsilon(): keeps a zero column finite


def _norms(w: torch.Tensor, axis: int | tuple[int, ...] | list[int]) -> torch.Tensor:
    dims = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
    return torch.sqrt(torch.sum(torch.square(w), dim=dims, keepdim=True))


class Constraint:
    """Base class: subclasses implement ``__call__(w)`` returning the projected weight.

    Example:
        >>> import torch
        >>> class Clip01(Constraint):
        ...     def __call__(self, w):
        ...         return w.clamp(0.0, 1.0)
        >>> Clip01()(torch.tensor([-2.0, 0.5, 3.0])).tolist()
        [0.0, 0.5, 1.0]
    """

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        return w

    def get_config(self) -> dict[str, Any]:
        """The constructor arguments (Keras's ``get_config``)."""
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Constraint:
        """Create the constraint from ``get_config()``'s output."""
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


class MaxNorm(Constraint):
    """Scale each slice along ``axis`` down to an L2 norm of at most ``max_value``.

    Args:
        max_value: the largest norm allowed (Keras's default 2).
        axis: the axis (or axes) the norm runs over: 0 for a ``Dense`` kernel's columns
            (``(input_dim, units)``), ``[0, 1, 2]`` for a ``Conv2D`` kernel's filters.
    """

    def __init__(self, max_value: float = 2.0, axis: int | list[int] | tuple[int, ...] = 0) -> None:
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        norms = _norms(w, self.axis)
        desired = torch.clamp(norms, 0.0, float(self.max_value))
        return w * (desired / (_EPSILON + norms))

    def get_config(self) -> dict[str, Any]:
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Set negative entries to zero."""

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        return w * (w >= 0.0).to(w.dtype)


class UnitNorm(Constraint):
    """Scale each slice along ``axis`` to unit L2 norm.

    Args:
        axis: the axis (or axes) the norm runs over (0: a ``Dense`` kernel's columns).
    """

    def __init__(self, axis: int | list[int] | tuple[int, ...] = 0) -> None:
        self.axis = axis

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        return w / (_EPSILON + _norms(w, self.axis))

    def get_config(self) -> dict[str, Any]:
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Move each slice's L2 norm into ``[min_value, max_value]``, by ``rate`` of the way.

    Args:
        min_value: the smallest norm allowed.
        max_value: the largest norm allowed.
        rate: 1.0 projects exactly; a smaller rate moves the norm
            ``rate * clipped + (1 - rate) * norm``.
        axis: the axis (or axes) the norm runs over.
    """

    def __init__(
        self,
        min_value: float = 0.0,
        max_value: float = 1.0,
        rate: float = 1.0,
        axis: int | list[int] | tuple[int, ...] = 0,
    ) -> None:
        if min_value > max_value:
            raise ValueError(
                f"MinMaxNorm needs min_value <= max_value. Received: min_value={min_value}, max_value={max_value}"
            )
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        norms = _norms(w, self.axis)
        clipped = torch.clamp(norms, float(self.min_value), float(self.max_value))
        desired = self.rate * clipped + (1.0 - self.rate) * norms
        return w * (desired / (_EPSILON + norms))

    def get_config(self) -> dict[str, Any]:
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate, "axis": self.axis}


class RadialConstraint(Constraint):
    """Keras 2's (``tf_keras``) constraint making a square ``Conv2D`` kernel constant on each ring.

    The kernel is ``(rows, cols, in, out)``; every ``rows x rows`` slice becomes rings of one value
    each, taken as ``tf_keras`` takes them: the outermost ring from the slice's last diagonal entry,
    each ring inward from the diagonal entry before, and the middle (one entry for an odd size, two
    by two for an even one) from entry ``[rows // 2 - 1, rows // 2 - 1]``.

    Example:
        >>> import torch
        >>> w = torch.arange(16.0).reshape(4, 4, 1, 1)
        >>> RadialConstraint()(w)[:, :, 0, 0].tolist()
        [[15.0, 15.0, 15.0, 15.0], [15.0, 5.0, 5.0, 15.0], [15.0, 5.0, 5.0, 15.0], [15.0, 15.0, 15.0, 15.0]]
    """

    def __call__(self, w: torch.Tensor) -> torch.Tensor:
        if w.dim() != 4:
            raise ValueError(
                "The weight tensor must have rank 4. "
                f"Received weight tensor with shape: {tuple(w.shape)}. RadialConstraint is for Conv2D kernels "
                "(rows, cols, input_depth, output_depth)."
            )
        size = int(w.shape[0])
        if size < 2 or int(w.shape[1]) != size:
            # tf_keras fails in a reshape there (InvalidArgumentError); say why
            raise InvalidArgumentError(
                None,
                None,
                "RadialConstraint needs a square kernel of at least 2 x 2 (rows == cols >= 2). "
                f"Received weight tensor with shape: {tuple(w.shape)}.",
            )
        start = size // 2
        pos = torch.arange(size, device=w.device)
        # ring depth counted from the outside: 0 on the border, growing inward
        depth = torch.minimum(
            torch.minimum(pos[:, None], pos[None, :]), torch.minimum(size - 1 - pos[:, None], size - 1 - pos[None, :])
        )
        middle = start if size % 2 else start - 1
        index = torch.where(depth >= middle, torch.full_like(depth, start - 1), 2 * start - 1 - depth)
        return w[index, index]


# Keras's function-style aliases (Keras 3 and Keras 2 both export these names).
max_norm = MaxNorm
non_neg = NonNeg
unit_norm = UnitNorm
min_max_norm = MinMaxNorm
radial_constraint = RadialConstraint  # Keras 2 (tf_keras) only

_BY_NAME: dict[str, type[Constraint]] = {
    "max_norm": MaxNorm,
    "maxnorm": MaxNorm,
    "non_neg": NonNeg,
    "nonneg": NonNeg,
    "unit_norm": UnitNorm,
    "unitnorm": UnitNorm,
    "min_max_norm": MinMaxNorm,
    "minmaxnorm": MinMaxNorm,
    "radial_constraint": RadialConstraint,
    "radialconstraint": RadialConstraint,
}

ConstraintLike = Constraint | Callable[[torch.Tensor], torch.Tensor] | str | dict[str, Any] | None


def serialize(constraint: Constraint) -> dict[str, Any]:
    """``{"class_name", "config"}`` of a built-in constraint (Keras's ``serialize``)."""
    return {"class_name": type(constraint).__name__, "config": constraint.get_config()}


def deserialize(config: dict[str, Any] | str) -> Constraint:
    """The inverse of :func:`serialize`; also takes a name such as ``"max_norm"``.

    Raises:
        ValueError: the name is not a Keras constraint.
    """
    if isinstance(config, str):
        name, options = config, {}
    else:
        name, options = str(config.get("class_name", "")), dict(config.get("config") or {})
    cls = _BY_NAME.get(name.lower().replace("_", "")) or _BY_NAME.get(name)
    if cls is None:
        cls = {c.__name__: c for c in _BY_NAME.values()}.get(name)
    if cls is None:
        choices = sorted({"max_norm", "non_neg", "unit_norm", "min_max_norm"})
        raise ValueError(
            f"Unknown constraint {name!r}. Expected one of {choices} (or the class names MaxNorm, NonNeg, "
            f"UnitNorm, MinMaxNorm), a Constraint instance or a callable taking the weight. Received: {config!r}"
        )
    return cls(**options)


def get(identifier: ConstraintLike) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """Resolve a layer's ``*_constraint`` argument: ``None``, a name, a config dict, or a callable.

    Raises:
        ValueError: an unknown name.
        TypeError: a value that is none of those.
    """
    if identifier is None:
        return None
    if isinstance(identifier, (str, dict)):
        return deserialize(identifier)
    if isinstance(identifier, type) and issubclass(identifier, Constraint):
        return identifier()  # keras.constraints.NonNeg given as the class
    if callable(identifier):
        return cast("Callable[[torch.Tensor], torch.Tensor]", identifier)
    raise TypeError(
        f"A constraint must be a keras.constraints.Constraint, a callable taking the weight and returning "
        f"the projected weight, or a name such as 'non_neg'. Received: {identifier!r} ({type(identifier).__name__})"
    )


def apply_constraints(weights: list[torch.Tensor]) -> None:
    """Replace each weight's value by ``weight.constraint(weight)`` in place (after an update)."""
    with torch.no_grad():
        for weight in weights:
            weight.copy_(weight.constraint(weight))  # type: ignore[attr-defined]


def constrained(params: Any) -> list[torch.Tensor]:
    """The tensors among ``params`` (tensors or param-group dicts) that carry a constraint."""
    found: list[torch.Tensor] = []
    for item in params:
        group = item["params"] if isinstance(item, dict) else [item]
        found.extend(p for p in group if getattr(p, "constraint", None) is not None)
    return found
