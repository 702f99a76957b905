"""``tf.keras`` on PyTorch: models, layers, losses, metrics, optimizers, callbacks, datasets.

Example:
    >>> import unison as tf
    >>> model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax", input_shape=(784,))])
    >>> model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
"""

from unison.core.variables import Variable
from unison.distribute.remat import checkpoint_activations as remat
from unison.keras import (
    activations,
    applications,
    backend,
    callbacks,
    config,
    constraints,
    datasets,
    distillation,
    distribution,
    dtype_policies,
    experimental,
    initializers,
    layers,
    legacy,
    losses,
    metrics,
    mixed_precision,
    models,
    ops,
    optimizers,
    preprocessing,
    quantizers,
    random,
    regularizers,
    saving,
    tree,
    utils,
    visualization,
)
from unison.keras.backend.keras_tensor import KerasTensor
from unison.keras.backend.scopes import device, name_scope, version
from unison.keras.dtype_policies import DTypePolicy, FloatDTypePolicy
from unison.keras.initializers import Initializer
from unison.keras.layers import Input, InputSpec, Layer
from unison.keras.losses import Loss
from unison.keras.metrics import Metric
from unison.keras.models.model import Model
from unison.keras.models.sequential import Sequential
from unison.keras.optimizers import Optimizer
from unison.keras.quantizers import Quantizer
from unison.keras.regularizers import Regularizer

# Keras 3 exports loss scaling as keras.optimizers.LossScaleOptimizer too (the same class). It
# lives in mixed_precision/, which imports optimizers/, so this face, above both, hangs it there.
setattr(optimizers, "LossScaleOptimizer", mixed_precision.LossScaleOptimizer)  # noqa: B010

__all__ = [
    "DTypePolicy",
    "FloatDTypePolicy",
    "Initializer",
    "Input",
    "InputSpec",
    "Quantizer",
    "Regularizer",
    "device",
    "name_scope",
    "version",
    "KerasTensor",
    "Layer",
    "Loss",
    "Metric",
    "Model",
    "Optimizer",
    "Sequential",
    "Variable",
    "activations",
    "applications",
    "backend",
    "callbacks",
    "config",
    "constraints",
    "datasets",
    "distillation",
    "distribution",
    "dtype_policies",
    "experimental",
    "initializers",
    "layers",
    "legacy",
    "losses",
    "metrics",
    "mixed_precision",
    "models",
    "ops",
    "optimizers",
    "preprocessing",
    "quantizers",
    "random",
    "regularizers",
    "remat",
    "saving",
    "tree",
    "utils",
    "visualization",
]
