"""``tf.image``'s measurements, patches and boxes against TensorFlow 2.21 (see tf_oracle.py)."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

_RNG = np.random.default_rng(11)
BATCH = _RNG.random((2, 6, 7, 3)).astype(np.float32)
UINT8 = _RNG.integers(0, 256, (2, 5, 6, 2), dtype=np.uint8)
LARGE = _RNG.random((2, 24, 20, 3)).astype(np.float32)
NOISY = np.clip(LARGE + _RNG.normal(0, 0.1, LARGE.shape), 0, 1).astype(np.float32)
BOXES = np.array(
    [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1], [0, 100, 1, 101]],
    dtype=np.float32,
)
SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], dtype=np.float32)


@same_as_tf("image.image_gradients", "image.sobel_edges", "image.total_variation")
def test_gradients_sobel_total_variation(tf):
    image = tf.constant(BATCH)
    dy, dx = tf.image.image_gradients(image)
    return dy, dx, tf.image.sobel_edges(image), tf.image.total_variation(image), tf.image.total_variation(image[0])


@same_as_tf("image.image_gradients", "image.sobel_edges", "image.total_variation", edge=True)
def test_gradients_of_integers_and_one_pixel(tf):
    image = tf.constant(UINT8)
    dy, dx = tf.image.image_gradients(tf.cast(image, tf.int32))
    return dy, dx, tf.image.sobel_edges(tf.ones([1, 2, 2, 1])), tf.image.total_variation(tf.cast(image, tf.int32))


@same_as_tf("image.image_gradients", edge=True)
def test_image_gradients_of_a_3d_image_is_an_error(tf):
    return tf.image.image_gradients(tf.constant(BATCH[0]))


@same_as_tf("image.psnr")
def test_psnr(tf):
    a, b = tf.constant(LARGE), tf.constant(NOISY)
    u8a = tf.image.convert_image_dtype(a, tf.uint8)
    u8b = tf.image.convert_image_dtype(b, tf.uint8)
    return tf.image.psnr(a, b, max_val=1.0), tf.image.psnr(u8a, u8b, max_val=255)


@same_as_tf("image.psnr", edge=True)
def test_psnr_of_identical_images_is_infinite(tf):
    return tf.image.psnr(tf.constant(LARGE), tf.constant(LARGE), 1.0)


@same_as_tf("image.ssim", atol=1e-5)
def test_ssim(tf):
    a, b = tf.constant(LARGE), tf.constant(NOISY)
    return (
        tf.image.ssim(a, b, max_val=1.0),
        tf.image.ssim(a, b, 1.0, filter_size=5, filter_sigma=1.0, k1=0.02),
        tf.image.ssim(a, b, 1.0, filter_size=7, return_index_map=True),
        tf.image.ssim(tf.image.convert_image_dtype(a, tf.uint8), tf.image.convert_image_dtype(b, tf.uint8), 255),
    )


@same_as_tf("image.ssim", edge=True, atol=1e-5)
def test_ssim_of_identical_images_and_single_image(tf):
    return tf.image.ssim(tf.constant(LARGE), tf.constant(LARGE), 1.0), tf.image.ssim(
        tf.constant(LARGE[0]), tf.constant(NOISY[0]), 1.0
    )


@same_as_tf("image.ssim_multiscale", atol=1e-5)
def test_ssim_multiscale(tf):
    a, b = tf.constant(LARGE), tf.constant(NOISY)
    return tf.image.ssim_multiscale(a, b, 1.0, power_factors=(0.5, 0.3, 0.2), filter_size=3)


@same_as_tf("image.ssim_multiscale", edge=True, atol=1e-5)
def test_ssim_multiscale_of_odd_sizes(tf):
    a, b = tf.constant(LARGE[:, :23, :19]), tf.constant(NOISY[:, :23, :19])
    return tf.image.ssim_multiscale(a, b, 1.0, power_factors=(0.6, 0.4), filter_size=5)


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
@pytest.mark.parametrize(("size", "stride", "rate"), [(2, 2, 1), (3, 2, 1), (2, 3, 2), (3, 1, 1)])
@same_as_tf("image.extract_patches")
def test_extract_patches(tf, padding, size, stride, rate):
    return tf.image.extract_patches(
        tf.constant(BATCH), [1, size, size, 1], [1, stride, stride, 1], [1, rate, rate, 1], padding
    )


@same_as_tf("image.extract_patches", edge=True)
def test_extract_patches_larger_than_the_image(tf):
    return tf.image.extract_patches(tf.constant(UINT8), [1, 6, 6, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")


@pytest.mark.parametrize("iou", [0.5, 0.05])
@same_as_tf("image.non_max_suppression", "image.non_max_suppression_with_scores")
def test_non_max_suppression(tf, iou):
    boxes, scores = tf.constant(BOXES), tf.constant(SCORES)
    return (
        tf.image.non_max_suppression(boxes, scores, 5, iou_threshold=iou),
        tf.image.non_max_suppression(boxes, scores, 2, iou_threshold=iou, score_threshold=0.55),
        tf.image.non_max_suppression_with_scores(boxes, scores, 6, iou_threshold=iou),
        tf.image.non_max_suppression_with_scores(boxes, scores, 6, iou_threshold=1.0, soft_nms_sigma=0.5),
    )


@same_as_tf("image.non_max_suppression", "image.non_max_suppression_with_scores", edge=True)
def test_non_max_suppression_of_no_boxes_and_flipped_corners(tf):
    flipped = tf.constant(BOXES[:, [2, 3, 0, 1]])
    return (
        tf.image.non_max_suppression(tf.zeros([0, 4]), tf.zeros([0]), 3),
        tf.image.non_max_suppression(flipped, tf.constant(SCORES), 6),
        tf.image.non_max_suppression_with_scores(flipped, tf.constant(SCORES), 0),
    )


@same_as_tf("image.non_max_suppression", edge=True)
def test_non_max_suppression_bad_scores_shape(tf):
    return tf.image.non_max_suppression(tf.constant(BOXES), tf.constant(SCORES[:3]), 3)


@same_as_tf("image.non_max_suppression_overlaps")
def test_non_max_suppression_overlaps(tf):
    overlaps = tf.constant(_RNG.random((5, 5)).astype(np.float32))
    return tf.image.non_max_suppression_overlaps(overlaps, tf.constant(SCORES[:5]), 4, overlap_threshold=0.6)


@same_as_tf("image.non_max_suppression_overlaps", edge=True)
def test_non_max_suppression_overlaps_with_a_score_threshold(tf):
    overlaps = tf.constant(np.eye(4, dtype=np.float32))
    return tf.image.non_max_suppression_overlaps(overlaps, tf.constant(SCORES[:4]), 4, score_threshold=0.7)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@same_as_tf("image.crop_and_resize")
def test_crop_and_resize(tf, method):
    boxes = tf.constant([[0.1, 0.2, 0.8, 0.9], [0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])
    return tf.image.crop_and_resize(tf.constant(BATCH), boxes, [0, 1, 1], [4, 3], method=method)


@same_as_tf("image.crop_and_resize", edge=True)
def test_crop_and_resize_outside_the_image_extrapolates(tf):
    boxes = tf.constant([[-0.5, -0.5, 1.5, 1.5], [0.2, 0.3, 0.2, 0.3]])
    image = tf.constant(UINT8)
    return (
        tf.image.crop_and_resize(image, boxes, [1, 0], [5, 4], extrapolation_value=-1.0),
        tf.image.crop_and_resize(image, boxes, [0, 1], [1, 1]),
    )


@same_as_tf("image.non_max_suppression_padded")
def test_non_max_suppression_padded(tf):
    boxes, scores = tf.constant(BOXES), tf.constant(SCORES)
    batch_boxes, batch_scores = tf.stack([boxes, tf.reverse(boxes, [0])]), tf.stack([scores, scores])
    return (
        tf.image.non_max_suppression_padded(boxes, scores, 5),
        tf.image.non_max_suppression_padded(boxes, scores, 5, pad_to_max_output_size=True, score_threshold=0.55),
        tf.image.non_max_suppression_padded(batch_boxes, batch_scores, 5, pad_to_max_output_size=True),
    )


@same_as_tf("image.non_max_suppression_padded", edge=True)
def test_non_max_suppression_padded_of_a_batch_needs_padding(tf):
    boxes = tf.constant(np.stack([BOXES, BOXES]))
    return tf.image.non_max_suppression_padded(boxes, tf.constant(np.stack([SCORES, SCORES])), 3)


CLASS_SCORES = _RNG.permutation(np.linspace(0.05, 0.95, 2 * 6 * 3)).reshape(2, 6, 3).astype(np.float32)


@same_as_tf("image.combined_non_max_suppression")
def test_combined_non_max_suppression(tf):
    shared = tf.constant(np.stack([BOXES / 101, BOXES[::-1] / 101])[:, :, None, :])
    per_class = tf.constant(np.stack([np.stack([BOXES / 101] * 3, axis=1)] * 2))
    scores = tf.constant(CLASS_SCORES)
    return (
        tf.image.combined_non_max_suppression(shared, scores, 3, 7, iou_threshold=0.3),
        tf.image.combined_non_max_suppression(per_class, scores, 2, 20, score_threshold=0.4, pad_per_class=True),
        tf.image.combined_non_max_suppression(tf.constant(BOXES[None, :, None, :]), scores[:1], 2, 4),
    )


@same_as_tf("image.combined_non_max_suppression", edge=True)
def test_combined_non_max_suppression_bad_q(tf):
    boxes = tf.zeros([1, 6, 2, 4])
    return tf.image.combined_non_max_suppression(boxes, tf.constant(CLASS_SCORES[:1]), 2, 4)


@same_as_tf("image.draw_bounding_boxes")
def test_draw_bounding_boxes(tf):
    boxes = tf.constant([[[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0]], [[0.5, 0.5, 0.6, 0.9], [-0.5, 0.3, 0.5, 2.0]]])
    colors = tf.constant([[1.0, 0.0, 0.0, 1.0], [0.0, 0.5, 1.0, 1.0]])
    return (
        tf.image.draw_bounding_boxes(tf.constant(BATCH), boxes, colors),
        tf.image.draw_bounding_boxes(tf.constant(BATCH[..., :1]), boxes, None),
    )


@same_as_tf("image.draw_bounding_boxes", edge=True)
def test_draw_inverted_and_outside_boxes_draws_nothing(tf):
    boxes = tf.constant([[[0.8, 0.2, 0.1, 0.9], [2.0, 2.0, 3.0, 3.0]]])
    return tf.image.draw_bounding_boxes(tf.constant(BATCH[:1]), boxes, tf.constant([[1.0, 1.0, 1.0, 1.0]]))


@same_as_tf("image.sample_distorted_bounding_box", "image.stateless_sample_distorted_bounding_box", values=False)
def test_sample_distorted_bounding_box_shapes(tf):
    boxes = tf.constant([[[0.1, 0.1, 0.9, 0.9]]])
    return (
        tf.image.sample_distorted_bounding_box([40, 60, 3], boxes, min_object_covered=0.5),
        tf.image.stateless_sample_distorted_bounding_box([40, 60, 3], boxes, seed=(1, 2), area_range=(0.3, 0.9)),
    )


@same_as_tf("image.sample_distorted_bounding_box", "image.stateless_sample_distorted_bounding_box", edge=True)
def test_sampled_crops_lie_inside_and_cover_enough(tf):
    boxes = tf.constant([[[0.2, 0.3, 0.7, 0.8]]])
    checks = []
    for i in range(20):
        begin, size, box = tf.image.stateless_sample_distorted_bounding_box(
            [50, 40, 3], boxes, seed=(i, 7), min_object_covered=0.6, area_range=(0.2, 1.0), max_attempts=200
        )
        y, x, h, w = int(begin[0]), int(begin[1]), int(size[0]), int(size[1])
        inside = y >= 0 and x >= 0 and y + h <= 50 and x + w <= 40 and int(size[2]) == -1
        covered = max(min(35, y + h) - max(10, y), 0) * max(min(32, x + w) - max(12, x), 0) / (25 * 20)
        checks.append(inside and covered >= 0.6 and abs(float(box[0, 0, 2]) - (y + h) / 50) < 1e-6)
    again = tf.image.stateless_sample_distorted_bounding_box([50, 40, 3], boxes, seed=(3, 7))[0]
    same = (
        again.numpy().tolist()
        == tf.image.stateless_sample_distorted_bounding_box([50, 40, 3], boxes, seed=(3, 7))[0].numpy().tolist()
    )
    whole = tf.image.sample_distorted_bounding_box(
        [10, 10, 1],
        tf.zeros([1, 0, 4]),
        use_image_if_no_bounding_boxes=True,
        area_range=(1.0, 1.0),
        aspect_ratio_range=(1.0, 1.0),
    )
    return all(checks), same, whole


GLIMPSE_IMAGE = np.arange(2 * 7 * 7 * 2, dtype=np.float32).reshape(2, 7, 7, 2)


@pytest.mark.parametrize(
    ("offsets", "centered", "normalized"),
    [
        ([[0.3, -0.2], [1.3, -1.2]], True, False),
        ([[0.3, 0.8], [0.55, 0.45]], False, True),
        ([[-0.3, 0.25], [0.9, 0.1]], True, True),
        ([[3.7, 2.2], [-0.7, -1.2]], False, False),
    ],
)
@same_as_tf("image.extract_glimpse")
def test_extract_glimpse(tf, offsets, centered, normalized):
    image = tf.constant(GLIMPSE_IMAGE)
    return tf.image.extract_glimpse(image, [3, 4], offsets, centered=centered, normalized=normalized, noise="zero")


@same_as_tf("image.extract_glimpse", edge=True)
def test_extract_glimpse_inside_the_image_ignores_the_noise(tf):
    image = tf.constant(GLIMPSE_IMAGE)
    inside = tf.image.extract_glimpse(image, [2, 2], [[0.0, 0.0], [0.2, -0.2]])
    outside = tf.image.extract_glimpse(image, [5, 5], [[0.9, 0.9], [-0.9, 0.0]], noise="gaussian")
    return inside, list(outside.shape), bool(tf.reduce_all(tf.math.is_finite(outside)))
