"""keras.applications: Keras 3's architectures (parameter and layer counts), weights files, preprocessing, errors.

The expected counts were computed once with Keras 3.15.1 on TensorFlow 2.21 (``tensorflow-cpu``
and ``keras`` from PyPI) with ``getattr(keras.applications, name)(weights=None, include_top=...,
input_shape=...)``: ``model.count_params()``, the sums of ``trainable_weights`` and
``non_trainable_weights``, and ``len(model.layers)``; they agree with the sizes in Keras's
documentation table (ResNet50 25.6M, MobileNetV2 3.5M, EfficientNetB0 5.3M, VGG16 138.4M at
224x224, DenseNet121 8.1M, InceptionV3 23.9M, Xception 22.9M). Keras lists an ``InputLayer``
first in ``model.layers``; unison's functional models list only the layers after the input, so
unison's count is Keras's minus one.

Models are built at small input sizes: with global pooling before the top, the counts do not
depend on the spatial size (VGG16's flattened top does: its numbers are for 32x32).
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pytest
import torch

from unison import keras
from unison.errors import WeightsFileError
from unison.keras import applications
from unison.keras.applications import imagenet_utils
from unison.keras.saving.keras_h5 import keras_layer_order, load_weights, save_keras3_weights

DATA = os.path.join(os.path.dirname(__file__), "data", "keras_weights")

# name: (input size, total, trainable, non-trainable, len(keras_model.layers)) with include_top=True, classes=1000
KERAS_COUNTS = {
    "ResNet50": (32, 25636712, 25583592, 53120, 177),
    "ResNet50V2": (32, 25613800, 25568360, 45440, 192),
    "MobileNetV2": (32, 3538984, 3504872, 34112, 156),
    "EfficientNetB0": (32, 5330571, 5288548, 42023, 240),
    "VGG16": (32, 37694248, 37694248, 0, 23),
    "DenseNet121": (32, 8062504, 7978856, 83648, 429),
    "InceptionV3": (75, 23851784, 23817352, 34432, 313),
    "Xception": (71, 22910480, 22855952, 54528, 134),
}
# the siblings, same source and arguments (slow: bigger graphs)
KERAS_SIBLING_COUNTS = {
    "ResNet101": (32, 44707176, 44601832, 105344, 347),
    "ResNet152V2": (32, 60380648, 60236904, 143744, 566),
    "VGG19": (32, 43003944, 43003944, 0, 26),
    "DenseNet169": (32, 14307880, 14149480, 158400, 597),
    "EfficientNetB1": (32, 7856239, 7794184, 62055, 342),
}


def _counts(model: Any) -> tuple[int, int, int, int]:
    trainable = sum(w.numel() for w in model.trainable_weights)
    frozen = sum(w.numel() for w in model.non_trainable_weights)
    return model.count_params(), trainable, frozen, len(model.layers) + 1


@pytest.mark.parametrize("name", sorted(KERAS_COUNTS))
def test_parameter_and_layer_counts_equal_keras(name: str) -> None:
    size, *expected = KERAS_COUNTS[name]
    model = getattr(applications, name)(weights=None, input_shape=(size, size, 3))
    assert _counts(model) == tuple(expected)
    assert tuple(model.output.shape) == (None, 1000)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KERAS_SIBLING_COUNTS))
def test_sibling_parameter_and_layer_counts_equal_keras(name: str) -> None:
    size, *expected = KERAS_SIBLING_COUNTS[name]
    assert _counts(getattr(applications, name)(weights=None, input_shape=(size, size, 3))) == tuple(expected)


def test_without_top_pooling_and_classes() -> None:
    # Keras: ResNet50(include_top=False) has 23,587,712 weights (175 layers) and ends in 2048 maps
    base = applications.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3))
    assert _counts(base) == (23587712, 23534592, 53120, 175)
    assert tuple(base.output.shape) == (None, 1, 1, 2048)
    pooled = applications.VGG16(weights=None, include_top=False, input_shape=(64, 48, 3), pooling="max")
    assert tuple(pooled.output.shape) == (None, 512) and pooled.count_params() == 14714688
    assert type(pooled.layers[-1]).__name__ == "GlobalMaxPooling2D"
    small = applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), alpha=0.35, classes=7)
    out = small(torch.rand(2, 32, 32, 3))
    assert out.shape == (2, 7) and torch.allclose(out.sum(1), torch.ones(2), atol=1e-5)  # softmax
    logits = applications.MobileNetV2(
        weights=None, input_shape=(32, 32, 3), alpha=0.35, classes=7, classifier_activation=None
    )
    assert not torch.allclose(logits(torch.rand(2, 32, 32, 3)).sum(1), torch.ones(2))


def test_keras_layer_names_and_input_tensor() -> None:
    inputs = keras.Input(shape=(40, 40, 3))
    model = applications.ResNet50V2(weights=None, include_top=False, input_tensor=inputs, pooling="avg")
    names = [layer.name for layer in model.layers]
    assert names[:3] == ["conv1_pad", "conv1_conv", "pool1_pad"] and names[-3:] == ["post_bn", "post_relu", "avg_pool"]
    assert "conv4_block6_out" in names and model.inputs[0] is inputs
    # a model built on another model's output: its input is the source keras.Input
    scaled = keras.layers.Rescaling(1 / 255.0)(keras.Input(shape=(32, 32, 3)))
    head = applications.MobileNetV2(weights=None, include_top=False, input_tensor=scaled, pooling="avg", alpha=0.35)
    assert tuple(head(torch.rand(1, 32, 32, 3) * 255).shape) == (1, 1280)


def test_tiny_model_loads_files_keras_wrote() -> None:
    """A small graph with Keras's weighted layer kinds and parallel branches, whose weights Keras 3
    (.weights.h5, .keras) and tf.keras (.h5) wrote: unison gives Keras's outputs (see data/README.md)."""
    for file, expected in (
        ("tiny.weights.h5", "tiny_k3.npz"),
        ("tiny.keras", "tiny_k3.npz"),
        ("tiny_tf_keras.h5", "tiny_tf_keras.npz"),
    ):
        model = _tiny_model()
        load_weights(model, os.path.join(DATA, file))
        ref = np.load(os.path.join(DATA, expected))
        got = model(torch.as_tensor(ref["x"]), training=False).detach().numpy()
        np.testing.assert_allclose(got, ref["pred"], rtol=1e-5, atol=1e-6, err_msg=file)


