"""``keras.metrics``: the registry of Keras metrics (``get``) over the modules that define them.

This package owns the metric classes. ``metric.py`` holds the base (``Metric``, ``Mean``,
``MeanMetricWrapper``: additive states that replicas SUM once when read) and the accuracy and
mean-error metrics; ``confusion.py``, ``iou.py`` and ``regression.py`` define the other kinds on
that base. The modules import only ``metric.py``, ``keras.losses`` (metrics over losses) and
``unison.distribute`` (reading a state across replicas), never this face, so the registry below
closes no circle. Nothing here imports layers, models or trainers.

Example:
    >>> from unison.keras import metrics
    >>> metrics.get("acc", (32, 1), (32, 1)).__class__.__name__
    'BinaryAccuracy'
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, cast

import torch

from unison.errors import did_you_mean, format_choices
from unison.keras import losses
from unison.keras.losses import (
    KLD,
    MAE,
    MAPE,
    MSE,
    MSLE,
    binary_crossentropy,
    categorical_crossentropy,
    categorical_hinge,
    hinge,
    huber,
    kl_divergence,
    kld,
    log_cosh,
    logcosh,
    mae,
    mape,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
    mse,
    msle,
    poisson,
    sparse_categorical_crossentropy,
    squared_hinge,
)
from unison.keras.metrics import experimental
from unison.keras.metrics.accuracy import (
    BinaryAccuracy,
    CategoricalAccuracy,
    SparseCategoricalAccuracy,
    SparseTopKCategoricalAccuracy,
    TopKCategoricalAccuracy,
    binary_accuracy,
    categorical_accuracy,
    sparse_categorical_accuracy,
    sparse_top_k_categorical_accuracy,
    top_k_categorical_accuracy,
)
from unison.keras.metrics.confusion import (
    AUC,
    Accuracy,
    FalseNegatives,
    FalsePositives,
    Precision,
    PrecisionAtRecall,
    Recall,
    RecallAtPrecision,
    SensitivityAtSpecificity,
    SpecificityAtSensitivity,
    TrueNegatives,
    TruePositives,
)
from unison.keras.metrics.f_score import F1Score, FBetaScore
from unison.keras.metrics.hinge import CategoricalHinge, Hinge, SquaredHinge
from unison.keras.metrics.host_metrics import MeanTensor
from unison.keras.metrics.iou import BinaryIoU, IoU, MeanIoU, OneHotIoU, OneHotMeanIoU
from unison.keras.metrics.metric import Mean, MeanMetricWrapper, Metric, Shape, Sum, _snake
from unison.keras.metrics.probabilistic import (
    BinaryCrossentropy,
    CategoricalCrossentropy,
    KLDivergence,
    Poisson,
    SparseCategoricalCrossentropy,
)
from unison.keras.metrics.regression import (
    CosineSimilarity,
    LogCoshError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    MeanSquaredLogarithmicError,
    R2Score,
    RootMeanSquaredError,
    cosine_similarity,
)
from unison.keras.saving.serialization import register_namespace

# importing the submodule ``metrics.hinge`` bound the package attribute ``hinge`` to it: the public
# ``keras.metrics.hinge`` is the loss function, as in Keras
hinge = losses.hinge  # noqa: F811

__all__ = [
    "BinaryAccuracy",
    "CategoricalAccuracy",
    "Mean",
    "MeanAbsoluteError",
    "MeanAbsolutePercentageError",
    "MeanMetricWrapper",
    "MeanSquaredLogarithmicError",
    "MeanSquaredError",
    "Metric",
    "SparseCategoricalAccuracy",
    "SparseTopKCategoricalAccuracy",
    "TopKCategoricalAccuracy",
    "binary_accuracy",
    "categorical_accuracy",
    "get",
    "sparse_categorical_accuracy",
    "sparse_top_k_categorical_accuracy",
    "top_k_categorical_accuracy",
]


def _crossentropy(fn: Callable[..., torch.Tensor]) -> Callable[[str], Metric]:
    return lambda name: MeanMetricWrapper(fn, name=name)


_CLASSES: tuple[type[Metric], ...] = (
    SparseCategoricalAccuracy,
    CategoricalAccuracy,
    BinaryAccuracy,
    TopKCategoricalAccuracy,
    SparseTopKCategoricalAccuracy,
    MeanSquaredError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
)
# Each factory takes the metric's name: a string identifier names the metric in the logs.
_REGISTRY: dict[str, Callable[[str], Metric]] = {
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "categorical_accuracy": CategoricalAccuracy,
    "binary_accuracy": BinaryAccuracy,
    "top_k_categorical_accuracy": lambda name: TopKCategoricalAccuracy(name=name),
    "sparse_top_k_categorical_accuracy": lambda name: SparseTopKCategoricalAccuracy(name=name),
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "mape": MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
    "msle": MeanSquaredLogarithmicError,
    "sparse_categorical_crossentropy": _crossentropy(losses.sparse_categorical_crossentropy),
    "categorical_crossentropy": _crossentropy(losses.categorical_crossentropy),
    "binary_crossentropy": _crossentropy(losses.binary_crossentropy),
}
_RESOLVED = {"accuracy", "acc", "crossentropy", "ce"}


def _is_loss(loss: Any, cls: type, name: str) -> bool:
    if isinstance(loss, str):
        return loss in (name, cls.__name__)
    return isinstance(loss, cls) or getattr(loss, "name", None) == name


def _label_kind(y_true_shape: Shape, y_pred_shape: Shape, loss: Any) -> str:
    """Return ``"binary"``, ``"sparse_categorical"`` or ``"categorical"`` as Keras resolves
    ``"accuracy"``: one output (or a binary loss) is binary; labels of lower rank than the
    predictions, or a trailing label dimension of 1, are sparse; anything else is one-hot."""
    if _is_loss(loss, losses.BinaryCrossentropy, "binary_crossentropy"):
        return "binary"
    sparse_loss = _is_loss(loss, losses.SparseCategoricalCrossentropy, "sparse_categorical_crossentropy")
    if y_pred_shape is None:
        return "sparse_categorical" if sparse_loss else "categorical"
    y_pred_shape = tuple(y_pred_shape)
    if len(y_pred_shape) <= 1 or y_pred_shape[-1] == 1:
        return "binary"
    if y_true_shape is None:
        return "sparse_categorical" if sparse_loss else "categorical"
    y_true_shape = tuple(y_true_shape)
    if len(y_true_shape) < len(y_pred_shape) or (len(y_true_shape) == len(y_pred_shape) and y_true_shape[-1] == 1):
        return "sparse_categorical"
    return "categorical"


MetricLike = str | Metric | losses.Loss | Callable[..., torch.Tensor]


def get(
    identifier: MetricLike,
    y_true_shape: Shape = None,
    y_pred_shape: Shape = None,
    loss: Any = None,
) -> Metric:
    """Resolve a Keras metric identifier to a ``Metric``.

    ``"accuracy"``/``"acc"`` (and ``"crossentropy"``/``"ce"``) become the binary, sparse
    categorical or categorical variant depending on the label and prediction shapes and the
    loss, as in Keras. A string identifier is also the metric's name in the logs.

    Args:
        identifier: a Keras metric name, a ``Metric`` instance (returned as is) or class, a
            ``losses.Loss`` (its per-example values are averaged), or a callable
            ``fn(y_true, y_pred) -> per-sample tensor`` (averaged, named after the function).
        y_true_shape: shape of the labels (a batch of them or the whole array).
        y_pred_shape: shape of the model's output.
        loss: the compiled loss (name or ``Loss``), used to recognise binary problems.

    Raises:
        ValueError: for an unknown name or an identifier that is not callable.

    Example:
        >>> get("acc", (32, 1), (32, 1)).__class__.__name__
        'BinaryAccuracy'
    """
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, losses.Loss):
        return MeanMetricWrapper(identifier.per_example, name=identifier.name)
    if isinstance(identifier, str):
        if identifier.lower() in _RESOLVED:
            kind = _label_kind(y_true_shape, y_pred_shape, loss)
            suffix = "accuracy" if identifier.lower() in ("accuracy", "acc") else "crossentropy"
            return _REGISTRY[f"{kind}_{suffix}"](identifier)
        if identifier in _REGISTRY:
            return _REGISTRY[identifier](identifier)
        for cls in _CLASSES:
            if cls.__name__ == identifier:
                return cls()
        raise ValueError(
            f"Unknown metric function: {identifier!r}"
            f"{did_you_mean(identifier, set(_REGISTRY) | _RESOLVED | {c.__name__ for c in _CLASSES})}. Expected one of: "
            f"{format_choices(set(_REGISTRY) | _RESOLVED)} (or a class name such as "
            f"'SparseCategoricalAccuracy'). Received: metric={identifier!r}"
        )
    if callable(identifier):
        return MeanMetricWrapper(cast(Callable[..., torch.Tensor], identifier))
    raise ValueError(
        "Could not interpret metric identifier: expected a metric name such as 'accuracy', a "
        f"Metric or a callable. Received: metric={identifier!r}"
    )


_CLASSES += (Accuracy, Precision, Recall, AUC)
_REGISTRY.update(
    {
        "precision": lambda name: Precision(name=name),
        "recall": lambda name: Recall(name=name),
        "auc": lambda name: AUC(name=name),
    }
)
__all__ += ["AUC", "Accuracy", "Precision", "Recall"]


# Classes that need no constructor argument are also reachable by their snake-case name, as
# Keras 3's metrics.get resolves them ("root_mean_squared_error", "r2_score", "f1_score").
_NO_ARGS: tuple[type[Metric], ...] = (
    LogCoshError,
    Poisson,
    KLDivergence,
    CosineSimilarity,
    Hinge,
    SquaredHinge,
    CategoricalHinge,
    RootMeanSquaredError,
    R2Score,
    F1Score,
    FBetaScore,
    TruePositives,
    FalsePositives,
    TrueNegatives,
    FalseNegatives,
)
_CLASSES += _NO_ARGS + (
    BinaryCrossentropy,
    CategoricalCrossentropy,
    SparseCategoricalCrossentropy,
    Sum,
)


def _named(cls: type[Metric]) -> Callable[[str], Metric]:
    def make(name: str) -> Metric:
        return cls(name=name)  # every class in _NO_ARGS takes name=

    return make


_REGISTRY.update({_snake(cls.__name__): _named(cls) for cls in _NO_ARGS})
_REGISTRY.update(
    {
        "logcosh": lambda name: LogCoshError(name=name),
        "log_cosh": lambda name: LogCoshError(name=name),
        "kld": lambda name: KLDivergence(name=name),
        "kullback_leibler_divergence": lambda name: KLDivergence(name=name),
        "rmse": lambda name: RootMeanSquaredError(name=name),
    }
)
__all__ += [
    "BinaryCrossentropy",
    "BinaryIoU",
    "CategoricalCrossentropy",
    "CategoricalHinge",
    "CosineSimilarity",
    "F1Score",
    "FBetaScore",
    "FalseNegatives",
    "FalsePositives",
    "Hinge",
    "IoU",
    "KLDivergence",
    "LogCoshError",
    "MeanIoU",
    "OneHotIoU",
    "OneHotMeanIoU",
    "Poisson",
    "PrecisionAtRecall",
    "R2Score",
    "RecallAtPrecision",
    "RootMeanSquaredError",
    "SensitivityAtSpecificity",
    "SparseCategoricalCrossentropy",
    "SpecificityAtSensitivity",
    "SquaredHinge",
    "Sum",
    "TrueNegatives",
    "TruePositives",
]


__all__ += [
    "KLD",
    "MAE",
    "MAPE",
    "MSE",
    "MSLE",
    "binary_crossentropy",
    "categorical_crossentropy",
    "categorical_hinge",
    "cosine_similarity",
    "hinge",
    "huber",
    "kl_divergence",
    "kld",
    "log_cosh",
    "logcosh",
    "mae",
    "mape",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "mean_squared_logarithmic_error",
    "mse",
    "msle",
    "poisson",
    "sparse_categorical_crossentropy",
    "squared_hinge",
]

# load_model finds this package's classes by name through the registry (saving/serialization.py).
register_namespace("metrics", sys.modules[__name__], Metric, MeanMetricWrapper)


def serialize(metric: Any) -> Any:
    """Keras's serialized form of a metric (``{"module", "class_name", "config", "registered_name"}``).

    Example:
        >>> serialize(Mean())["class_name"]
        'Mean'
    """
    from unison.keras.saving.object_io import serialize_keras_object

    return serialize_keras_object(metric)


def deserialize(config: Any, custom_objects: Any = None, **kwargs: Any) -> Any:
    """The metric a :func:`serialize` dict (or a name) describes.

    Raises:
        ValueError: a name this module does not export.
    """
    from unison.keras.saving.object_io import deserialize_keras_object

    return deserialize_keras_object(config, custom_objects, namespace=sys.modules[__name__], what="metric")


# Keras 3's correlation metrics; Keras 2's and 3's metric spellings of loss functions
from unison.keras.metrics.correlation import (  # noqa: E402
    ConcordanceCorrelation,
    PearsonCorrelation,
    concordance_correlation,
    pearson_correlation,
)
from unison.keras.metrics.regression import MeanRelativeError  # noqa: E402

binary_focal_crossentropy = losses.binary_focal_crossentropy
categorical_focal_crossentropy = losses.categorical_focal_crossentropy
kullback_leibler_divergence = losses.kl_divergence

__all__ += ["deserialize", "serialize"]
__all__ += [
    "ConcordanceCorrelation",
    "MeanRelativeError",
    "PearsonCorrelation",
    "binary_focal_crossentropy",
    "categorical_focal_crossentropy",
    "concordance_correlation",
    "kullback_leibler_divergence",
    "pearson_correlation",
]
__all__ += ["MeanTensor", "experimental"]
