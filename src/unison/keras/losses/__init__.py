"""``keras.losses``: the registry of Keras losses (``get``) over the modules that define them.

This package owns the loss classes and functions. ``loss.py`` holds the base (``Loss``,
``LossFunctionWrapper``, the reduction and the shared helpers) and the mean-error losses;
``crossentropy.py``, ``focal.py``, ``regression.py``, ``hinge.py`` and ``probabilistic.py`` define the other kinds on that base. The modules import
only ``loss.py`` (and ``keras.activations``), never this face, so the registry below, which
imports them all, closes no circle. Nothing here imports layers, models or trainers.

Example:
    >>> from unison.keras import losses
    >>> losses.resolve("mse").name
    'mean_squared_error'
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, cast, overload

import torch

from unison.errors import did_you_mean, format_choices
from unison.keras.losses.crossentropy import (
    BinaryCrossentropy,
    BinaryFocalCrossentropy,
    CategoricalCrossentropy,
    SparseCategoricalCrossentropy,
    binary_focal_crossentropy,
)
from unison.keras.losses.focal import CategoricalFocalCrossentropy, categorical_focal_crossentropy
from unison.keras.losses.hinge import CategoricalHinge, Hinge, SquaredHinge, categorical_hinge, hinge, squared_hinge
from unison.keras.losses.loss import (
    EPSILON,
    Loss,
    LossFunctionWrapper,
    Reduction,
    _snake_case,
    binary_crossentropy,
    categorical_crossentropy,
    sparse_categorical_crossentropy,
    squeeze_or_expand_to_same_rank,
)
from unison.keras.losses.overlap import (
    CategoricalGeneralizedCrossEntropy,
    Dice,
    Tversky,
    categorical_generalized_cross_entropy,
    dice,
    tversky,
)
from unison.keras.losses.probabilistic import KLDivergence, Poisson, kl_divergence, poisson
from unison.keras.losses.regression import (
    CosineSimilarity,
    Huber,
    LogCosh,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredError,
    MeanSquaredLogarithmicError,
    cosine_similarity,
    huber,
    log_cosh,
    mean_absolute_error,
    mean_absolute_percentage_error,
    mean_squared_error,
    mean_squared_logarithmic_error,
)
from unison.keras.losses.structured import CTC, Circle, circle, ctc
from unison.keras.saving.serialization import register_namespace

__all__ = [
    "EPSILON",
    "BinaryCrossentropy",
    "CategoricalCrossentropy",
    "Loss",
    "LossFunctionWrapper",
    "MeanAbsoluteError",
    "MeanSquaredError",
    "Reduction",
    "SparseCategoricalCrossentropy",
    "binary_crossentropy",
    "categorical_crossentropy",
    "get",
    "MeanAbsolutePercentageError",
    "MeanSquaredLogarithmicError",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_error",
    "mean_squared_logarithmic_error",
    "sparse_categorical_crossentropy",
]

_CLASSES: tuple[type[Loss], ...] = (
    SparseCategoricalCrossentropy,
    CategoricalCrossentropy,
    BinaryCrossentropy,
    MeanSquaredError,
    MeanAbsoluteError,
    MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError,
)
_REGISTRY: dict[str, type[Loss]] = {
    **{cls.__name__: cls for cls in _CLASSES},
    **{_snake_case(cls.__name__): cls for cls in _CLASSES},
    "mse": MeanSquaredError,
    "MSE": MeanSquaredError,
    "mae": MeanAbsoluteError,
    "MAE": MeanAbsoluteError,
    "mape": MeanAbsolutePercentageError,
    "MAPE": MeanAbsolutePercentageError,
    "msle": MeanSquaredLogarithmicError,
    "MSLE": MeanSquaredLogarithmicError,
}


_EXTRA: tuple[type[Loss], ...] = (
    BinaryFocalCrossentropy,
    CategoricalFocalCrossentropy,
    Huber,
    LogCosh,
    KLDivergence,
    Poisson,
    CosineSimilarity,
    Hinge,
    SquaredHinge,
    CategoricalHinge,
    Dice,
    Tversky,
    CategoricalGeneralizedCrossEntropy,
    Circle,
)
_CLASSES += _EXTRA
_REGISTRY.update({cls.__name__: cls for cls in _EXTRA})
_REGISTRY.update({_snake_case(cls.__name__): cls for cls in _EXTRA})
_REGISTRY.update(
    {
        "huber_loss": Huber,
        "log_cosh": LogCosh,
        "logcosh": LogCosh,
        "kld": KLDivergence,
        "KLD": KLDivergence,
        "kl_divergence": KLDivergence,
        "kullback_leibler_divergence": KLDivergence,
        "CTC": CTC,
    }
)

# Keras's function spellings: `compile(loss=keras.losses.mse)`, `keras.losses.kld(y, p)`.
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh

__all__ += [
    "BinaryFocalCrossentropy",
    "CategoricalHinge",
    "CosineSimilarity",
    "Hinge",
    "Huber",
    "KLD",
    "KLDivergence",
    "LogCosh",
    "MAE",
    "MAPE",
    "MSE",
    "MSLE",
    "Poisson",
    "SquaredHinge",
    "categorical_hinge",
    "cosine_similarity",
    "hinge",
    "huber",
    "kl_divergence",
    "kld",
    "kullback_leibler_divergence",
    "log_cosh",
    "logcosh",
    "mae",
    "mape",
    "mse",
    "msle",
    "poisson",
    "squared_hinge",
    "squeeze_or_expand_to_same_rank",
    "binary_focal_crossentropy",
    "CategoricalFocalCrossentropy",
    "categorical_focal_crossentropy",
    "CategoricalGeneralizedCrossEntropy",
    "Dice",
    "Tversky",
    "categorical_generalized_cross_entropy",
    "dice",
    "tversky",
    "CTC",
    "Circle",
    "circle",
    "ctc",
]

LossLike = str | Loss | Callable[..., torch.Tensor] | None


def get(identifier: LossLike | type[Loss]) -> Loss | Callable[..., torch.Tensor] | None:
    """Keras's ``losses.get``: a function's name gives the function, a class's name an instance.

    ``get("mean_squared_error")`` is the per-example function, ``get("MeanSquaredError")`` a
    ``MeanSquaredError()``; a ``Loss`` or a callable comes back as it is, ``None`` as ``None``.
    ``compile`` uses :func:`resolve`, which always gives a ``Loss``.

    Raises:
        ValueError: for an unknown name or an identifier that is not callable.

    Example:
        >>> get("mse") is mean_squared_error
        True
    """
    if isinstance(identifier, str):
        function = _FUNCTIONS.get(identifier)
        if function is not None:
            return function
    if callable(identifier) and not isinstance(identifier, type):
        return cast(Callable[..., torch.Tensor], identifier)
    return resolve(identifier)


@overload
def resolve(identifier: None) -> None: ...


@overload
def resolve(identifier: str | Loss | type[Loss] | Callable[..., torch.Tensor]) -> Loss: ...


def resolve(identifier: LossLike | type[Loss]) -> Loss | None:
    """Resolve a Keras loss identifier to a ``Loss`` (what ``compile(loss=...)`` needs).

    Args:
        identifier: a Keras name (``"sparse_categorical_crossentropy"``, ``"mse"``,
            ``"BinaryCrossentropy"``...), a ``Loss`` instance (returned as is) or class, a plain
            callable ``fn(y_true, y_pred) -> per-example tensor`` (wrapped), or ``None``
            (returned as ``None``, as in Keras).

    Raises:
        ValueError: for an unknown name or an identifier that is not callable.

    Example:
        >>> resolve("mse").name
        'mean_squared_error'
    """
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        if identifier not in _REGISTRY:
            known = [k for k in _REGISTRY if k.islower()]
            raise ValueError(
                f"Unknown loss function: {identifier!r}{did_you_mean(identifier, _REGISTRY)}. Expected one of: "
                f"{format_choices(known)} (or a class name such as "
                f"'SparseCategoricalCrossentropy'). Received: loss={identifier!r}"
            )
        return _REGISTRY[identifier]()
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier):
        return LossFunctionWrapper(cast(Callable[..., torch.Tensor], identifier))
    raise ValueError(
        "Could not interpret loss identifier: expected a loss name such as "
        f"'sparse_categorical_crossentropy', a Loss or a callable. Received: loss={identifier!r}"
    )


# the per-example functions by the names Keras's get() knows (its own names and Keras 2's aliases)
_FUNCTIONS: dict[str, Callable[..., torch.Tensor]] = {
    name: value
    for name, value in globals().items()
    if name in __all__ and name.islower() and callable(value) and not isinstance(value, type) and name != "get"
}


def serialize(loss: Any) -> Any:
    """Keras's serialized form of a loss (``{"module", "class_name", "config", "registered_name"}``).

    Example:
        >>> serialize(Huber())["class_name"]
        'Huber'
    """
    from unison.keras.saving.object_io import serialize_keras_object

    return serialize_keras_object(loss)


def deserialize(config: Any, custom_objects: Any = None, **kwargs: Any) -> Any:
    """The loss a :func:`serialize` dict (or a name) describes.

    Raises:
        ValueError: a name this module does not export.
    """
    from unison.keras.saving.object_io import deserialize_keras_object

    return deserialize_keras_object(config, custom_objects, namespace=sys.modules[__name__], what="loss")


# load_model finds this package's classes by name through the registry (saving/serialization.py).
register_namespace("losses", sys.modules[__name__], Loss, LossFunctionWrapper)

__all__ += ["deserialize", "serialize"]