def _tiny_model() -> Any:
    layers = keras.layers
    inp = keras.Input(shape=(8, 8, 3))
    h = layers.Normalization(axis=-1)(inp)
    h = layers.Conv2D(4, 3, padding="same", name="stem")(h)
    h = layers.BatchNormalization(name="stem_bn")(h)
    h = layers.Activation("relu")(h)
    a = layers.Conv2D(2, 1)(h)
    b = layers.Conv2D(3, 1)(h)
    b = layers.DepthwiseConv2D(3, padding="same")(b)
    c = layers.SeparableConv2D(2, 3, padding="same")(h)
    h = layers.GlobalAveragePooling2D()(layers.concatenate([a, b, c]))
    return keras.Model(inp, layers.Dense(3, activation="softmax", name="predictions")(h))


def test_keras_layer_order_follows_depth_like_keras() -> None:
    model = _tiny_model()
    kinds = [(type(layer).__name__, layer.weights[0].shape[-1] if layer.weights else None) for layer in model.layers]
    ordered = [
        (type(layer).__name__, layer.weights[0].shape[-1] if layer.weights else None)
        for layer in keras_layer_order(model)
    ]
    # Keras lists the 3-filter convolution (on the longer branch) before the 2-filter one, and so
    # do model.layers (and so model.weights) now, although the 2-filter one was called first
    assert ordered.index(("Conv2D", 3)) < ordered.index(("Conv2D", 2))
    assert kinds == ordered


def test_weights_file_round_trip_and_mismatch(tmp_path: Any) -> None:
    path = str(tmp_path / "mnv2.weights.h5")
    source = applications.MobileNetV2(weights=None, input_shape=(32, 32, 3), alpha=0.35, classes=5)
    with torch.no_grad():
        for w in source.weights:
            w.add_(torch.rand_like(w) * 0.1)
    save_keras3_weights(source, path)
    again = applications.MobileNetV2(weights=path, input_shape=(32, 32, 3), alpha=0.35, classes=5)
    x = torch.rand(2, 32, 32, 3)
    source.eval()
    again.eval()
    torch.testing.assert_close(again(x), source(x))
    with pytest.raises(WeightsFileError, match="shape .* in the model and .* in the file"):
        applications.MobileNetV2(weights=path, input_shape=(32, 32, 3), alpha=0.35, classes=6)
    (tmp_path / "junk.h5").write_bytes(b"not hdf5")
    with pytest.raises(WeightsFileError, match="not an HDF5 file"):
        applications.MobileNetV2(weights=str(tmp_path / "junk.h5"), input_shape=(32, 32, 3), alpha=0.35)


