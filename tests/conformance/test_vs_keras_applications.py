"""Keras applications built with ``weights=None`` on unison against Keras 3 and Keras 2 on TF 2.21.

Each model is built in both without its top, on a non-square input, and compared on its parameter
count, the shapes of its weights in the order of ``model.weights`` (layer by layer, as Keras lists
them), the names of its layers that hold weights, and its output shape (the padding arithmetic on
odd sizes included); the edge cases are arguments both refuse before building (an input below the
family's minimum, ImageNet weights with another number of classes). ``test_application_outputs``
loads the same arrays (``set_weights``) into both and compares their predictions. Building these
graphs takes seconds on each side: the tests are marked slow, and unison's side of a test run in
both dialects is built once (unison has one ``keras`` for both: the same call gives the same model).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from tf_oracle import same_as_tf, unison_once

BOTH = ("keras", "tf_keras")

# (module, constructor, a non-square input shape, an input below the family's minimum size)
APPLICATIONS = (
    ("resnet50", "ResNet50", (40, 48, 3), (31, 31, 3)),
    ("mobilenet_v2", "MobileNetV2", (64, 56, 3), (31, 32, 3)),
    ("densenet", "DenseNet121", (40, 48, 3), (31, 31, 3)),
    ("xception", "Xception", (80, 75, 3), (70, 71, 3)),
    ("inception_v3", "InceptionV3", (80, 90, 3), (74, 75, 3)),
    ("vgg16", "VGG16", (48, 40, 3), (31, 31, 3)),
    ("efficientnet", "EfficientNetB0", (40, 48, 3), (16, 16, 3)),
    ("resnet_v2", "ResNet50V2", (40, 48, 3), (32, 31, 3)),
    ("resnet", "ResNet101", (40, 48, 3), (31, 31, 3)),
    ("densenet", "DenseNet169", (40, 40, 3), (31, 31, 3)),
    ("vgg19", "VGG19", (48, 40, 3), (31, 31, 3)),
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


def _layer_names(model) -> list[str]:
    """Names of the layers with weights; Keras's automatic ones (``conv2d_98``) lose their counter,
    which depends on what the process built before."""
    return [re.sub(r"_\d+$", "", layer.name) for layer in model.layers if layer.weights]


def _build(tf, module: str, name: str, shape: tuple) -> dict:
    apps = tf.keras.applications
    model = getattr(getattr(apps, module), name)(weights=None, include_top=False, input_shape=shape)
    same_function = getattr(apps, name) is getattr(getattr(apps, module), name)
    if module == "resnet50":
        same_function = same_function and apps.resnet.ResNet50 is apps.ResNet50
    return {
        "count_params": model.count_params(),
        "weight_shapes": [list(w.shape) for w in model.weights],
        "get_weights_shapes": [list(w.shape) for w in model.get_weights()],
        "layers_with_weights": _layer_names(model),
        "output_shape": [-1 if d is None else int(d) for d in model.output_shape],
        "same_function": same_function,
    }


@pytest.mark.slow
@pytest.mark.parametrize(("module", "name", "shape", "small_shape"), APPLICATIONS)
@same_as_tf(*APPLICATION_NAMES, dialects=BOTH)
def test_application_structure(tf, module, name, shape, small_shape, dialect):
    result = dict(
        unison_once(tf, ("applications structure", module, name, shape), lambda: _build(tf, module, name, shape))
    )
    if dialect != "keras":
        # Keras 2 names some blocks otherwise (DenseNet's ``conv1/conv``; Keras 3 and unison:
        # ``conv1_conv``): the names are compared with Keras 3 only
        result["layers_with_weights"] = []
    return result


@pytest.mark.parametrize("case", ["too_small", "imagenet_with_10_classes"])
@pytest.mark.parametrize(("module", "name", "shape", "small_shape"), APPLICATIONS)
@same_as_tf(*APPLICATION_NAMES, edge=True, dialects=BOTH)
def test_application_refuses_bad_arguments(tf, module, name, shape, small_shape, case):
    # both refuse before building anything: an input below the family's minimum, or ImageNet's
    # weights (1000 classes) asked for with another number of classes
    builder = getattr(getattr(tf.keras.applications, module), name)
    if case == "too_small":
        return builder(weights=None, include_top=False, input_shape=small_shape)
    return builder(weights="imagenet", include_top=True, classes=10)


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
    return unison_once(tf, ("applications outputs", module, name), lambda: _predict(tf, name))


def _predict(tf, name: str) -> np.ndarray:
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
    assert DECODE_NAMES == tuple(f"keras:applications.{m}.decode_predictions" for m in PREPROCESS_MODULES)
    return getattr(tf.keras.applications, module).decode_predictions(np.full((2, 10), 0.1, dtype="float32"))


def synthetic_class_index_decode(tf, module: str, preds: np.ndarray, tops: tuple[int, ...]) -> dict:
    """``module.decode_predictions(preds, top=t)`` for each ``t`` with a made-up 1000-class index.

    ImageNet's index file cannot be downloaded here; Keras 3, Keras 2 and unison all keep the index
    in the module global ``imagenet_utils.CLASS_INDEX`` once read, so a synthetic one is put there
    (and the previous value restored): both sides then decode with the same labels.
    """
    import sys

    apps = tf.keras.applications
    utils = sys.modules[apps.imagenet_utils.decode_predictions.__module__]  # Keras's src module, or unison's
    saved = utils.CLASS_INDEX
    utils.CLASS_INDEX = {str(i): [f"n{i:08d}", f"class_{i}"] for i in range(1000)}
    try:
        decode = getattr(apps, module).decode_predictions
        return {f"top={top}": decode(preds.copy(), top=top) for top in tops}
    finally:
        utils.CLASS_INDEX = saved


def imagenet_like_predictions() -> np.ndarray:
    """Three rows: distinct scores, ties (four equal maxima, then three equal runners-up), a softmax."""
    distinct = (np.arange(1000) * 37 % 1000).astype("float32") / 1000.0
    ties = np.zeros(1000, dtype="float32")
    ties[[5, 250, 251, 999]] = 0.25
    ties[[0, 500, 998]] = 0.1
    logits = np.sin(np.arange(1000, dtype="float64") * 0.91) * 4.0
    soft = (np.exp(logits) / np.exp(logits).sum()).astype("float32")
    return np.stack([distinct, ties, soft])


@pytest.mark.parametrize("module", PREPROCESS_MODULES)
@same_as_tf(*DECODE_NAMES, dialects=BOTH)
def test_decode_predictions(tf, module):
    # a batch of three: the top 5 (Keras's default), the best one, and past the ties
    return synthetic_class_index_decode(tf, module, imagenet_like_predictions(), (5, 1, 9))


# Keras 2-only families (Keras 3 has neither)
KERAS2_DECODE_MODULES = ("regnet", "resnet_rs")
KERAS2_DECODE_NAMES = (
    "tf_keras:applications.regnet.decode_predictions",
    "tf_keras:applications.resnet_rs.decode_predictions",
)


@pytest.mark.parametrize("module", KERAS2_DECODE_MODULES)
@same_as_tf(*KERAS2_DECODE_NAMES, dialects=("tf_keras",))
def test_keras2_decode_predictions(tf, module):
    assert KERAS2_DECODE_NAMES == tuple(f"tf_keras:applications.{m}.decode_predictions" for m in KERAS2_DECODE_MODULES)
    return synthetic_class_index_decode(tf, module, imagenet_like_predictions(), (5, 2))


@pytest.mark.parametrize("module", KERAS2_DECODE_MODULES)
@same_as_tf(*KERAS2_DECODE_NAMES, edge=True, dialects=("tf_keras",))
def test_keras2_decode_predictions_refuses_one_unbatched_prediction(tf, module):
    # one prediction of shape (1000,) without its batch axis: refused before the class index is read
    return getattr(tf.keras.applications, module).decode_predictions(np.full((1000,), 0.001, dtype="float32"))
