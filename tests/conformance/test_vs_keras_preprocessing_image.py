"""Keras 2's ``keras.preprocessing.image`` (``ImageDataGenerator``, its iterators and transforms)
against tf_keras 2.21, and Keras 3's ``keras.preprocessing.image.smart_resize``.

Fixed transforms are compared by value (tf_keras samples with SciPy's ``ndimage``); the random
ones after the same ``np.random.seed`` on both sides, since both draw from NumPy's global
generator in the same order; files are real PNGs written to a temporary folder.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

K2 = ("tf_keras",)


def _image(channels_first: bool = False) -> np.ndarray:
    x = (np.sin(np.arange(7 * 9 * 3) * 0.7) * 100 + 120).reshape(7, 9, 3).astype(np.float32)
    return np.moveaxis(x, -1, 0) if channels_first else x


@pytest.mark.parametrize("fill_mode", ["nearest", "reflect", "wrap", "constant"])
@pytest.mark.parametrize(
    "params",
    [
        {"theta": 30},
        {"tx": 2.5, "ty": -1.25},
        {"shear": 15},
        {"zx": 0.7, "zy": 1.3},
        {"theta": -50, "tx": 1, "ty": 2, "shear": 10, "zx": 1.2, "zy": 0.8, "order": 0},
    ],
)
@same_as_tf("tf_keras:preprocessing.image.apply_affine_transform", dialects=K2)
def test_apply_affine_transform(tf, params, fill_mode):
    f = tf.keras.preprocessing.image.apply_affine_transform
    channels_first = f(_image(True), fill_mode=fill_mode, cval=7.0, **params)
    channels_last = f(_image(), row_axis=0, col_axis=1, channel_axis=2, fill_mode=fill_mode, **params)
    return channels_first, channels_last


@same_as_tf("tf_keras:preprocessing.image.apply_affine_transform", edge=True, dialects=K2)
def test_apply_affine_transform_identity_and_uint8(tf):
    f = tf.keras.preprocessing.image.apply_affine_transform
    x = np.arange(2 * 4 * 5, dtype=np.uint8).reshape(2, 4, 5)
    return f(x), f(x, theta=90), f(_image(True), zx=1, zy=1)


@same_as_tf(
    "tf_keras:preprocessing.image.apply_channel_shift",
    "tf_keras:preprocessing.image.apply_brightness_shift",
    dialects=K2,
)
def test_channel_and_brightness_shifts(tf):
    image = tf.keras.preprocessing.image
    x = _image()
    return (
        image.apply_channel_shift(x, 30.0, channel_axis=2),
        image.apply_channel_shift(x, -500.0),
        image.apply_brightness_shift(x, 1.3),
        image.apply_brightness_shift(x, 0.6, scale=False),
        image.apply_brightness_shift(x * 3 - 100, 0.8, scale=False),
    )


@same_as_tf(
    "tf_keras:preprocessing.image.random_rotation",
    "tf_keras:preprocessing.image.random_shift",
    "tf_keras:preprocessing.image.random_shear",
    "tf_keras:preprocessing.image.random_zoom",
    dialects=K2,
)
def test_random_geometry_after_the_same_seed(tf):
    image = tf.keras.preprocessing.image
    np.random.seed(3)
    x = _image(True)
    return (
        image.random_rotation(x, 40),
        image.random_shift(x, 0.2, 0.3, fill_mode="reflect"),
        image.random_shear(x, 25, fill_mode="constant", cval=1.0),
        image.random_zoom(x, (0.6, 1.4), fill_mode="wrap"),
        image.random_zoom(x, (1, 1)),
    )


@same_as_tf(
    "tf_keras:preprocessing.image.random_channel_shift", "tf_keras:preprocessing.image.random_brightness", dialects=K2
)
def test_random_intensity_after_the_same_seed(tf):
    image = tf.keras.preprocessing.image
    np.random.seed(11)
    x = _image()
    return image.random_channel_shift(x, 40.0, channel_axis=2), image.random_brightness(x, (0.5, 1.5))


@same_as_tf(
    "tf_keras:preprocessing.image.random_zoom", "tf_keras:preprocessing.image.random_brightness", edge=True, dialects=K2
)
def test_a_range_that_is_not_two_numbers_is_an_error(tf):
    return tf.keras.preprocessing.image.random_zoom(_image(True), (0.5,))


GENERATOR = (
    {"rotation_range": 20, "width_shift_range": 0.2, "height_shift_range": 2, "fill_mode": "reflect"},
    {"shear_range": 10, "zoom_range": 0.3, "horizontal_flip": True, "vertical_flip": True},
    {"channel_shift_range": 30.0, "brightness_range": (0.7, 1.2), "rescale": 1 / 255.0},
    {"samplewise_center": True, "samplewise_std_normalization": True, "width_shift_range": [1, 2, 3]},
    {"featurewise_center": True, "featurewise_std_normalization": True},
    {"zca_whitening": True},
)


@pytest.mark.parametrize("kwargs", GENERATOR)
@same_as_tf(
    "tf_keras:preprocessing.image.ImageDataGenerator",
    "tf_keras:preprocessing.image.NumpyArrayIterator",
    "tf_keras:preprocessing.image.Iterator",
    dialects=K2,
)
def test_image_data_generator_flow_after_the_same_seed(tf, kwargs):
    import warnings

    x = np.stack([_image() + i for i in range(5)])[:, :4, :4]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gen = tf.keras.preprocessing.image.ImageDataGenerator(**kwargs)
        gen.fit(x, seed=1)
        it = gen.flow(x, np.arange(5), batch_size=2, seed=4, sample_weight=np.arange(5.0))
        batches = [it[i] for i in range(len(it))] + [next(it), next(it)]
    params = gen.get_random_transform((4, 4, 3), seed=9)
    return len(it), batches, {k: v for k, v in params.items() if v is not None}


@same_as_tf(
    "tf_keras:preprocessing.image.ImageDataGenerator",
    "tf_keras:preprocessing.image.NumpyArrayIterator",
    edge=True,
    dialects=K2,
)
def test_flow_subsets_and_extra_inputs(tf):
    gen = tf.keras.preprocessing.image.ImageDataGenerator(validation_split=0.4)
    x = np.stack([_image() + i for i in range(5)])
    y = np.array([0, 1, 0, 1, 0])
    val = gen.flow(x, y, shuffle=False, subset="validation", batch_size=8)
    train = gen.flow([x, np.arange(5.0)], y, shuffle=False, subset="training", batch_size=8)
    return val[0], train[0], len(val), len(train)


@pytest.mark.parametrize(
    "kwargs",
    [{"validation_split": 1.5}, {"zoom_range": (0.5, 1.0, 2.0)}, {"brightness_range": 0.5}, {"data_format": "nhwc"}],
)
@same_as_tf("tf_keras:preprocessing.image.ImageDataGenerator", edge=True, dialects=K2)
def test_image_data_generator_bad_arguments(tf, kwargs):
    return tf.keras.preprocessing.image.ImageDataGenerator(**kwargs)


@same_as_tf(
    "tf_keras:preprocessing.image.NumpyArrayIterator", "tf_keras:preprocessing.image.Iterator", edge=True, dialects=K2
)
def test_flow_of_mismatched_lengths_and_ranks(tf):
    gen = tf.keras.preprocessing.image.ImageDataGenerator()
    out = []
    for x, y in ((np.zeros((3, 2, 2, 1)), np.zeros(2)), (np.zeros((3, 2, 2)), None)):
        try:
            gen.flow(x, y)
            out.append("ok")
        except ValueError:
            out.append("ValueError")
    it = gen.flow(np.zeros((3, 2, 2, 1)), batch_size=2)
    try:
        it[5]
    except ValueError:
        out.append("ValueError")
    return out


def _write_images(root):
    from PIL import Image

    rng = np.random.default_rng(0)
    for cls, count in (("cats", 3), ("dogs", 2)):
        (root / cls).mkdir(parents=True, exist_ok=True)
        for i in range(count):
            pixels = rng.integers(0, 255, (6 + i, 8, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / cls / f"img{i}.png")
    (root / "dogs" / "notes.txt").write_text("not an image")
    return root


@pytest.mark.parametrize("class_mode", ["categorical", "binary", "sparse", "input", None])
@same_as_tf(
    "tf_keras:preprocessing.image.DirectoryIterator", "tf_keras:preprocessing.image.ImageDataGenerator", dialects=K2
)
def test_flow_from_directory(tf, class_mode, tmp_path_factory):
    root = _write_images(tmp_path_factory.mktemp("flow"))
    gen = tf.keras.preprocessing.image.ImageDataGenerator(rescale=1 / 255.0, horizontal_flip=True)
    it = gen.flow_from_directory(str(root), target_size=(4, 5), class_mode=class_mode, batch_size=2, seed=2)
    batches = [it[i] for i in range(len(it))]
    return it.class_indices, it.filenames, list(it.classes), it.samples, batches


@same_as_tf("tf_keras:preprocessing.image.DirectoryIterator", edge=True, dialects=K2)
def test_flow_from_directory_subset_grayscale(tf, tmp_path_factory):
    root = _write_images(tmp_path_factory.mktemp("subset"))
    gen = tf.keras.preprocessing.image.ImageDataGenerator(validation_split=0.5)
    val = gen.flow_from_directory(str(root), (3, 3), color_mode="grayscale", subset="validation", shuffle=False)
    train = gen.flow_from_directory(str(root), (3, 3), classes=["dogs"], subset="training", shuffle=False)
    return val.filenames, val[0], train.filenames, train[0], train.class_indices


@same_as_tf("tf_keras:preprocessing.image.ImageDataGenerator", dialects=K2)
def test_flow_from_dataframe(tf, tmp_path_factory):
    pandas = pytest.importorskip("pandas")
    root = _write_images(tmp_path_factory.mktemp("frame"))
    frame = pandas.DataFrame(
        {"filename": ["cats/img0.png", "dogs/img1.png", "missing.png", "cats/img2.png"], "class": ["c", "d", "d", "c"]}
    )
    gen = tf.keras.preprocessing.image.ImageDataGenerator()
    it = gen.flow_from_dataframe(frame, str(root), target_size=(3, 4), batch_size=2, shuffle=False)
    return it.filenames, it.class_indices, it[0], it[1]


@same_as_tf("keras:preprocessing.image.smart_resize", dialects=("keras", "tf_keras"))
def test_smart_resize(tf):
    f = tf.keras.preprocessing.image.smart_resize
    x = _image()
    batch = np.stack([x, x + 1])
    return np.asarray(f(x, (4, 4))), np.asarray(f(batch, (3, 6), interpolation="nearest")), np.asarray(f(x, (7, 9)))


@same_as_tf("keras:preprocessing.image.smart_resize", edge=True, dialects=("keras", "tf_keras"))
def test_smart_resize_of_a_rank_two_array_is_an_error(tf):
    return tf.keras.preprocessing.image.smart_resize(np.zeros((4, 4)), (2, 2))


@same_as_tf(
    "tf_keras:preprocessing.image.apply_brightness_shift",
    "tf_keras:preprocessing.image.apply_channel_shift",
    "tf_keras:preprocessing.image.random_channel_shift",
    "tf_keras:preprocessing.image.random_rotation",
    "tf_keras:preprocessing.image.random_shear",
    "tf_keras:preprocessing.image.random_shift",
    edge=True,
    dialects=K2,
)
def test_transforms_of_a_one_pixel_and_a_constant_image(tf):
    image = tf.keras.preprocessing.image
    np.random.seed(0)
    pixel = np.array([[[10.0]], [[20.0]], [[30.0]]], np.float32)  # channels first, 1 x 1
    flat = np.full((3, 4, 3), 80.0, np.float32)  # channels last, one value
    return (
        image.random_rotation(pixel, 90),
        image.random_shear(pixel, 45, fill_mode="constant"),
        image.random_shift(pixel, 0.5, 0.5),
        image.random_channel_shift(flat, 20.0, channel_axis=2),
        image.apply_channel_shift(flat, 5.0, channel_axis=2),
        image.apply_brightness_shift(flat, 1.5, scale=False),
    )
