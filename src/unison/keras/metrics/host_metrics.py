"""Keras 2's (``tf_keras``) ``MeanTensor`` and ``metrics.experimental.PyMetric``.

``MeanTensor`` keeps an element-wise weighted mean: two state variables (``total``, ``count``)
of the values' shape, made on the first update (or from ``shape=``). ``PyMetric`` is the base of
metrics written in plain Python: its subclass's ``update_state`` gets CPU tensors without
gradients (``.numpy()`` works, as TF's eager tensors inside ``tf.py_function``) and its
``result()`` becomes a tensor of the metric's dtype.

Example:
    >>> m = MeanTensor()
    >>> m.update_state([0.0, 1.0, 2.0, 3.0])
    >>> m.update_state([4.0, 5.0, 6.0, 7.0])
    >>> m.result().tolist()
    [2.0, 3.0, 4.0, 5.0]
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from unison.keras.metrics.metric import Metric, _as_torch_dtype

__all__ = ["MeanTensor", "PyMetric"]


def _tensor(value: Any, dtype: torch.dtype) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.detach().to(dtype)
    return torch.as_tensor(np.asarray(value), dtype=dtype)


class MeanTensor(Metric):
    """The element-wise (weighted) mean of tensors of one shape (Keras 2's ``MeanTensor``).

    Args:
        name: the metric's name.
        dtype: the dtype of the state and the result (float32 by default).
        shape: the values' shape; taken from the first update when not given.

    Raises:
        ValueError: an update's shape differs from the first one, or ``result()`` before any
            update (as in Keras 2).

    Example:
        >>> m = MeanTensor()
        >>> m.update_state([[1.0, 2.0], [3.0, 4.0]], sample_weight=[1.0, 0.0])
        >>> m.result().tolist()
        [[1.0, 2.0], [0.0, 0.0]]
    """

    def __init__(self, name: str = "mean_tensor", dtype: Any = None, shape: Any = None) -> None:
        super().__init__(name=name)
        self._dtype = torch.float32 if dtype is None else _as_torch_dtype(dtype)
        self._shape: tuple[int, ...] | None = None
        self._total: Any = None
        self._count: Any = None
        if shape is not None:
            self._build(tuple(int(d) for d in shape))

    @property
    def dtype(self) -> torch.dtype:
        """The state's and result's dtype."""
        return self._dtype

    def _build(self, shape: tuple[int, ...]) -> None:
        self._shape = shape
        self._total = self.add_variable(shape=shape, initializer="zeros", dtype=self._dtype, name="total")
        self._count = self.add_variable(shape=shape, initializer="zeros", dtype=self._dtype, name="count")

    @property
    def total(self) -> Any:
        """The weighted sum of the values (``None`` before the first update)."""
        return self._total

    @property
    def count(self) -> Any:
        """The summed weights (``None`` before the first update)."""
        return self._count

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        """Add ``values`` (weighted by ``sample_weight``, broadcast as Keras 2 does)."""
        values = _tensor(values, self._dtype)
        if self._shape is None:
            self._build(tuple(values.shape))
        elif tuple(values.shape) != self._shape:
            raise ValueError(
                "MeanTensor input values must always have the same shape. Expected shape (set during the "
                f"first call): {self._shape}. Got: {tuple(values.shape)}. Use one MeanTensor per shape."
            )
        counts = torch.ones_like(values)
        if sample_weight is not None:
            weight = _tensor(sample_weight, self._dtype)
            # Keras 2's squeeze_or_expand_dimensions: a weight one rank short is a per-row weight
            if weight.dim() == values.dim() - 1:
                weight = weight.unsqueeze(-1)
            elif weight.dim() == values.dim() + 1 and weight.shape[-1] == 1:
                weight = weight.squeeze(-1)
            try:
                weight = torch.broadcast_to(weight, values.shape)
            except RuntimeError:
                # the values averaged down to the weight's rank (Keras 2's fallback)
                values = values.mean(dim=tuple(range(weight.dim(), values.dim())))
                counts = torch.ones_like(values)
            counts = counts * weight
            values = values * weight
        with torch.no_grad():
            self._total.add_(values)
            self._count.add_(counts)

    def result(self) -> torch.Tensor:
        """``total / count`` element-wise, 0 where the count is 0."""
        if self._shape is None:
            raise ValueError(
                "MeanTensor does not have any value yet. Please call the MeanTensor instance or use "
                "`.update_state(value)` before retrieving the result."
            )
        total, count = self._total.detach(), self._count.detach()
        return torch.where(count == 0, torch.zeros_like(total), total / torch.where(count == 0, 1, count))

    def result_from_state(self, state: torch.Tensor) -> float:
        raise NotImplementedError("MeanTensor's result is a tensor, not one number; read it with result().")

    def get_config(self) -> dict[str, Any]:
        """``name`` and ``dtype``, as Keras 2 gives them."""
        return {"name": self.name, "dtype": str(self._dtype).removeprefix("torch.")}


class PyMetric(Metric):
    """Base class of metrics written in plain Python (``tf_keras.metrics.experimental.PyMetric``).

    Subclasses implement ``update_state(y_true, y_pred, sample_weight=None)``, ``result()`` and
    ``reset_state()``; ``update_state`` receives CPU tensors without gradients and ``result()``'s
    number comes back as a tensor of the metric's dtype. The state lives in Python on each
    replica: it is not summed across replicas.

    Example:
        >>> class Count(PyMetric):
        ...     def update_state(self, y_true, y_pred, sample_weight=None):
        ...         self.n += len(y_true.numpy())
        ...     def result(self):
        ...         return self.n
        ...     def reset_state(self):
        ...         self.n = 0
        >>> c = Count()
        >>> c.update_state([1, 2], [1, 2])
        >>> float(c.result())
        2.0
    """

    def __init__(self, name: str | None = None, dtype: Any = None, **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"PyMetric got unexpected keyword arguments: {sorted(kwargs)}.")
        super().__init__(name=name)
        self._dtype = torch.float32 if dtype is None else _as_torch_dtype(dtype)
        self.reset_state()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "update_state" in cls.__dict__:
            cls.update_state = _on_host(cls.__dict__["update_state"])  # type: ignore[method-assign]
        if "result" in cls.__dict__:
            cls.result = _as_result(cls.__dict__["result"])  # type: ignore[method-assign]

    @property
    def dtype(self) -> torch.dtype:
        """The result's dtype."""
        return self._dtype

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        """Accumulate one batch (subclasses implement it)."""
        raise NotImplementedError("Subclasses should implement `update_state`")

    def reset_state(self) -> None:
        """Forget what was accumulated (subclasses implement it; called by ``__init__``)."""
        raise NotImplementedError("Subclasses should implement `reset_state`")

    def result(self) -> torch.Tensor:
        """The metric's value (subclasses return a Python number or an array)."""
        raise NotImplementedError("Subclasses should implement `result`")

    def merge_state(self, metrics: Any) -> None:
        """Keras 2 leaves merging to the subclass."""
        raise NotImplementedError("Subclasses should implement `merge_state`")

    def result_from_state(self, state: torch.Tensor) -> float:
        # the state is Python's, on this replica: the trainer's reduced state does not describe it
        return float(self.result())


def _host_value(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    return torch.as_tensor(np.asarray(value))


def _on_host(update: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(update)
    def update_state(self: PyMetric, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        update(self, _host_value(y_true), _host_value(y_pred), _host_value(sample_weight))

    return update_state


def _as_result(result: Callable[..., Any]) -> Callable[..., torch.Tensor]:
    @functools.wraps(result)
    def as_tensor(self: PyMetric) -> torch.Tensor:
        return _tensor(result(self), self._dtype)

    return as_tensor
