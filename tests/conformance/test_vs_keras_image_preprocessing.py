"""Keras 3's newer image layers on unison against Keras 3.15: ``RandomPerspective``,
``RandomElasticTransform``, ``ContrastLimitedAdaptiveHistogramEqualization``, ``AugMix``,
``RandAugment``, ``MaxNumBoundingBoxes``.

Random draws differ from Keras's, so values are compared where they do not depend on them:
inference, a probability of 0, a transformation given to ``transform_images`` by hand (Keras 3's
transformation dicts), an AugMix without operations; random outputs by shape and dtype. Configs
are compared by keys and values, and the layer rebuilt from its config must compute the same.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

_IMAGES = (np.cos(np.arange(2 * 8 * 8 * 3) * 0.9) * 100 + 120).reshape(2, 8, 8, 3).astype(np.float32)
_ODD = (np.sin(np.arange(2 * 7 * 9 * 2) * 1.3) * 120 + 125).reshape(2, 7, 9, 2).astype(np.float32)


def _np(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def _config(layer):
    """The config without what differs by design (the dtype policy object, the generated name)."""
    return {k: v for k, v in layer.get_config().items() if k not in ("dtype", "name")}


def _sorted_keys(layer):
    return sorted(layer.get_config())


# ---------------------------------------------------------------------------------------------
# RandomPerspective

_START = np.array([[[0.0, 0.0], [7.0, 0.0], [0.0, 7.0], [7.0, 7.0]]] * 2, np.float32)
_END = _START + np.array(
    [[[1.0, 0.5], [-1.5, 1.0], [0.5, -1.0], [-0.5, -0.5]], [[0.0, 0.0], [1.0, 0.0], [0, 0], [0, 0]]]
)


def _perspective(apply):
    return {
        "apply_perspective": np.array(apply),
        "start_points": _START,
        "end_points": _END.astype(np.float32),
        "input_shape": (2, 8, 8, 3),
    }


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
@same_as_tf("keras:layers.RandomPerspective", atol=1e-3)
def test_random_perspective_fixed_and_inference(tf, interpolation):
    layer = tf.keras.layers.RandomPerspective(
        factor=0.7, scale=0.4, interpolation=interpolation, fill_value=3.0, seed=1
    )
    x = tf.constant(_IMAGES)
    clone = type(layer).from_config(layer.get_config())
    boxes = {"boxes": tf.constant([[[1.0, 1.0, 4.0, 5.0]], [[0.0, 2.0, 7.0, 6.0]]]), "labels": tf.constant([[1], [2]])}
    moved = tf.keras.layers.RandomPerspective(bounding_box_format="xyxy").transform_bounding_boxes(
        boxes, _perspective([True, False])
    )
    return (
        _np(layer.transform_images(x, _perspective([True, False]))),
        _np(layer(x, training=False)),
        _np(tf.keras.layers.RandomPerspective(factor=0.0)(x)),
        _np(clone(x, training=False)),
        _np(moved["boxes"]),
        _config(layer),
        _sorted_keys(layer),
    )


@same_as_tf("keras:layers.RandomPerspective", values=False, edge=True)
def test_random_perspective_random_draws_keep_shapes(tf):
    layer = tf.keras.layers.RandomPerspective(seed=4)
    return _np(layer(tf.constant(_IMAGES))), _np(layer(tf.constant(_IMAGES[0]))), _np(layer(tf.zeros([0, 8, 8, 3])))


@pytest.mark.parametrize("kwargs", [{"scale": 1.5}, {"factor": 2.0}, {"interpolation": "bicubic"}])
@same_as_tf("keras:layers.RandomPerspective", edge=True)
def test_random_perspective_bad_arguments(tf, kwargs):
    return tf.keras.layers.RandomPerspective(**kwargs)


# ---------------------------------------------------------------------------------------------
# RandomElasticTransform


@same_as_tf("keras:layers.RandomElasticTransform")
def test_random_elastic_transform_where_draws_do_not_matter(tf):
    layer = tf.keras.layers.RandomElasticTransform(factor=(0.2, 0.9), scale=0.5, value_range=(50, 200), seed=2)
    x = tf.constant(_IMAGES)
    never = {"apply_transform": np.array([False, False]), "distortion_factor": np.float32(0.5), "seed": 3}
    clone = type(layer).from_config(layer.get_config())
    return (
        _np(layer.transform_images(x, never)),
        _np(layer(x, training=False)),
        _np(tf.keras.layers.RandomElasticTransform(factor=0.0)(x)),
        _np(tf.keras.layers.RandomElasticTransform(scale=0.0)(x)),
        _np(clone(x, training=False)),
        _config(layer),
        _sorted_keys(layer),
    )


@same_as_tf("keras:layers.RandomElasticTransform", values=False, edge=True)
def test_random_elastic_transform_random_draws_keep_shapes(tf):
    layer = tf.keras.layers.RandomElasticTransform(fill_mode="constant", interpolation="nearest", seed=5)
    out = layer({"images": tf.constant(_IMAGES), "labels": tf.constant([1, 2])})
    return _np(out["images"]), _np(out["labels"]), _np(layer(tf.constant(_IMAGES[0])))


@pytest.mark.parametrize("kwargs", [{"fill_mode": "edge"}, {"scale": (0.1, 0.2, 0.3)}, {"interpolation": "area"}])
@same_as_tf("keras:layers.RandomElasticTransform", edge=True)
def test_random_elastic_transform_bad_arguments(tf, kwargs):
    return tf.keras.layers.RandomElasticTransform(**kwargs)


# ---------------------------------------------------------------------------------------------
# ContrastLimitedAdaptiveHistogramEqualization


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"clip_limit": 0.0, "tile_grid_size": (2, 3)}, {"clip_limit": 2.0, "tile_grid_size": (3, 2)}],
)
@same_as_tf("keras:layers.ContrastLimitedAdaptiveHistogramEqualization", atol=1e-3)
def test_clahe(tf, kwargs):
    layer = tf.keras.layers.ContrastLimitedAdaptiveHistogramEqualization(**kwargs)
    clone = type(layer).from_config(layer.get_config())
    return (
        _np(layer(tf.constant(_IMAGES))),
        _np(layer(tf.constant(_ODD), training=False)),
        _np(clone(tf.constant(_ODD[0]))),
        _config(layer),
        _sorted_keys(layer),
    )


@same_as_tf("keras:layers.ContrastLimitedAdaptiveHistogramEqualization", atol=1e-3)
def test_clahe_other_ranges_and_dtypes(tf):
    scaled = tf.keras.layers.ContrastLimitedAdaptiveHistogramEqualization(value_range=(0, 1), tile_grid_size=(2, 2))
    ints = tf.keras.layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(4, 4))
    return _np(scaled(tf.constant(_IMAGES / 255.0))), _np(ints(tf.constant(_IMAGES.astype(np.uint8))))


@pytest.mark.parametrize("shape", [(1, 3, 2, 1), (8, 8)])
@same_as_tf("keras:layers.ContrastLimitedAdaptiveHistogramEqualization", edge=True, atol=1e-3)
def test_clahe_a_tiny_padded_image_and_bad_rank(tf, shape):
    # (no empty batch: Keras 3.15's CLAHE fails on one, InvalidArgumentError; unison returns it empty)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * 37 % 256
    layer = tf.keras.layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(2, 2))
    return _np(layer(tf.constant(x)))


# ---------------------------------------------------------------------------------------------
# AugMix and RandAugment


@same_as_tf("keras:layers.AugMix", atol=1e-3)
def test_augmix_without_operations_and_at_inference(tf):
    layer = tf.keras.layers.AugMix(factor=0.5, num_chains=2, alpha=0.7, value_range=(40, 200), seed=3)
    x = tf.constant(_IMAGES)
    fixed = {
        "chain_mixing_weights": np.array([0.2, 0.3], np.float32),
        "weight_sample": np.float32(0.25),
        "chain_transforms": [[], []],
    }
    no_ops = tf.keras.layers.AugMix(chain_depth=0, value_range=(40, 200))
    clone = type(layer).from_config(layer.get_config())
    return (
        _np(layer.transform_images(x, fixed)),
        _np(layer(x, training=False)),
        _np(no_ops(x)),
        _np(clone(x, training=False)),
        _config(layer),
        _sorted_keys(layer),
    )


@pytest.mark.parametrize("kwargs", [{}, {"all_ops": False, "interpolation": "nearest"}])
@same_as_tf("keras:layers.AugMix", values=False, edge=True)
def test_augmix_random_draws_keep_shapes(tf, kwargs):
    layer = tf.keras.layers.AugMix(seed=1, **kwargs)
    out = layer({"images": tf.constant(_IMAGES), "labels": tf.constant([[1.0], [0.0]])})
    return _np(out["images"]), _np(out["labels"]), _np(layer(tf.constant(_IMAGES[1])))


@pytest.mark.parametrize("name", ["AugMix", "RandAugment"])
@same_as_tf("keras:layers.AugMix", "keras:layers.RandAugment", edge=True)
def test_policy_bad_factor(tf, name):
    return getattr(tf.keras.layers, name)(factor=1.5)


@same_as_tf("keras:layers.RandAugment")
def test_randaugment_without_operations_and_at_inference(tf):
    layer = tf.keras.layers.RandAugment(num_ops=3, factor=(0.1, 0.4), value_range=(0, 1), seed=7)
    x = tf.constant(_IMAGES)
    clone = type(layer).from_config(layer.get_config())
    return (
        _np(layer(x, training=False)),
        _np(tf.keras.layers.RandAugment(num_ops=0)(x)),
        _np(tf.keras.layers.RandAugment(num_ops=0)(tf.constant(_IMAGES.astype(np.uint8)))),
        _np(clone(x, training=False)),
        _config(layer),
        _sorted_keys(layer),
    )


@same_as_tf("keras:layers.RandAugment", values=False, edge=True)
def test_randaugment_random_draws_keep_shapes(tf):
    layer = tf.keras.layers.RandAugment(seed=2)
    # no empty batch: Keras 3.15's RandAugment fails on one (InvalidArgumentError)
    return _np(layer(tf.constant(_IMAGES))), _np(layer(tf.constant(_IMAGES[0]))), _np(layer(tf.constant(_IMAGES[:1])))


# ---------------------------------------------------------------------------------------------
# MaxNumBoundingBoxes


@same_as_tf("keras:layers.MaxNumBoundingBoxes")
def test_max_num_bounding_boxes(tf):
    boxes = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    labels = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    pad = tf.keras.layers.MaxNumBoundingBoxes(max_number=5, bounding_box_format="xyxy")
    cut = tf.keras.layers.MaxNumBoundingBoxes(max_number=2, fill_value=-9, bounding_box_format="xyxy")
    padded = pad({"images": tf.constant(_IMAGES), "bounding_boxes": {"boxes": boxes, "labels": labels}})
    kept = cut({"images": tf.constant(_IMAGES), "bounding_boxes": {"boxes": boxes, "labels": labels}})
    single = pad({"images": tf.constant(_IMAGES[0]), "bounding_boxes": {"boxes": boxes[0], "labels": labels[0]}})
    return (
        _np(padded["bounding_boxes"]["boxes"]),
        _np(padded["bounding_boxes"]["labels"]),
        _np(padded["images"]),
        _np(kept["bounding_boxes"]["boxes"]),
        _np(kept["bounding_boxes"]["labels"]),
        _np(single["bounding_boxes"]["boxes"]),
        _np(pad(tf.constant(_IMAGES))),
        _config(pad),
        _sorted_keys(pad),
    )


@same_as_tf("keras:layers.MaxNumBoundingBoxes", edge=True)
def test_max_num_bounding_boxes_needs_a_format(tf):
    layer = tf.keras.layers.MaxNumBoundingBoxes(max_number=2)
    boxes = {"boxes": np.zeros((2, 1, 4), np.float32), "labels": np.zeros((2, 1), np.float32)}
    return layer({"images": tf.constant(_IMAGES), "bounding_boxes": boxes})


# ---------------------------------------------------------------------------------------------
# inside tf.data


@same_as_tf(
    "keras:layers.ContrastLimitedAdaptiveHistogramEqualization",
    "keras:layers.RandomPerspective",
    atol=1e-3,
)
def test_layers_inside_a_dataset_map(tf):
    layers = tf.keras.layers
    ds = tf.data.Dataset.from_tensor_slices(_IMAGES)
    clahe = [_np(b) for b in ds.map(layers.ContrastLimitedAdaptiveHistogramEqualization()).batch(2)]
    still = [_np(b) for b in ds.map(layers.RandomPerspective(factor=0.0)).batch(2)]
    return clahe, still


# ---------------------------------------------------------------------------------------------
# what every random draw shares: the transformation's keys, outputs inside value_range


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("AugMix", {"value_range": (30, 210), "factor": 0.8}),
        ("RandAugment", {"value_range": (30, 210), "num_ops": 3, "factor": 0.9}),
        ("RandomElasticTransform", {"value_range": (30, 210)}),
        ("RandomPerspective", {"scale": 0.5}),
    ],
)
@same_as_tf(
    "keras:layers.AugMix",
    "keras:layers.RandAugment",
    "keras:layers.RandomElasticTransform",
    "keras:layers.RandomPerspective",
)
def test_random_draws_stay_in_range_and_name_their_parts(tf, name, kwargs):
    layer = getattr(tf.keras.layers, name)(seed=11, **kwargs)
    x = tf.constant(np.clip(_IMAGES, 30, 210))
    low, high = kwargs.get("value_range", (0, 255))
    inside = []
    for _ in range(2):
        out = _np(layer(x))
        inside.append(bool(out.min() >= low - 1e-3) and bool(out.max() <= high + 1e-3))
    transformation = layer.get_random_transformation(x, training=True)
    return inside, sorted(transformation), layer.get_random_transformation(x, training=False) is None


@same_as_tf(
    "keras:layers.RandomElasticTransform",
    "keras:layers.RandomPerspective",
    "keras:layers.MaxNumBoundingBoxes",
    values=False,
    edge=True,
)
def test_random_layers_inside_a_dataset_map(tf):
    layers = tf.keras.layers
    ds = tf.data.Dataset.from_tensor_slices(_IMAGES)
    out = [
        [_np(b) for b in ds.map(layer).batch(2)]
        # (RandAugment in a map: checked on unison's tf.data in tests/unit; tracing it costs Keras seconds)
        for layer in (layers.RandomElasticTransform(seed=1), layers.RandomPerspective(seed=1))
    ]
    boxes = {"boxes": np.ones((2, 3, 4), np.float32), "labels": np.ones((2, 3), np.float32)}
    data = tf.data.Dataset.from_tensor_slices({"images": _IMAGES, "bounding_boxes": boxes})
    limited = data.map(layers.MaxNumBoundingBoxes(max_number=5, bounding_box_format="xyxy")).batch(2)
    first = next(iter(limited))
    return out, _np(first["bounding_boxes"]["boxes"]), _np(first["bounding_boxes"]["labels"])
