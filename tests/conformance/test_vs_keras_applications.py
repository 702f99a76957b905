"""Keras applications built with ``weights=None`` on unison against Keras 3 and Keras 2 on TF 2.21.

Each model is built in both without its top and compared on its parameter count, the shapes of
its weights in the order of ``model.weights`` (layer by layer, as Keras lists them), the names of
its layers that hold weights, and its output shape; the edge case adds global average pooling on
another input size. ``test_application_outputs`` loads the same arrays (``set_weights``) into both
and compares their predictions. Building these graphs takes seconds on each side: the tests are
marked slow.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")

# (module, constructor, input shape of the ordinary case, of the edge case)
APPLICATIONS = (
    ("resnet50", "ResNet50", (32, 32, 3), (40, 48, 3)),
    ("mobilenet_v2", "MobileNetV2", (32, 32, 3), (64, 64, 3)),
    ("densenet", "DenseNet121", (32, 32, 3), (40, 40, 3)),
    ("xception", "Xception", (71, 71, 3), (80, 75, 3)),
    ("inception_v3", "InceptionV3", (75, 75, 3), (80, 90, 3)),
    ("vgg16", "VGG16", (32, 32, 3), (48, 40, 3)),
    ("efficientnet", "EfficientNetB0", (32, 32, 3), (40, 48, 3)),
    ("resnet_v2", "ResNet50V2", (32, 32, 3), (40, 48, 3)),
    ("resnet", "ResNet101", (32, 32, 3), (40, 48, 3)),
    ("densenet", "DenseNet169", (32, 32, 3), (40, 40, 3)),
    ("vgg19", "VGG19", (32, 32, 3), (48, 40, 3)),
)
APPLICATION_NAMES = (
    "keras:applications.ResNet50",
    "keras:applications.resnet50.ResNet50",
    "keras:applications.resnet.ResNet50",
    "keras:applications.MobileNetV2",
    "keras:applications.mobilenet_v2.MobileNetV2",
    "keras:applications.DenseNet121",
    "keras:applications.densenet.DenseNet121",
    "keras:applications.Xception",
    "keras:applications.xception.Xception",
    "keras:applications.InceptionV3",
    "keras:applications.inception_v3.InceptionV3",
    "keras:applications.VGG16",
    "keras:applications.vgg16.VGG16",
    "keras:applications.EfficientNetB0",
    "keras:applications.efficientnet.EfficientNetB0",
    "keras:applications.ResNet50V2",
    "keras:applications.resnet_v2.ResNet50V2",
    "keras:applications.ResNet101",
    "keras:applications.resnet.ResNet101",
    "keras:applications.DenseNet169",
    "keras:applications.densenet.DenseNet169",
    "keras:applications.VGG19",
    "keras:applications.vgg19.VGG19",
)
# Models whose predictions are compared on the same weights (a few: each builds and runs twice).
OUTPUT_APPLICATIONS = (
    ("resnet50", "ResNet50"),
    ("mobilenet_v2", "MobileNetV2"),
    ("efficientnet", "EfficientNetB0"),
    ("densenet", "DenseNet121"),
)


def _layer_names(model, dialect: str) -> list[str]:
    """Names of the layers with weights; Keras's automatic ones (``conv2d_98``) lose their counter,
    which depends on what the process built before. Keras 2 names some blocks otherwise
    (DenseNet's ``conv1/conv``; Keras 3 and unison: ``conv1_conv``): compared in Keras 3 only."""
    if dialect != "keras":
        return []
    return [re.sub(r"_\d+$", "", layer.name) for layer in model.layers if layer.weights]


def _build(tf, module: str, name: str, shape: tuple, pooling: str | None, dialect: str):
    apps = tf.keras.applications
    model = getattr(getattr(apps, module), name)(weights=None, include_top=False, input_shape=shape, pooling=pooling)
    same_function = getattr(apps, name) is getattr(getattr(apps, module), name)
    if module == "resnet50":
        same_function = same_function and apps.resnet.ResNet50 is apps.ResNet50
    return {
        "count_params": model.count_params(),
        "weight_shapes": [list(w.shape) for w in model.weights],
        "get_weights_shapes": [list(w.shape) for w in model.get_weights()],
        "layers_with_weights": _layer_names(model, dialect),
        "output_shape": [-1 if d is None else int(d) for d in model.output_shape],
        "same_function": same_function,
    }


@pytest.mark.slow
@pytest.mark.parametrize(("module", "name", "shape", "edge_shape"), APPLICATIONS)
@same_as_tf(*APPLICATION_NAMES, dialects=BOTH)
def test_application_structure(tf, module, name, shape, edge_shape, dialect):
    return _build(tf, module, name, shape, None, dialect)


@pytest.mark.slow
@pytest.mark.parametrize(("module", "name", "shape", "edge_shape"), APPLICATIONS)
@same_as_tf(*APPLICATION_NAMES, edge=True, dialects=BOTH)
def test_application_structure_pooled(tf, module, name, shape, edge_shape, dialect):
    return _build(tf, module, name, edge_shape, "avg", dialect)


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


@pytest.mark.slow
@pytest.mark.parametrize(("module", "name"), OUTPUT_APPLICATIONS)
@same_as_tf("keras:Model", rtol=1e-3, atol=1e-4, dialects=BOTH)
def test_application_outputs(tf, module, name):
    model = getattr(tf.keras.applications, name)(
        weights=None, include_top=False, input_shape=(32, 32, 3), pooling="avg"
    )
    model.set_weights(_same_arrays([tuple(w.shape) for w in model.get_weights()]))
    images = (np.arange(2 * 32 * 32 * 3, dtype="float32").reshape(2, 32, 32, 3) % 255.0).astype("float32")
    return model.predict(images, verbose=0)


PREPROCESS_MODULES = (
    "convnext",
    "densenet",
    "efficientnet",
    "efficientnet_v2",
    "imagenet_utils",
    "inception_resnet_v2",
    "inception_v3",
    "mobilenet",
    "mobilenet_v2",
    "mobilenet_v3",
    "nasnet",
    "resnet",
    "resnet50",
    "resnet_v2",
    "vgg16",
    "vgg19",
    "xception",
)
# the names the preprocessing tests cover (a literal table: the coverage report reads it from the source)
PREPROCESS_NAMES = (
    "keras:applications.convnext.preprocess_input",
    "keras:applications.densenet.preprocess_input",
    "keras:applications.efficientnet.preprocess_input",
    "keras:applications.efficientnet_v2.preprocess_input",
    "keras:applications.imagenet_utils.preprocess_input",
    "keras:applications.inception_resnet_v2.preprocess_input",
    "keras:applications.inception_v3.preprocess_input",
    "keras:applications.mobilenet.preprocess_input",
    "keras:applications.mobilenet_v2.preprocess_input",
    "keras:applications.mobilenet_v3.preprocess_input",
    "keras:applications.nasnet.preprocess_input",
    "keras:applications.resnet.preprocess_input",
    "keras:applications.resnet50.preprocess_input",
    "keras:applications.resnet_v2.preprocess_input",
    "keras:applications.vgg16.preprocess_input",
    "keras:applications.vgg19.preprocess_input",
    "keras:applications.xception.preprocess_input",
)


@pytest.mark.parametrize("module", PREPROCESS_MODULES)
@same_as_tf(*PREPROCESS_NAMES, dialects=BOTH)
def test_preprocess_input(tf, module):
    assert PREPROCESS_NAMES == tuple(f"keras:applications.{m}.preprocess_input" for m in PREPROCESS_MODULES)
    # a batch of images of 0..255 values, as numpy (each module's own scaling: caffe, torch or tf)
    images = (np.arange(2 * 3 * 4 * 3, dtype="float32").reshape(2, 3, 4, 3) * 7.0) % 256.0
    return getattr(tf.keras.applications, module).preprocess_input(images.copy())


@pytest.mark.parametrize("mode", ["caffe", "torch", "tf"])
@same_as_tf("keras:applications.imagenet_utils.preprocess_input", edge=True, dialects=BOTH)
def test_imagenet_utils_preprocess_modes(tf, mode):
    images = (np.arange(2 * 2 * 2 * 3, dtype="float32").reshape(2, 2, 2, 3) * 11.0) % 256.0
    return tf.keras.applications.imagenet_utils.preprocess_input(images.copy(), mode=mode)


@pytest.mark.parametrize("module", PREPROCESS_MODULES)
@same_as_tf(*PREPROCESS_NAMES, edge=True, dialects=BOTH)
def test_preprocess_input_of_one_image(tf, module):
    # one image without a batch axis, float64 values: each module keeps the rank
    image = (np.arange(3 * 2 * 3, dtype="float32").reshape(3, 2, 3) * 13.0) % 256.0
    return getattr(tf.keras.applications, module).preprocess_input(image.copy())


DECODE_NAMES = (
    "keras:applications.convnext.decode_predictions",
    "keras:applications.densenet.decode_predictions",
    "keras:applications.efficientnet.decode_predictions",
    "keras:applications.efficientnet_v2.decode_predictions",
    "keras:applications.imagenet_utils.decode_predictions",
    "keras:applications.inception_resnet_v2.decode_predictions",
    "keras:applications.inception_v3.decode_predictions",
    "keras:applications.mobilenet.decode_predictions",
    "keras:applications.mobilenet_v2.decode_predictions",
    "keras:applications.mobilenet_v3.decode_predictions",
    "keras:applications.nasnet.decode_predictions",
    "keras:applications.resnet.decode_predictions",
    "keras:applications.resnet50.decode_predictions",
    "keras:applications.resnet_v2.decode_predictions",
    "keras:applications.vgg16.decode_predictions",
    "keras:applications.vgg19.decode_predictions",
    "keras:applications.xception.decode_predictions",
)


@pytest.mark.parametrize("module", PREPROCESS_MODULES)
@same_as_tf(*DECODE_NAMES, edge=True, dialects=BOTH)
def test_decode_predictions_refuses_a_non_imagenet_shape(tf, module):
    # predictions of 10 classes, not ImageNet's 1000: refused before the class index is read
    # (the ordinary case needs ImageNet's class index file, which this machine has not)
    assert DECODE_NAMES == tuple(f"keras:applications.{m}.decode_predictions" for m in PREPROCESS_MODULES)
    return getattr(tf.keras.applications, module).decode_predictions(np.full((2, 10), 0.1, dtype="float32"))
