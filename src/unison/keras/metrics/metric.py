"""Keras metrics whose state is additive, so replicas combine them with one SUM all-reduce.

Every metric here keeps a small float64 tensor of sums (``state()``, e.g. ``[total, count]``).
The trainer concatenates the states of all metrics, SUM-all-reduces the result across replicas
and reads each metric with ``result_from_state(its slice)``, so the reported numbers describe
the whole global batch, each sample counted once (docs/semantics.md#metrics). ``update_state`` runs every
step: it only launches tensor additions on the device of its inputs, never ``.item()``.

Example:
    >>> import torch
    >>> from unison.keras import metrics
    >>> acc = metrics.get("accuracy", y_true_shape=(4,), y_pred_shape=(4, 3))
    >>> acc.update_state(torch.tensor([0, 1, 2, 0]), torch.eye(3)[[0, 1, 0, 0]])
    >>> acc.name, float(acc.result())
    ('accuracy', 0.75)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from unison.distribute.strategy import get_strategy, has_strategy, in_strategy_run
from unison.keras.backend.keras_tensor import MASK_ATTR
from unison.keras.losses.loss import mask_weights
from unison.ops.dtypes import as_torch

__all__ = ["Mean", "MeanMetricWrapper", "Metric", "Sum"]

TensorLike = torch.Tensor | np.ndarray | float | int | list[Any]
Shape = Sequence[int | None] | None


class Metric:
    """Base class: a named metric with additive float64 state.

    Subclasses set ``num_state`` and implement ``update_state`` and ``result_from_state``; or,
    as Keras's guides write them, create state variables with ``add_variable`` (Keras 3) or
    ``add_weight`` (Keras 2) and implement ``update_state``, ``result`` and ``reset_state``.
    Such variables are sums, as TF's metric variables are: across replicas they are summed
    before ``result()`` reads them.

    Example:
        >>> import torch
        >>> class Count(Metric):
        ...     def __init__(self, name="count", **kwargs):
        ...         super().__init__(name=name, **kwargs)
        ...         self.n = self.add_variable(shape=(), initializer="zeros", name="n")
        ...     def update_state(self, y_true, y_pred, sample_weight=None):
        ...         self.n.assign_add(float(len(y_true)))
        ...     def result(self):
        ...         return self.n
        >>> m = Count()
        >>> m.update_state(torch.zeros(3), torch.zeros(3))
        >>> float(m.result()), m.result_from_state(torch.tensor([5.0], dtype=torch.float64))
        (3.0, 5.0)

    Attributes:
        name: the name shown in logs and in ``History``.
        num_state: the length of ``state()``.
    """

    num_state: int = 2

    def __init__(self, name: str | None = None, dtype: Any = None) -> None:
        name = name or _snake(type(self).__name__)
        self.name = name
        # TF: a metric created under a strategy's scope is read across its replicas.
        self._strategy = get_strategy() if has_strategy() else None
        self.load_state(torch.zeros(self.num_state, dtype=torch.float64))

    def update_state(self, *args: Any, **kwargs: Any) -> None:
        """Accumulate one batch into the state (no host synchronisation, no autograd)."""
        raise NotImplementedError

    def result_from_state(self, state: torch.Tensor) -> float:
        """Compute the metric's value from a state vector (e.g. the all-reduced one).

        For a metric with variables: its ``result()`` read with the variables set to ``state``.
        """
        variables = self.__dict__.get("_variables")
        if not variables or type(self).result is Metric.result:
            raise NotImplementedError(
                f"{type(self).__name__} must implement result() (Keras) or result_from_state(state)."
            )
        saved = self.state()
        self.load_state(state)
        try:
            return float(as_torch(self.result()).detach().reshape(-1)[0])
        finally:
            self.load_state(saved)

    def result(self) -> torch.Tensor:
        """The metric's value, a 0-d float32 tensor (``.numpy()``, ``float()`` and arithmetic work).

        For a metric created under a multi-replica strategy's ``scope()`` and read outside
        ``strategy.run``, the states of every replica are summed first (one all-reduce), so the
        value covers every replica's samples, as TF's metrics do: every replica must then read it.
        Inside ``strategy.run``, or for a metric created outside any scope, it is this
        replica's value.
        """
        state = self.state()
        strategy = self._strategy
        if strategy is not None and strategy.extended.communicator.is_distributed and not in_strategy_run():
            state = strategy.extended.communicator.all_reduce(
                state.to(strategy.extended.device), name=f"metric.{self.name}.result"
            )
        return torch.tensor(self.result_from_state(state), dtype=torch.float32)

    # --- Keras's variable API for metrics written as Keras's guides write them -------------------
    def add_variable(
        self,
        shape: Any = (),
        initializer: Any = "zeros",
        dtype: Any = None,
        aggregation: str = "sum",
        name: str | None = None,
    ) -> Any:
        """A state variable (Keras 3's ``Metric.add_variable``), summed across replicas when read."""
        from unison.core.variables import Variable
        from unison.keras import initializers

        if aggregation not in ("sum", "mean", "none", None):
            raise ValueError(
                f"add_variable(aggregation=...) must be 'sum' (unison sums metric variables across "
                f"replicas). Received: aggregation={aggregation!r}"
            )
        variables = self.__dict__.setdefault("_variables", [])
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        torch_dtype = torch.float32 if dtype is None else _as_torch_dtype(dtype)
        variable = Variable(
            torch.zeros(dims, dtype=torch_dtype), trainable=False, name=name or f"variable_{len(variables)}"
        )
        with torch.no_grad():
            initializers.get(initializer)(variable)
        variables.append(variable)
        self.__dict__.setdefault("_initial_values", []).append(variable.detach().clone())
        self.num_state = sum(v.numel() for v in variables)
        return variable

    def add_weight(
        self, name: str | None = None, shape: Any = (), initializer: Any = "zeros", dtype: Any = None, **kwargs: Any
    ) -> Any:
        """Keras 2's spelling of :meth:`add_variable` (``aggregation``/``synchronization`` accepted)."""
        kwargs.pop("synchronization", None)
        aggregation = kwargs.pop("aggregation", "sum")
        if kwargs:
            raise TypeError(f"Metric.add_weight got unexpected keyword arguments: {sorted(kwargs)}.")
        aggregation = getattr(aggregation, "value", aggregation)
        return self.add_variable(
            shape, initializer, dtype, "sum" if aggregation in (None, "none", 0) else aggregation, name
        )

    @property
    def variables(self) -> list[Any]:
        """The state variables created with ``add_variable``/``add_weight``."""
        return list(self.__dict__.get("_variables", []))

    def state(self) -> torch.Tensor:
        """Return a copy of the additive state: a 1-D float64 tensor of length ``num_state``."""
        variables = self.__dict__.get("_variables")
        if variables:
            return torch.cat([v.detach().reshape(-1).to(torch.float64) for v in variables])
        state = self._state.detach().clone()
        if any(self._host):
            state += torch.tensor(self._host, dtype=torch.float64, device=state.device)
        return state

    def load_state(self, state: torch.Tensor) -> None:
        """Replace the additive state (e.g. a restored backup's sums); ``state`` is copied."""
        variables = self.__dict__.get("_variables")
        if variables:
            offset = 0
            with torch.no_grad():
                for v in variables:
                    part = state[offset : offset + v.numel()].reshape(v.shape)
                    v.copy_(part.to(v.device, v.dtype))
                    offset += v.numel()
            return
        self._state = state.detach().to(torch.float64).clone()
        # Per-entry views: a step adds into them in place, without indexing per update.
        self._entries = self._state.unbind()
        # Python numbers (batch sizes) are summed on the host and folded in when read: a step
        # needs no tensor op, and no host-device transfer, to count its samples.
        self._host = [0.0] * self.num_state

    def reset_state(self) -> None:
        """Zero the state (kept on the device it lives on); variables go back to their initial values."""
        variables = self.__dict__.get("_variables")
        if variables:
            with torch.no_grad():
                for v, initial in zip(variables, self.__dict__["_initial_values"]):
                    v.copy_(initial)
            return
        self._state.zero_()
        self._host = [0.0] * self.num_state

    def reset_states(self) -> None:
        """Keras 2's name for :meth:`reset_state`."""
        self.reset_state()

    def _accumulate(self, *parts: torch.Tensor | float) -> None:
        first = parts[0]
        if isinstance(first, torch.Tensor) and first.device != self._state.device:
            # Follows the data once (e.g. to the GPU) so later updates stay on one device.
            self.load_state(self.state().to(first.device))
        for i, part in enumerate(parts):
            if isinstance(part, torch.Tensor):
                self._entries[i].add_(part)
            else:
                self._host[i] += part

    def __call__(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        """Update with one batch and return the running result, as Keras metrics do."""
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self) -> dict[str, Any]:
        """Return the constructor arguments."""
        return {"name": self.name}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Metric:
        """The (fresh) metric ``get_config()`` describes (Keras's ``Metric.from_config``).

        Example:
            >>> from unison.keras.metrics import Precision
            >>> Precision.from_config(Precision(name="p").get_config()).name
            'p'
        """
        # a config may hold what the class derives itself (MeanIoU's target_class_ids, as Keras's
        # own get_config gives): keep only what the constructor takes, unless it takes **kwargs
        parameters = inspect.signature(cls.__init__).parameters
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
            config = {k: v for k, v in config.items() if k in parameters}
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


def _snake(name: str) -> str:
    import re

    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _as_torch_dtype(dtype: Any) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    from unison.ops.dtypes import as_dtype

    resolved = as_dtype(dtype)
    if not isinstance(resolved, torch.dtype):
        raise TypeError(f"A metric variable needs a numeric dtype. Received: dtype={dtype!r}")
    return resolved


class _MeanState(Metric):
    """State ``[weighted total, total weight]``; the result is their ratio (0 when empty)."""

    def _add(self, values: TensorLike, sample_weight: TensorLike | None) -> None:
        # Keras's reduce_to_samplewise_values: one value (and one weight) per sample.
        values = values.detach() if isinstance(values, torch.Tensor) else as_torch(values)
        if sample_weight is None:
            if values.dim() > 1:
                values = values.to(torch.float64).reshape(values.shape[0], -1).mean(dim=1)
            self._accumulate(values.sum(dtype=torch.float64), values.shape[0] if values.dim() else 1)
            return
        values = values.to(torch.float64)
        weight = as_torch(sample_weight, device=values.device).to(torch.float64)
        if weight.dim() == values.dim() + 1 and weight.shape[-1] == 1:
            weight = weight.squeeze(-1)
        elif values.dim() == weight.dim() + 1 and values.shape[-1] == 1:
            values = values.squeeze(-1)
        if values.dim() > weight.dim():
            values = values.mean(dim=tuple(range(weight.dim(), values.dim())))
        weight = weight.expand_as(values)
        values = values * weight
        if values.dim() > 1:
            values = values.reshape(values.shape[0], -1).mean(dim=1)
            weight = weight.reshape(weight.shape[0], -1).mean(dim=1)
        self._accumulate(values.sum(), weight.sum())

    def result_from_state(self, state: torch.Tensor) -> float:
        total, count = state.tolist()[:2]
        return total / count if count else 0.0


class Mean(_MeanState):
    """Weighted mean of the values it is given; state ``[weighted total, total weight]``.

    Values of shape ``(batch, ...)`` are first averaged to one value per sample, as in Keras.

    Example:
        >>> m = Mean("loss")
        >>> m.update_state(torch.tensor([1.0, 3.0]))
        >>> m.update_state(torch.tensor([5.0]), sample_weight=torch.tensor([2.0]))
        >>> float(m.result())
        3.5
    """

    def __init__(self, name: str = "mean") -> None:
        super().__init__(name)

    def update_state(self, values: TensorLike, sample_weight: TensorLike | None = None) -> None:
        with torch.no_grad():
            self._add(values, sample_weight)

    def add(self, total: torch.Tensor, weight: torch.Tensor | float) -> None:
        """Add an already-summed batch: ``total`` (weighted values) over ``weight`` (their weight).

        The training loop's loss uses it: it has the batch's sum already, and its size as a number.
        """
        self._accumulate(total.detach(), weight)  # detached: no autograd context needed


class MeanMetricWrapper(_MeanState):
    """Mean of ``fn(y_true, y_pred, **kwargs)``, a per-sample metric function.

    Example:
        >>> m = MeanMetricWrapper(lambda t, p: (t == p).float(), name="exact")
        >>> m.update_state(torch.tensor([1, 2]), torch.tensor([1, 0]))
        >>> float(m.result())
        0.5
    """

    def __init__(self, fn: Callable[..., torch.Tensor], name: str | None = None, **kwargs: Any) -> None:
        super().__init__(name or str(getattr(fn, "__name__", "metric")))
        self.fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None = None) -> None:
        with torch.no_grad():
            mask = getattr(y_pred, MASK_ATTR, None) if isinstance(y_pred, torch.Tensor) else None
            values = self.fn(y_true, y_pred, **self._fn_kwargs)
            if mask is not None:  # Keras: positions a mask hides do not count (no padding in the metric)
                sample_weight = mask_weights(sample_weight, mask, as_torch(values))
            self._add(values, sample_weight)

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, **self._fn_kwargs}


def _as_tensors(y_true: TensorLike, y_pred: TensorLike) -> tuple[torch.Tensor, torch.Tensor]:
    y_pred = as_torch(y_pred).detach()
    return as_torch(y_true, device=y_pred.device).detach(), y_pred


class Sum(Metric):
    """The (weighted) sum of the values it is given.

    Example:
        >>> m = Sum()
        >>> m.update_state(torch.tensor([1.0, 3.0]), sample_weight=torch.tensor([1.0, 0.5]))
        >>> float(m.result())
        2.5
    """

    num_state = 1

    def __init__(self, name: str = "sum") -> None:
        super().__init__(name)

    def update_state(self, values: TensorLike, sample_weight: TensorLike | None = None) -> None:
        with torch.no_grad():
            values = as_torch(values).detach().to(torch.float64)
            if sample_weight is not None:
                weight = as_torch(sample_weight, device=values.device).to(torch.float64)
                weight = weight.reshape(weight.shape + (1,) * max(values.dim() - weight.dim(), 0))
                values = values * weight
            self._accumulate(values.sum())

    def result_from_state(self, state: torch.Tensor) -> float:
        return float(state[0])
