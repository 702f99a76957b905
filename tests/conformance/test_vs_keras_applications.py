"""Keras applications built with ``weights=None`` on unison against Keras 3 and Keras 2 on TF 2.21.

Each model is built in both without its top and compared on its parameter count, the shapes of
its weights (as a sorted list: the order of ``model.weights`` differs, see below) and output shape; the edge case adds global average
pooling on another input size. Building these graphs takes seconds on each side: the tests are
marked slow.
"""

from __future__ import annotations

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
)


def _build(tf, module: str, name: str, shape: tuple, pooling: str | None):
    apps = tf.keras.applications
    model = getattr(getattr(apps, module), name)(weights=None, include_top=False, input_shape=shape, pooling=pooling)
    same_function = getattr(apps, name) is getattr(getattr(apps, module), name)
    if module == "resnet50":
        same_function = same_function and apps.resnet.ResNet50 is apps.ResNet50
    return {
        "count_params": model.count_params(),
        # sorted: unison's model.weights lists a model's weights in another order than Keras's
        # (ResNet50's 5th weight is a kernel in unison, a BatchNormalization vector in Keras)
        "weight_shapes": sorted(str(list(w.shape)) for w in model.weights),
        "output_shape": [-1 if d is None else int(d) for d in model.output_shape],
        "same_function": same_function,
    }


@pytest.mark.slow
@pytest.mark.parametrize(("module", "name", "shape", "edge_shape"), APPLICATIONS)
@same_as_tf(*APPLICATION_NAMES, dialects=BOTH)
def test_application_structure(tf, module, name, shape, edge_shape):
    return _build(tf, module, name, shape, None)


@pytest.mark.slow
@pytest.mark.parametrize(("module", "name", "shape", "edge_shape"), APPLICATIONS)
@same_as_tf(*APPLICATION_NAMES, edge=True, dialects=BOTH)
def test_application_structure_pooled(tf, module, name, shape, edge_shape):
    return _build(tf, module, name, edge_shape, "avg")