def test_imagenet_weights_come_from_keras_cache_or_a_clear_error(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    with pytest.raises(WeightsFileError, match="downloads nothing") as info:
        applications.MobileNetV2(weights="imagenet", include_top=False, input_shape=(96, 96, 3), alpha=0.35)
    message = str(info.value)
    assert "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5" in message
    assert str(tmp_path / "models") in message and "weights='/path/" in message and "weights=None" in message
    # the file in Keras's cache (Keras 2's layout, as Keras's ImageNet files are) is read
    source = applications.MobileNetV2(weights=None, include_top=False, input_shape=(96, 96, 3), alpha=0.35)
    (tmp_path / "models").mkdir()
    _write_legacy_h5(
        source, str(tmp_path / "models" / "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5")
    )
    model = applications.MobileNetV2(weights="imagenet", include_top=False, input_shape=(96, 96, 3), alpha=0.35)
    for got, want in zip(model.get_weights(), source.get_weights()):
        np.testing.assert_array_equal(got, want)


def _write_legacy_h5(model: Any, path: str) -> None:
    import h5py

    with h5py.File(path, "w") as f:
        names = [layer.name for layer in model.layers]
        f.attrs["layer_names"] = [n.encode() for n in names]
        for layer in model.layers:
            group = f.create_group(layer.name)
            weight_names = [f"{layer.name}/w{i}:0" for i in range(len(layer.weights))]
            group.attrs["weight_names"] = [n.encode() for n in weight_names]
            for n, w in zip(weight_names, layer.weights):
                group.create_dataset(n, data=w.detach().numpy())


@pytest.mark.parametrize(
    "build, error, match",
    [
        (lambda: applications.ResNet50(weights=None, input_shape=(16, 16, 3)), ValueError, "at least 32x32"),
        (lambda: applications.InceptionV3(weights=None, input_shape=(64, 64, 3)), ValueError, "at least 75x75"),
        (lambda: applications.VGG16(weights="imagenet", classes=10), ValueError, "`classes` should be 1000"),
        (lambda: applications.ResNet50(weights="/no/such/file.h5"), ValueError, "path to the weights file"),
        (lambda: applications.ResNet50(weights=None, include_top=False, pooling="mean"), ValueError, "pooling"),
        (lambda: applications.ResNet50(weights=None, input_shape=(None, None, 3)), ValueError, "static `input_shape`"),
        (lambda: applications.ResNet50(weights=None, input_shape=(32, 32)), ValueError, "three integers"),
        (lambda: applications.ResNet50(weights=None, include_top="yes"), TypeError, "include_top"),
        (lambda: applications.ResNet50(weights=None, classes=0), ValueError, "classes"),
        (
            lambda: applications.ResNet50(weights=None, input_tensor=np.zeros((1, 32, 32, 3))),
            ValueError,
            "Keras tensor",
        ),
        (lambda: applications.ResNet50(weight=None), TypeError, "unexpected keyword argument 'weight'"),
        (lambda: applications.MobileNetV2(weights="imagenet", alpha=0.6), ValueError, "alpha must be one of"),
        (lambda: applications.InceptionV3(weights=None, include_top=False), ValueError, "64x64 examples"),
    ],
)
def test_bad_arguments_give_keras_errors(build: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        build()


def test_pretrained_top_allows_only_softmax_or_logits(tmp_path: Any) -> None:
    path = tmp_path / "any.h5"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="Only `None` and `softmax`"):
        applications.VGG16(weights=str(path), classifier_activation="relu", input_shape=(32, 32, 3))


def test_preprocess_input_modes_as_keras() -> None:
    pixel = np.array([[[[10.0, 20.0, 30.0]]]], dtype="float32")
    # caffe: RGB -> BGR, minus ImageNet's BGR means
    np.testing.assert_allclose(
        applications.resnet50.preprocess_input(pixel.copy()), [[[[30 - 103.939, 20 - 116.779, 10 - 123.68]]]], rtol=1e-6
    )
    np.testing.assert_allclose(applications.vgg16.preprocess_input(pixel.copy()), [[[[-73.939, -96.779, -113.68]]]])
    # tf: [-1, 1]
    for module in (applications.resnet_v2, applications.mobilenet_v2, applications.inception_v3, applications.xception):
        np.testing.assert_allclose(module.preprocess_input(pixel.copy()), pixel / 127.5 - 1.0, rtol=1e-6)
    # torch: [0, 1] then ImageNet's mean and standard deviation
    expected = (pixel / 255.0 - np.array([0.485, 0.456, 0.406])) / np.array([0.229, 0.224, 0.225])
    np.testing.assert_allclose(applications.densenet.preprocess_input(pixel.copy()), expected, rtol=1e-5)
    assert applications.efficientnet.preprocess_input(pixel) is pixel  # the model rescales itself
    # integers become float32; tensors give tensors; channels_first flips axis 1
    assert applications.resnet.preprocess_input(np.full((1, 2, 2, 3), 7, dtype="uint8")).dtype == np.float32
    tensor = applications.resnet.preprocess_input(torch.tensor(pixel))
    assert isinstance(tensor, torch.Tensor)
    np.testing.assert_allclose(tensor.numpy(), applications.resnet.preprocess_input(pixel.copy()), rtol=1e-6)
    first = applications.resnet.preprocess_input(pixel.transpose(0, 3, 1, 2).copy(), data_format="channels_first")
    np.testing.assert_allclose(
        first.transpose(0, 2, 3, 1), applications.resnet.preprocess_input(pixel.copy()), rtol=1e-6
    )
    with pytest.raises(ValueError, match="mode to be one of"):
        imagenet_utils.preprocess_input(pixel, mode="caffee")
    with pytest.raises(ValueError, match="data_format"):
        applications.resnet.preprocess_input(pixel, data_format="NHWC")


def test_decode_predictions_reads_a_local_class_index(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv(imagenet_utils.CLASS_INDEX_ENV, raising=False)
    monkeypatch.setattr(imagenet_utils, "CLASS_INDEX", None)  # read once per process, as Keras: restored after
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    preds = np.zeros((2, 1000), dtype="float32")
    preds[0, 3], preds[0, 7], preds[1, 999] = 0.9, 0.1, 1.0
    with pytest.raises(FileNotFoundError, match="downloads nothing") as info:
        applications.resnet50.decode_predictions(preds)
    assert str(tmp_path / "keras" / "models" / "imagenet_class_index.json") in str(info.value)
    index = {str(i): [f"n{i:08d}", f"class_{i}"] for i in range(1000)}
    path = tmp_path / "index.json"
    path.write_text(json.dumps(index))
    monkeypatch.setenv(imagenet_utils.CLASS_INDEX_ENV, str(path))
    top = applications.efficientnet.decode_predictions(torch.as_tensor(preds), top=2)
    assert [row[:2] for row in top[0]] == [("n00000003", "class_3"), ("n00000007", "class_7")]
    assert top[1][0][:2] == ("n00000999", "class_999") and float(top[0][0][2]) == pytest.approx(0.9)
    with pytest.raises(ValueError, match=r"shape \(samples, 1000\)"):
        applications.resnet50.decode_predictions(preds[:, :10])
    # kept in Keras's module global once read: another file is not read until it is reset
    assert imagenet_utils.CLASS_INDEX == index
    monkeypatch.setenv(imagenet_utils.CLASS_INDEX_ENV, str(tmp_path / "moved.json"))
    assert applications.vgg16.decode_predictions(preds, top=1)[1][0][:2] == ("n00000999", "class_999")
    imagenet_utils.CLASS_INDEX = {str(i): ["w", f"mine_{i}"] for i in range(1000)}  # a program's own labels
    assert applications.resnet.decode_predictions(preds, top=1)[0][0][1] == "mine_3"
    imagenet_utils.CLASS_INDEX = None
    with pytest.raises(FileNotFoundError, match="moved.json"):
        applications.resnet50.decode_predictions(preds)
    path.write_text(json.dumps({"0": ["a", "b"]}))
    with pytest.raises(ValueError, match="not ImageNet's class index"):
        imagenet_utils.decode_predictions(preds, path=str(path))


def test_model_load_weights_reads_keras_files_too() -> None:
    model = _tiny_model()
    model.load_weights(os.path.join(DATA, "tiny.keras"))  # Keras 3's zip, through Model.load_weights
    ref = np.load(os.path.join(DATA, "tiny_k3.npz"))
    got = model(torch.as_tensor(ref["x"]), training=False).detach().numpy()
    np.testing.assert_allclose(got, ref["pred"], rtol=1e-5, atol=1e-6)
