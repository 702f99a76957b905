"""More Keras applications against Keras 3 and Keras 2: the families added after the first eleven.

Each family's small variant is built with ``weights=None`` on unison and on Keras, without its
top, and compared on its parameter count, the shapes of its weights in ``model.weights`` order,
the names of its layers that hold weights (Keras 3's names; Keras 2-only families: Keras 2's) and
its output shape; ``test_*_outputs`` loads the same arrays (``set_weights``) into both and
compares predictions. The big variants of each family are compared on structure only (their
numbers are the small variant's blocks, repeated and widened), and every builder's edge case is
an input below the family's minimum size, which both refuse with the same error class.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")

# (module, constructor, input shape, keyword arguments): structure compared in both dialects
STRUCTURES = (
    ("mobilenet", "MobileNet", (32, 32, 3), {"alpha": 0.5}),
    ("inception_resnet_v2", "InceptionResNetV2", (75, 75, 3), {}),
    # builders implemented before, untested until now
    ("densenet", "DenseNet201", (32, 32, 3), {}),
    ("efficientnet", "EfficientNetB1", (32, 32, 3), {}),
    ("efficientnet", "EfficientNetB2", (32, 32, 3), {}),
    ("efficientnet", "EfficientNetB3", (32, 32, 3), {}),
    ("efficientnet", "EfficientNetB4", (32, 32, 3), {}),
    ("efficientnet", "EfficientNetB5", (32, 32, 3), {}),
    ("efficientnet", "EfficientNetB6", (32, 32, 3), {}),
    ("efficientnet", "EfficientNetB7", (32, 32, 3), {}),
    ("resnet_v2", "ResNet101V2", (32, 32, 3), {}),
    ("resnet_v2", "ResNet152V2", (32, 32, 3), {}),
    ("resnet", "ResNet152", (32, 32, 3), {}),
)
STRUCTURE_NAMES = tuple(
    name
    for module, builder, _, _ in STRUCTURES
    for name in (f"keras:applications.{builder}", f"keras:applications.{module}.{builder}")
)
# (module, constructor, input shape, keyword arguments): predictions compared on the same weights
OUTPUTS = (
    ("mobilenet", "MobileNet", (32, 32, 3), {"alpha": 0.25}),
    ("inception_resnet_v2", "InceptionResNetV2", (75, 75, 3), {}),
)
# (module, constructor, an input below its minimum size)
TOO_SMALL = (
    ("mobilenet", "MobileNet", (31, 31, 3)),
    ("inception_resnet_v2", "InceptionResNetV2", (74, 74, 3)),
    ("densenet", "DenseNet201", (31, 31, 3)),
    *(("efficientnet", f"EfficientNetB{i}", (16, 16, 3)) for i in range(1, 8)),
    ("resnet_v2", "ResNet101V2", (31, 31, 3)),
    ("resnet_v2", "ResNet152V2", (31, 31, 3)),
    ("resnet", "ResNet152", (31, 31, 3)),
)
TOO_SMALL_NAMES = tuple(
    name
    for module, builder, _ in TOO_SMALL
    for name in (f"keras:applications.{builder}", f"keras:applications.{module}.{builder}")
)


def _layer_names(model, dialect: str, compared: str) -> list[str]:
    """Names of the layers with weights in the ``compared`` dialect (Keras's automatic names lose
    their counter, which depends on what the process built before)."""
    if dialect != compared:
        return []
    return [re.sub(r"_\d+$", "", layer.name) for layer in model.layers if layer.weights]


def _structure(model, dialect: str, compared: str = "keras") -> dict:
    return {
        "count_params": model.count_params(),
        "weight_shapes": [list(w.shape) for w in model.weights],
        "layers_with_weights": _layer_names(model, dialect, compared),
        "output_shape": [-1 if d is None else int(d) for d in model.output_shape],
    }


def _same_arrays(shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    """Weights both sides load: kernels of mean 0 scaled by their fan-in, positive vectors (a
    BatchNormalization's variance must be), all from their position, so the activations stay finite."""
    out = []
    for i, shape in enumerate(shapes):
        size = int(np.prod(shape)) if shape else 1
        wave = np.sin(np.arange(size, dtype="float64") * 0.37 + i)
        if len(shape) > 1:
            values = wave / np.sqrt(max(size // shape[-1], 1))
        else:
            values = 0.75 + 0.25 * wave
        out.append(values.reshape(shape).astype("float32"))
    return out


def _predict(tf, module: str, name: str, shape: tuple, kwargs: dict):
    model = getattr(getattr(tf.keras.applications, module), name)(
        weights=None, include_top=False, input_shape=shape, pooling="avg", **kwargs
    )
    model.set_weights(_same_arrays([tuple(w.shape) for w in model.get_weights()]))
    count = int(np.prod(shape))
    images = (np.arange(2 * count, dtype="float32").reshape(2, *shape) % 255.0).astype("float32")
    return model.predict(images, verbose=0)


@pytest.mark.slow
@pytest.mark.parametrize(("module", "name", "shape", "kwargs"), STRUCTURES)
@same_as_tf(*STRUCTURE_NAMES, dialects=BOTH)
def test_application_structure(tf, module, name, shape, kwargs, dialect):
    apps = tf.keras.applications
    model = getattr(getattr(apps, module), name)(weights=None, include_top=False, input_shape=shape, **kwargs)
    return {**_structure(model, dialect), "same_function": getattr(apps, name) is getattr(getattr(apps, module), name)}


@pytest.mark.parametrize(("module", "name", "shape"), TOO_SMALL)
@same_as_tf(*TOO_SMALL_NAMES, edge=True, dialects=BOTH)
def test_application_refuses_a_too_small_input(tf, module, name, shape):
    return getattr(getattr(tf.keras.applications, module), name)(weights=None, include_top=False, input_shape=shape)


@pytest.mark.slow
@pytest.mark.parametrize(("module", "name", "shape", "kwargs"), OUTPUTS)
@same_as_tf("keras:Model", rtol=1e-3, atol=1e-4, dialects=BOTH)
def test_application_outputs(tf, module, name, shape, kwargs):
    return _predict(tf, module, name, shape, kwargs)
