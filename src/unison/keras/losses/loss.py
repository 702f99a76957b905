"""Keras losses computed per example, so the trainer owns the reduction.

A ``Loss`` returns one value per example (``per_example``, shape ``(batch,)``). The trainer
sums them and divides by the GLOBAL batch size, which is what makes N replicas compute the
gradient one device computes (docs/semantics.md#loss); a loss must therefore never average over the
batch itself. ``loss(y_true, y_pred)`` is the batch mean, for standalone use as in Keras.

Numerical stability on probabilities follows TF Keras: when ``from_logits=False`` and
``y_pred`` is the output of ``activations.Softmax`` (or ``Sigmoid``), or of ``tf.nn.softmax`` /
``tf.nn.sigmoid`` / ``tf.sigmoid`` (as TF Keras does for Softmax/Sigmoid ops in graph mode), the loss
uses the logits attached to it; otherwise probabilities are clipped to ``[1e-7, 1 - 1e-7]`` before ``log``.

Example:
    >>> import torch
    >>> from unison.keras import losses
    >>> loss = losses.resolve("sparse_categorical_crossentropy")
    >>> y_pred = torch.tensor([[0.9, 0.1], [0.2, 0.8]])
    >>> [round(v, 4) for v in loss.per_example(torch.tensor([0, 1]), y_pred).tolist()]
    [0.1054, 0.2231]
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from unison.errors import format_choices
from unison.keras.activations import LOGITS_ATTR, SIGMOID_LOGITS_ATTR
from unison.keras.backend.keras_tensor import MASK_ATTR
from unison.keras.utils.input_hints import non_numeric_labels_error
from unison.ops.dtypes import as_torch

__all__ = [
    "binary_crossentropy",
    "categorical_crossentropy",
    "EPSILON",
    "Loss",
    "LossFunctionWrapper",
    "Reduction",
    "sparse_categorical_crossentropy",
    "squeeze_or_expand_to_same_rank",
]

EPSILON = 1e-7
"""Keras's ``backend.epsilon()``: the clipping margin for probabilities."""

TensorLike = torch.Tensor | np.ndarray | float | int | list[Any]
LabelArray = np.ndarray | torch.Tensor


def numeric_labels(y_true: Any) -> np.ndarray:
    """``y_true`` as a numpy array of numbers; strings or objects are a named error, not torch's."""
    labels = np.asarray(y_true)
    error = non_numeric_labels_error("y", labels)
    if error is not None:
        raise error
    return labels


def _as_tensors(y_true: TensorLike, y_pred: TensorLike) -> tuple[torch.Tensor, torch.Tensor]:
    # y_pred is returned unchanged when it already is a tensor: it may carry logits.
    if not isinstance(y_pred, torch.Tensor):
        y_pred = as_torch(np.asarray(y_pred), dtype=torch.get_default_dtype())
    if not isinstance(y_true, torch.Tensor):
        y_true = numeric_labels(y_true)
    return as_torch(y_true, device=y_pred.device), y_pred


def _float_like(y_true: torch.Tensor, y_pred: torch.Tensor) -> torch.Tensor:
    return y_true.to(y_pred.dtype if y_pred.is_floating_point() else torch.get_default_dtype())


def _logits_of(y_pred: torch.Tensor, attr: str, from_logits: bool, fn_name: str, op: str) -> tuple[torch.Tensor, bool]:
    """Return ``(tensor, from_logits)``, swapping in attached logits as TF Keras does."""
    logits = getattr(y_pred, attr, None)
    if logits is None:
        return y_pred, from_logits
    if from_logits:
        warnings.warn(
            f"`{fn_name}` received `from_logits=True`, but the `y_pred` argument was produced "
            f"by a {op} activation and thus does not represent logits. Was this intended?",
            stacklevel=3,
        )
    return logits, True


def _upcast(y_pred: torch.Tensor) -> torch.Tensor:
    # log and log_softmax lose too much in half precision; Keras computes losses in float32.
    return y_pred.float() if y_pred.dtype in (torch.float16, torch.bfloat16) else y_pred


