"""``tf.image``'s geometry, resizing and colour functions against TensorFlow 2.21 (see tf_oracle.py)."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

_RNG = np.random.default_rng(7)
IMAGE = _RNG.random((5, 7, 3)).astype(np.float32)
BATCH = _RNG.random((2, 6, 8, 3)).astype(np.float32)
UINT8 = _RNG.integers(0, 256, (4, 6, 3), dtype=np.uint8)
SEED = (3, 4)

METHODS = ["bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("size", [(9, 11), (3, 4), (5, 3)])
@same_as_tf("image.resize", "image.ResizeMethod", atol=1e-5)
def test_resize(tf, method, size):
    return tf.image.resize(tf.constant(BATCH), size, method=method)


@pytest.mark.parametrize("method", ["bilinear", "bicubic", "lanczos3", "gaussian", "mitchellcubic", "area"])
@same_as_tf("image.resize", "image.ResizeMethod", edge=True, atol=1e-5)
def test_resize_antialias_and_aspect_ratio(tf, method):
    image = tf.constant(IMAGE)
    return (
        tf.image.resize(image, [2, 3], method=method, antialias=True),
        tf.image.resize(image, [10, 10], method=method, preserve_aspect_ratio=True),
        tf.image.resize(tf.constant(UINT8), [3, 5], method=method),
    )


@same_as_tf("image.resize", edge=True)
def test_resize_bilinear_of_integer_and_float_images_of_edge_sizes(tf):
    # 1-pixel and non-square images, up- and
    # down-scaling, a batch of one, uint16, int32 and float64 pixels: the same float32 values
    rng = np.random.default_rng(11)
    big = rng.integers(0, 256, (1, 29, 17, 3), dtype=np.uint8)
    return (
        tf.image.resize(tf.constant(UINT8[:1, :1]), [3, 2]),
        tf.image.resize(tf.constant(UINT8[:, :1]), [5, 4]),
        tf.image.resize(tf.constant(UINT8), [11, 2]),
        tf.image.resize(tf.constant(big), [8, 31]),
        tf.image.resize(tf.constant(rng.integers(0, 65536, (3, 5, 2), dtype=np.uint16)), [7, 2]),
        tf.image.resize(tf.constant(rng.integers(-(2**31), 2**31, (1, 4, 9, 1), dtype=np.int32)), [6, 4]),
        tf.image.resize(tf.constant(IMAGE.astype(np.float64) * 1e3), [4, 12]),
    )


@same_as_tf("image.resize", edge=True)
def test_resize_nearest_keeps_the_dtype(tf):
    return tf.image.resize(tf.constant(UINT8), [7, 3], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR)


@pytest.mark.parametrize("target", [(8, 8), (3, 9), (5, 7)])
@same_as_tf("image.resize_with_pad", atol=1e-5)
def test_resize_with_pad(tf, target):
    return tf.image.resize_with_pad(tf.constant(IMAGE), *target), tf.image.resize_with_pad(tf.constant(BATCH), *target)


@same_as_tf("image.resize_with_pad", edge=True, atol=1e-5)
def test_resize_with_pad_of_uint8_nearest(tf):
    return tf.image.resize_with_pad(tf.constant(UINT8), 9, 4, method="nearest")


@pytest.mark.parametrize("target", [(3, 3), (8, 10), (2, 9)])
@same_as_tf("image.resize_with_crop_or_pad")
def test_resize_with_crop_or_pad(tf, target):
    return tf.image.resize_with_crop_or_pad(tf.constant(IMAGE), *target)


@same_as_tf("image.resize_with_crop_or_pad", edge=True)
def test_resize_with_crop_or_pad_of_a_batch(tf):
    return tf.image.resize_with_crop_or_pad(tf.constant(BATCH), 7, 5)


@same_as_tf("image.central_crop")
def test_central_crop(tf):
    return tf.image.central_crop(tf.constant(IMAGE), 0.5), tf.image.central_crop(tf.constant(BATCH), 0.7)


@same_as_tf("image.central_crop", edge=True)
def test_central_crop_of_a_bad_fraction(tf):
    return tf.image.central_crop(tf.constant(IMAGE), 1.5)


@same_as_tf("image.crop_to_bounding_box", "image.pad_to_bounding_box")
def test_crop_and_pad_to_bounding_box(tf):
    image = tf.constant(IMAGE)
    return tf.image.crop_to_bounding_box(image, 1, 2, 3, 4), tf.image.pad_to_bounding_box(image, 1, 2, 8, 10)


@same_as_tf("image.crop_to_bounding_box", "image.pad_to_bounding_box", edge=True)
def test_crop_to_a_box_outside_the_image(tf):
    return tf.image.crop_to_bounding_box(tf.constant(IMAGE), 3, 0, 4, 4)


@same_as_tf("image.pad_to_bounding_box", edge=True)
def test_pad_to_a_box_smaller_than_the_image(tf):
    return tf.image.pad_to_bounding_box(tf.constant(BATCH), 0, 0, 4, 4)


@same_as_tf("image.flip_left_right", "image.flip_up_down", "image.rot90", "image.transpose")
def test_flips_rotations_transposes(tf):
    image = tf.constant(IMAGE)
    return (
        tf.image.flip_left_right(image),
        tf.image.flip_up_down(image),
        tf.image.rot90(image),
        tf.image.rot90(image, k=3),
        tf.image.transpose(image),
    )


@same_as_tf("image.flip_left_right", "image.flip_up_down", "image.rot90", "image.transpose", edge=True)
def test_flips_rotations_of_a_batch_and_negative_k(tf):
    batch = tf.constant(BATCH)
    return (
        tf.image.flip_left_right(batch),
        tf.image.flip_up_down(batch),
        tf.image.rot90(batch, k=-1),
        tf.image.transpose(batch),
    )


@same_as_tf(
    "image.random_flip_left_right",
    "image.random_flip_up_down",
    "image.random_crop",
    "image.stateless_random_flip_left_right",
    "image.stateless_random_flip_up_down",
    "image.stateless_random_crop",
    values=False,
)
def test_random_flips_and_crops_shapes(tf):
    image, batch = tf.constant(IMAGE), tf.constant(BATCH)
    return (
        tf.image.random_flip_left_right(image),
        tf.image.random_flip_up_down(batch),
        tf.image.random_crop(image, [3, 3, 3]),
        tf.image.stateless_random_flip_left_right(batch, SEED),
        tf.image.stateless_random_flip_up_down(image, SEED),
        tf.image.stateless_random_crop(image, [2, 4, 3], SEED),
    )


@same_as_tf(
    "image.random_flip_left_right",
    "image.random_flip_up_down",
    "image.random_crop",
    "image.stateless_random_flip_left_right",
    "image.stateless_random_flip_up_down",
    "image.stateless_random_crop",
    edge=True,
)
def test_random_flips_are_flips_and_stateless_ones_repeat(tf):
    image = tf.constant(IMAGE)
    flipped = tf.image.random_flip_left_right(image)
    is_flip = bool(tf.reduce_all(flipped == image)) or bool(tf.reduce_all(flipped == tf.image.flip_left_right(image)))
    again = [tf.image.stateless_random_flip_up_down(image, SEED) for _ in range(2)]
    crops = [tf.image.stateless_random_crop(image, [2, 2, 3], (1, 2)) for _ in range(2)]
    up_down = bool(tf.reduce_all(again[0] == again[1])) and bool(tf.reduce_all(crops[0] == crops[1]))
    return is_flip, up_down, list(tf.image.random_crop(tf.zeros([0, 4]), [0, 2]).shape)


@same_as_tf("image.convert_image_dtype")
def test_convert_image_dtype(tf):
    u8 = tf.constant(UINT8)
    f = tf.constant([[[0.0, 0.5, 1.0]]])
    return (
        tf.image.convert_image_dtype(u8, tf.float32),
        tf.image.convert_image_dtype(f, tf.uint8),
        tf.image.convert_image_dtype(u8, tf.int32),
        tf.image.convert_image_dtype(tf.constant([[[70000]]], dtype=tf.int32), tf.int16),
        tf.image.convert_image_dtype(f, tf.float16),
    )


@same_as_tf("image.convert_image_dtype", edge=True)
def test_convert_image_dtype_saturates(tf):
    f = tf.constant([[[-0.5, 0.5, 1.5]]])
    return tf.image.convert_image_dtype(f, tf.uint8, saturate=True), tf.image.convert_image_dtype(
        f, tf.int16, saturate=True
    )


@same_as_tf("image.per_image_standardization")
def test_per_image_standardization(tf):
    return tf.image.per_image_standardization(tf.constant(BATCH)), tf.image.per_image_standardization(
        tf.constant(UINT8)
    )


@same_as_tf("image.per_image_standardization", edge=True)
def test_per_image_standardization_of_a_constant_image(tf):
    return tf.image.per_image_standardization(tf.ones([3, 3, 1]))


@same_as_tf("image.rgb_to_grayscale", "image.grayscale_to_rgb")
def test_grayscale(tf):
    gray = tf.image.rgb_to_grayscale(tf.constant(IMAGE))
    return gray, tf.image.rgb_to_grayscale(tf.constant(UINT8)), tf.image.grayscale_to_rgb(gray)


@same_as_tf("image.rgb_to_grayscale", "image.grayscale_to_rgb", edge=True)
def test_grayscale_to_rgb_of_three_channels(tf):
    return tf.image.grayscale_to_rgb(tf.constant(IMAGE))


@same_as_tf(
    "image.rgb_to_hsv",
    "image.hsv_to_rgb",
    "image.rgb_to_yuv",
    "image.yuv_to_rgb",
    "image.rgb_to_yiq",
    "image.yiq_to_rgb",
)
def test_colour_spaces(tf):
    image = tf.constant(BATCH)
    hsv = tf.image.rgb_to_hsv(image)
    yuv, yiq = tf.image.rgb_to_yuv(image), tf.image.rgb_to_yiq(image)
    return hsv, tf.image.hsv_to_rgb(hsv), yuv, tf.image.yuv_to_rgb(yuv), yiq, tf.image.yiq_to_rgb(yiq)


@same_as_tf(
    "image.rgb_to_hsv",
    "image.hsv_to_rgb",
    "image.rgb_to_yuv",
    "image.yuv_to_rgb",
    "image.rgb_to_yiq",
    "image.yiq_to_rgb",
    edge=True,
)
def test_colour_spaces_of_grays_and_primaries(tf):
    colours = tf.constant([[[0.0, 0.0, 0.0], [0.5, 0.5, 0.5], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]])
    hsv = tf.image.rgb_to_hsv(colours)
    return hsv, tf.image.hsv_to_rgb(tf.constant([[[1.0, 1.0, 1.0], [0.99, 0.5, 0.5]]])), tf.image.rgb_to_yuv(colours)


@same_as_tf("image.adjust_brightness", "image.adjust_contrast", "image.adjust_gamma")
def test_adjust_brightness_contrast_gamma(tf):
    image, u8 = tf.constant(BATCH), tf.constant(UINT8)
    return (
        tf.image.adjust_brightness(image, 0.2),
        tf.image.adjust_brightness(u8, -0.1),
        tf.image.adjust_contrast(image, 1.7),
        tf.image.adjust_contrast(u8, 0.5),
        tf.image.adjust_gamma(image, 2.0, gain=0.8),
        tf.image.adjust_gamma(u8, 0.5),
    )


@same_as_tf("image.adjust_brightness", "image.adjust_contrast", "image.adjust_gamma", edge=True)
def test_adjust_gamma_negative_is_an_error(tf):
    return tf.image.adjust_gamma(tf.constant(IMAGE), -1.0)


@same_as_tf("image.adjust_brightness", "image.adjust_contrast", edge=True)
def test_adjust_saturates_uint8(tf):
    u8 = tf.constant(UINT8)
    return tf.image.adjust_brightness(u8, 0.9), tf.image.adjust_contrast(u8, 5.0)


@pytest.mark.parametrize("delta", [0.2, -0.45, 0.9])
@same_as_tf("image.adjust_hue", "image.adjust_saturation", atol=2e-6)
def test_adjust_hue_and_saturation(tf, delta):
    image = tf.constant(BATCH)
    return (
        tf.image.adjust_hue(image, delta),
        tf.image.adjust_hue(tf.constant(UINT8), delta),
        tf.image.adjust_saturation(image, 1.0 + delta),
        tf.image.adjust_saturation(tf.constant(UINT8), 2.0),
    )


@same_as_tf("image.adjust_hue", "image.adjust_saturation", edge=True)
def test_adjust_hue_of_grays_and_saturation_zero(tf):
    grays = tf.constant([[[0.3, 0.3, 0.3], [0.0, 0.0, 0.0]]])
    return tf.image.adjust_hue(grays, 0.3), tf.image.adjust_saturation(tf.constant(IMAGE), 0.0)


@same_as_tf(
    "image.random_brightness",
    "image.random_contrast",
    "image.random_hue",
    "image.random_saturation",
    "image.stateless_random_brightness",
    "image.stateless_random_contrast",
    "image.stateless_random_hue",
    "image.stateless_random_saturation",
    values=False,
)
def test_random_colour_shapes(tf):
    image = tf.constant(BATCH)
    return (
        tf.image.random_brightness(image, 0.2),
        tf.image.random_contrast(image, 0.5, 1.5),
        tf.image.random_hue(image, 0.2),
        tf.image.random_saturation(tf.constant(UINT8), 0.5, 1.5),
        tf.image.stateless_random_brightness(image, 0.2, SEED),
        tf.image.stateless_random_contrast(image, 0.5, 1.5, SEED),
        tf.image.stateless_random_hue(image, 0.2, SEED),
        tf.image.stateless_random_saturation(tf.constant(UINT8), 0.5, 1.5, SEED),
    )


@same_as_tf(
    "image.random_brightness",
    "image.random_contrast",
    "image.random_hue",
    "image.random_saturation",
    "image.stateless_random_brightness",
    "image.stateless_random_contrast",
    "image.stateless_random_hue",
    "image.stateless_random_saturation",
    edge=True,
    atol=1e-4,
)
def test_random_colour_stays_in_range_and_repeats_by_seed(tf):
    image = tf.constant(IMAGE)
    shift = tf.image.random_brightness(image, 0.2) - image
    spread = float(tf.reduce_max(shift) - tf.reduce_min(shift))
    same = tf.reduce_all(
        tf.image.stateless_random_hue(image, 0.3, SEED) == tf.image.stateless_random_hue(image, 0.3, SEED)
    )
    return round(spread, 4), bool(same), tf.image.random_hue(image, 0.0), tf.image.random_saturation(image, 1.0, 1.0001)


@same_as_tf("image.random_contrast", "image.stateless_random_contrast", "image.random_hue", edge=True)
def test_random_hue_bad_delta(tf):
    return tf.image.random_hue(tf.constant(IMAGE), 0.7)


@same_as_tf("image.adjust_jpeg_quality")
def test_adjust_jpeg_quality(tf):
    smooth = np.kron(UINT8, np.ones((4, 4, 1), np.uint8))
    return (
        tf.image.adjust_jpeg_quality(tf.constant(smooth), 40, dct_method="INTEGER_ACCURATE"),
        tf.image.adjust_jpeg_quality(
            tf.image.convert_image_dtype(smooth, tf.float32), 90, dct_method="INTEGER_ACCURATE"
        ),
    )


@same_as_tf("image.adjust_jpeg_quality", edge=True)
def test_adjust_jpeg_quality_out_of_range(tf):
    return tf.image.adjust_jpeg_quality(tf.constant(UINT8), 101)


@same_as_tf("image.random_jpeg_quality", "image.stateless_random_jpeg_quality", values=False)
def test_random_jpeg_quality_shapes(tf):
    return (
        tf.image.random_jpeg_quality(tf.constant(UINT8), 20, 80),
        tf.image.stateless_random_jpeg_quality(tf.constant(IMAGE), 20, 80, SEED),
    )


@same_as_tf("image.random_jpeg_quality", "image.stateless_random_jpeg_quality", edge=True)
def test_random_jpeg_quality_bad_range(tf):
    return tf.image.stateless_random_jpeg_quality(tf.constant(UINT8), 80, 20, SEED)