def _align_ranks(y_true: torch.Tensor, y_pred: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Make element-wise losses see ``(batch, features)`` on both sides (Keras's squeeze/expand).

    Without this, ``y_true`` of shape ``(batch,)`` against ``y_pred`` of shape ``(batch, 1)``
    would broadcast to ``(batch, batch)`` and silently give a wrong loss.
    """
    if y_true.dim() == y_pred.dim() - 1:
        y_true = y_true.unsqueeze(-1)
    elif y_pred.dim() == y_true.dim() - 1:
        y_pred = y_pred.unsqueeze(-1)
    if y_pred.dim() <= 1:
        y_true, y_pred = y_true.reshape(-1, 1), y_pred.reshape(-1, 1)
    if y_true.shape != y_pred.shape:
        # Keras broadcasts once the ranks agree: TF's parameter-server tutorial fits Dense(10)
        # with loss="mse" to labels of shape (batch,), i.e. (batch, 1) against (batch, 10).
        try:
            shape = torch.broadcast_shapes(y_true.shape, y_pred.shape)  # type: ignore[no-untyped-call]  # unannotated in torch
        except RuntimeError:
            raise ValueError(
                "Arguments `y_true` and `y_pred` must have the same shape, or shapes that "
                f"broadcast. Received: y_true.shape={tuple(y_true.shape)}, "
                f"y_pred.shape={tuple(y_pred.shape)}"
            ) from None
        y_true, y_pred = y_true.expand(shape), y_pred.expand(shape)
    return y_true, y_pred


def _class_axis_last(x: torch.Tensor, axis: int) -> torch.Tensor:
    # Keras's `axis` argument: the axis that holds the classes (default the last).
    return x if axis in (-1, x.dim() - 1) else x.movedim(axis, -1)


def sparse_categorical_crossentropy(
    y_true: TensorLike,
    y_pred: TensorLike,
    from_logits: bool = False,
    ignore_class: int | None = None,
    axis: int = -1,
) -> torch.Tensor:
    """Cross-entropy with integer labels; returns a tensor of shape ``y_pred.shape[:-1]``.

    Labels may be int or float, of shape ``(batch,)`` or ``(batch, 1)``. ``axis`` is the class
    axis of ``y_pred``; positions whose label is ``ignore_class`` get a loss of 0 (Keras 3).

    Example:
        >>> import torch
        >>> loss = sparse_categorical_crossentropy(torch.tensor([1]), torch.tensor([[0.5, 0.5]]))
        >>> round(loss.item(), 4)
        0.6931
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_pred, from_logits = _logits_of(y_pred, LOGITS_ATTR, from_logits, "sparse_categorical_crossentropy", "Softmax")
    y_pred = _class_axis_last(_upcast(y_pred), axis)
    if ignore_class is not None:
        labels = y_true.squeeze(-1) if y_true.dim() == y_pred.dim() and y_true.shape[-1] == 1 else y_true
        valid = labels != ignore_class
        values = sparse_categorical_crossentropy(torch.where(valid, labels, 0), y_pred, from_logits)
        return values * valid
    if y_true.dim() == y_pred.dim() and y_true.dim() > 0 and y_true.shape[-1] == 1:
        y_true = y_true.squeeze(-1)
    if y_true.shape != y_pred.shape[:-1]:
        hint = ""
        if y_true.shape == y_pred.shape:
            # the shapes printed alike: say what is wrong (Keras's message alone reads as a bug)
            hint = (
                f" Sparse categorical cross-entropy takes one integer class index per example, of shape "
                f"{tuple(y_pred.shape[:-1])} (or {(*tuple(y_pred.shape[:-1]), 1)}), not a row of "
                f"{y_pred.shape[-1]} values per example: these labels look one-hot encoded. Fix: use "
                "CategoricalCrossentropy for one-hot labels, or pass the class indices (y.argmax(axis=-1))."
            )
        raise ValueError(
            "Arguments `y_true` and `y_pred` must have the same shape up until the last "
            f"dimension. Received: y_true.shape={tuple(y_true.shape)}, "
            f"y_pred.shape={tuple(y_pred.shape)}.{hint}"
        )
    if not from_logits:
        # TF Keras: log of the clipped probabilities, then a softmax cross-entropy on those,
        # which renormalises probabilities that do not sum to exactly 1.
        y_pred = torch.log(y_pred.clamp(EPSILON, 1.0 - EPSILON))
    if y_pred.dim() == 2:
        # (batch, classes): torch's fused log-softmax + pick, one kernel each way.
        return F.cross_entropy(y_pred, y_true.long(), reduction="none")
    log_probs = torch.log_softmax(y_pred, dim=-1)
    index = y_true.long().unsqueeze(-1)
    return -log_probs.gather(-1, index).squeeze(-1)


def categorical_crossentropy(
    y_true: TensorLike,
    y_pred: TensorLike,
    from_logits: bool = False,
    label_smoothing: float = 0.0,
    axis: int = -1,
) -> torch.Tensor:
    """Cross-entropy with one-hot (or soft) labels; returns shape ``y_pred.shape[:-1]``.

    Example:
        >>> import torch
        >>> loss = categorical_crossentropy(torch.tensor([[0.0, 1.0]]), torch.tensor([[0.5, 0.5]]))
        >>> round(loss.item(), 4)
        0.6931
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_pred, from_logits = _logits_of(y_pred, LOGITS_ATTR, from_logits, "categorical_crossentropy", "Softmax")
    y_pred = _class_axis_last(_upcast(y_pred), axis)
    y_true = _class_axis_last(_float_like(y_true, y_pred), axis)
    if y_true.shape != y_pred.shape:
        raise ValueError(
            "Arguments `y_true` and `y_pred` must have the same shape. Received: "
            f"y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
        )
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / y_pred.shape[-1]
    if from_logits:
        log_probs = torch.log_softmax(y_pred, dim=-1)
    else:
        y_pred = y_pred / y_pred.sum(dim=-1, keepdim=True)
        log_probs = torch.log(y_pred.clamp(EPSILON, 1.0 - EPSILON))
    return -(y_true * log_probs).sum(dim=-1)


def binary_crossentropy(
    y_true: TensorLike,
    y_pred: TensorLike,
    from_logits: bool = False,
    label_smoothing: float = 0.0,
    axis: int = -1,
) -> torch.Tensor:
    """Binary cross-entropy averaged over the last axis; returns ``y_pred.shape[:-1]``.

    A 1-D ``y_pred`` is read as one prediction per example.

    Example:
        >>> import torch
        >>> loss = binary_crossentropy(torch.tensor([1.0, 0.0]), torch.tensor([[0.5], [0.5]]))
        >>> [round(v, 4) for v in loss.tolist()]
        [0.6931, 0.6931]
    """
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_pred, from_logits = _logits_of(y_pred, SIGMOID_LOGITS_ATTR, from_logits, "binary_crossentropy", "Sigmoid")
    y_pred = _upcast(y_pred)
    y_true, y_pred = _align_ranks(_float_like(y_true, y_pred), y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        bce = F.binary_cross_entropy_with_logits(y_pred, y_true, reduction="none")
    else:
        p = y_pred.clamp(EPSILON, 1.0 - EPSILON)
        bce = -(y_true * torch.log(p) + (1.0 - y_true) * torch.log(1.0 - p))
    return bce.mean(dim=axis)


def output_mask(y_pred: Any) -> torch.Tensor | None:
    """The Keras mask a model output carries (``_keras_mask``), or None."""
    return getattr(y_pred, MASK_ATTR, None) if isinstance(y_pred, torch.Tensor) else None


def _weights_like(sample_weight: TensorLike, values: torch.Tensor) -> torch.Tensor:
    """Sample weights shaped to multiply ``values``: Keras's rank alignment, then trailing axes of 1.

    Example:
        >>> import torch
        >>> tuple(_weights_like(torch.tensor([1.0, 2.0]), torch.zeros(2, 3)).shape)
        (2, 1)
    """
    weight: torch.Tensor = as_torch(sample_weight, dtype=values.dtype, device=values.device)
    weight = squeeze_or_expand_to_same_rank(weight, values)[0]
    while weight.dim() < values.dim():
        weight = weight.unsqueeze(-1)
    return weight


def _aligned(weight: torch.Tensor | None, values: torch.Tensor) -> torch.Tensor | None:
    """``weight`` aligned and broadcast to ``values`` as Keras aligns it, or None when it does not fit."""
    if weight is None:
        return None
    w, v = squeeze_or_expand_to_same_rank(weight, values)
    if v.shape != values.shape:
        return None
    try:
        return torch.broadcast_to(w.to(device=v.device, dtype=v.dtype), v.shape)
    except RuntimeError:
        return None


def mask_weights(sample_weight: TensorLike | None, mask: torch.Tensor, values: torch.Tensor) -> TensorLike | None:
    """Sample weights times a Keras mask aligned to ``values`` (Keras's ``apply_mask``, ``reduction="sum"``).

    A mask that does not fit the values (another shape) is left out: the sample weights come back.

    Example:
        >>> import torch
        >>> mask_weights(None, torch.tensor([[True, False]]), torch.ones(1, 2)).tolist()
        [[1.0, 0.0]]
    """
    aligned = _aligned(mask, values)
    if aligned is None:
        return sample_weight
    return aligned if sample_weight is None else aligned * _weights_like(sample_weight, aligned)


def masked_examples(
    values: torch.Tensor, mask: torch.Tensor | None, weights: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(per-example sum(values * mask * weights) / positions, per-example sum(mask) / positions)``.

    The mask and the per-position weights are aligned to the values as Keras aligns them (a
    trailing axis of 1 dropped or added); one that still does not fit the values (another loss
    shape) is left out, and without a fitting mask ``counted`` is None (every example counts 1).

    Example:
        >>> import torch
        >>> per, counted = masked_examples(torch.tensor([[1.0, 3.0]]), torch.tensor([[True, False]]))
        >>> per.tolist(), counted.tolist()
        ([0.5], [0.5])
    """
    batch = int(values.shape[0]) if values.dim() else 1
    if values.dim() < 1:
        return _to_examples(values, batch, "loss"), None
    m, w = _aligned(mask, values), _aligned(weights, values)
    scaled = values if m is None else values * m
    scaled = scaled if w is None else scaled * w
    per_example = scaled.reshape(batch, -1).mean(dim=1)
    return per_example, None if m is None else m.reshape(batch, -1).mean(dim=1).detach()


def _to_examples(values: torch.Tensor, batch: int, name: str) -> torch.Tensor:
    """Reduce a per-element loss to one value per example (mean over non-batch axes).

    A scalar (a function that already averaged, e.g. ``return tf.reduce_mean(...)`` as keras.io's
    siamese example does) is given to every example: Keras 3 reduces whatever the function returns,
    so the batch loss is that scalar, and a sample weight scales it by the mean weight, as in Keras.
    """
    if values.dim() == 0:
        return values.expand(batch)
    if values.shape[0] != batch:
        raise ValueError(
            f"The loss function {name!r} must return one loss per example, a tensor of shape "
            f"(batch, ...) with batch={batch}, or one scalar for the batch. "
            f"Received: shape={tuple(values.shape)}"
        )
    return values.reshape(batch, -1).mean(dim=1) if values.dim() > 1 else values


def squeeze_or_expand_to_same_rank(x1: Any, x2: Any, expand_rank_1: bool = True) -> tuple[Any, Any]:
    """Keras 3's rank alignment before a loss function: a trailing axis of size 1 is removed (or,
    against a rank-1 tensor, added to it) so ``(batch,)`` labels never broadcast against
    ``(batch, 1)`` predictions to ``(batch, batch)``. Tensors of ranks further apart are unchanged.

    Example:
        >>> import torch
        >>> a, b = squeeze_or_expand_to_same_rank(torch.zeros(4), torch.zeros(4, 1))
        >>> tuple(a.shape), tuple(b.shape)
        ((4, 1), (4, 1))
    """
    if not (isinstance(x1, torch.Tensor) and isinstance(x2, torch.Tensor)):
        return x1, x2
    r1, r2 = x1.dim(), x2.dim()
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = x2.unsqueeze(-1)
        else:
            x1 = x1.squeeze(-1)
    elif r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = x1.unsqueeze(-1)
        else:
            x2 = x2.squeeze(-1)
    return x1, x2


class Reduction:
    """Keras 2's names for a loss's reduction (``keras.losses.Reduction``); Keras 3 takes the strings.

    ``NONE`` returns one loss per example; ``SUM`` their sum; ``SUM_OVER_BATCH_SIZE`` (and
    ``AUTO``) their sum divided by the number of examples.
    """

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)


# Keras 3 also accepts None for "none" and "mean"/"mean_with_sample_weight"
_REDUCTIONS = (*Reduction.all(), "mean", "mean_with_sample_weight")


def _check_reduction(reduction: str | None) -> str:
    if reduction is None:
        return Reduction.NONE
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"Invalid value for argument `reduction`. Expected one of {format_choices(_REDUCTIONS)}, None"
            f" (or keras.losses.Reduction.NONE/SUM/SUM_OVER_BATCH_SIZE/AUTO). Received: reduction={reduction!r}"
        )
    return reduction


class Loss:
    """Base class: subclasses implement ``per_example``.

    Attributes:
        name: the Keras name, e.g. ``"sparse_categorical_crossentropy"``.
        reduction: what calling the loss returns (``fit`` always uses the per-example losses
            and divides by the global batch size): ``"sum_over_batch_size"`` (default, also
            ``"auto"``/``"mean"``), ``"sum"``, ``"none"``/``None`` (one loss per example), or
            ``"mean_with_sample_weight"`` (divided by the sum of the sample weights).
    """

    def __init__(self, name: str | None = None, reduction: str | None = "sum_over_batch_size") -> None:
        self.name = name or _snake_case(type(self).__name__)
        self.reduction = _check_reduction(reduction)

    def per_example(self, y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
        """Return the loss of each example, shape ``(batch,)``; no reduction over the batch.

        A subclass written as Keras's guides write it overrides ``call(y_true, y_pred)``
        instead (the unreduced losses, e.g. a mean over the last axis); its values are averaged
        over every axis but the batch, as Keras reduces them.
        """
        if type(self).call is Loss.call:
            raise NotImplementedError(
                f"{type(self).__name__} must implement call(y_true, y_pred) (Keras) or per_example(y_true, y_pred)."
            )
        y_true, y_pred = _as_tensors(y_true, y_pred)
        values = as_torch(self.call(y_true, y_pred))
        return _to_examples(values, int(y_pred.shape[0]), self.name)

    def element_losses(self, y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor | None:
        """The unreduced losses, shape ``(batch, ...)`` (``None`` when the loss gives only per-example values)."""
        if type(self).call is Loss.call:
            return None
        y_true, y_pred = _as_tensors(y_true, y_pred)
        return as_torch(self.call(y_true, y_pred))

    def masked_per_example(
        self, y_true: TensorLike, y_pred: TensorLike, mask: torch.Tensor | None, weights: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(per-example losses, fraction of each example's positions that count)`` under a Keras mask.

        Keras weights the unreduced losses by the mask of ``y_pred`` (``Embedding(mask_zero=True)``
        carried to the output) and divides by the positions that count; each example here gives
        ``sum(losses * mask) / positions`` and counts ``sum(mask) / positions``, so the batch's loss
        is ``sum(losses * mask) / sum(mask)`` on one replica or N. ``weights`` are per-position sample
        weights (``(batch, steps)``, Keras's temporal weights): they scale the losses, not the count.
        A loss whose values cannot take the mask (per-example values only, or another shape)
        ignores it, as before: ``counted`` is None.
        """
        values = self.element_losses(y_true, y_pred)
        if values is None:
            return self.per_example(y_true, y_pred), None
        return masked_examples(values, mask, weights)

    def call(self, y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
        """Keras's hook for subclasses: the loss values of each example (any shape ``(batch, ...)``).

        Example:
            >>> import torch
            >>> class AbsError(Loss):
            ...     def call(self, y_true, y_pred):
            ...         return (y_true - y_pred).abs().mean(dim=-1)
            >>> float(AbsError()(torch.zeros(2, 2), torch.ones(2, 2)))
            1.0
        """
        raise NotImplementedError

    def __call__(self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None = None) -> torch.Tensor:
        """Return the (weighted) per-example losses, reduced as ``self.reduction`` says.

        For standalone use and custom loops; the trainer calls ``per_example`` instead and
        divides by the global batch size.
        """
        if not self.__dict__.get("_agreement_noted"):
            self._note_for_agreement()
        mask = output_mask(y_pred)
        if self.reduction in (Reduction.NONE, Reduction.SUM):
            # Keras reduces the unreduced losses: "none" gives them back ((batch, steps) for a
            # sequence), "sum" adds every one of them
            elements = self.element_losses(y_true, y_pred)
            if elements is not None and elements.dim() > 0:
                hidden = _aligned(mask, elements)
                elements = elements if hidden is None else elements * hidden
                if sample_weight is not None:
                    elements = elements * _weights_like(sample_weight, elements)
                return elements if self.reduction == Reduction.NONE else elements.sum()
        if mask is not None:
            return self._masked_call(y_true, y_pred, sample_weight, mask)
        values = self.per_example(y_true, y_pred)
        weight = None
        if sample_weight is not None:
            weight = as_torch(sample_weight, dtype=values.dtype, device=values.device).reshape(-1)
            values = values * weight
        if self.reduction == Reduction.NONE:
            return values
        if self.reduction == Reduction.SUM:
            return values.sum()
        if self.reduction == "mean_with_sample_weight" and weight is not None:
            return values.sum() / weight.sum().clamp(min=1e-12)
        return values.sum() / max(values.shape[0], 1)

    def _masked_call(
        self, y_true: TensorLike, y_pred: TensorLike, sample_weight: TensorLike | None, mask: torch.Tensor
    ) -> torch.Tensor:
        """``__call__`` for an output with a Keras mask: the mean is over the positions that count."""
        values, counted = self.masked_per_example(y_true, y_pred, mask)
        if sample_weight is not None:
            values = values * as_torch(sample_weight, dtype=values.dtype, device=values.device).reshape(-1)
        if self.reduction == Reduction.NONE:
            return values
        if self.reduction == Reduction.SUM:
            return values.sum()
        if counted is None:
            return values.sum() / max(values.shape[0], 1)
        return values.sum() / (counted.sum() + EPSILON)

    def _note_for_agreement(self) -> None:
        """In a replica's step (strategy.run, fit), replicas compare this loss's class and config."""
        from unison.distribute.strategy import in_strategy_run

        if in_strategy_run():
            from unison.optim.agreement import note

            self.__dict__["_agreement_noted"] = True
            note(f"loss ({self.name})", self)

    def check_targets(self, y_true: LabelArray, num_outputs: int | None) -> None:
        """Validate the whole label array once, before training (no-op by default).

        Raises:
            ValueError: when the labels cannot be used with this loss and a model with
                ``num_outputs`` outputs.
        """

    def get_config(self) -> dict[str, Any]:
        """Return the constructor arguments."""
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Loss:
        """The loss ``get_config()`` describes (Keras's ``Loss.from_config``).

        Example:
            >>> from unison.keras.losses import Huber
            >>> Huber.from_config(Huber(delta=0.5).get_config()).get_config()["delta"]
            0.5
        """
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


def _snake_case(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


class LossFunctionWrapper(Loss):
    """Wraps ``fn(y_true, y_pred, **kwargs) -> per-example tensor`` as a ``Loss``.

    Example:
        >>> import torch
        >>> loss = LossFunctionWrapper(lambda t, p: (t - p).abs(), name="l1")
        >>> loss.per_example(torch.zeros(2, 3), torch.ones(2, 3)).tolist()
        [1.0, 1.0]
    """

    def __init__(
        self,
        fn: Callable[..., torch.Tensor],
        name: str | None = None,
        reduction: str | None = "sum_over_batch_size",
        **kwargs: Any,
    ) -> None:
        super().__init__(name or getattr(fn, "__name__", "loss"), reduction=reduction)
        self.fn = fn
        self._fn_kwargs = kwargs

    def per_example(self, y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
        return _to_examples(self.element_losses(y_true, y_pred), int(np.shape(y_pred)[0]), self.name)

    def element_losses(self, y_true: TensorLike, y_pred: TensorLike) -> torch.Tensor:
        if isinstance(y_pred, torch.Tensor) and isinstance(y_true, np.ndarray | list):
            y_true = as_torch(numeric_labels(y_true), device=y_pred.device)
        # Keras 3's LossFunctionWrapper aligns the ranks before calling the function.
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        values = self.fn(y_true, y_pred, **self._fn_kwargs)
        if isinstance(values, float | int | np.ndarray | np.generic) and not isinstance(values, bool):
            values = as_torch(np.asarray(values), dtype=torch.get_default_dtype())
        if not isinstance(values, torch.Tensor):
            raise TypeError(
                f"The loss function {self.name!r} must return a tensor of per-example losses. "
                f"Received: {type(values).__name__}"
            )
        return values

    def get_config(self) -> dict[str, Any]:
        return {"name": self.name, "reduction": self.reduction, **self._fn_kwargs}


def _pair(y_true: TensorLike, y_pred: TensorLike) -> tuple[torch.Tensor, torch.Tensor]:
    y_true, y_pred = _as_tensors(y_true, y_pred)
    y_pred = _upcast(y_pred)
    return _align_ranks(_float_like(y_true, y_pred), y_pred)


_DEFAULT = "sum_over_batch_size"
