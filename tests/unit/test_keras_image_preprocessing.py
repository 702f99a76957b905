"""unison's own side of Keras 3's newer image layers and keras.visualization: error messages,
seeding, the cases where unison keeps going where Keras 3.15 fails (empty batches), module moves."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

import unison as tf
from unison.keras import layers, visualization
from unison.keras.utils import bounding_boxes

pytestmark = pytest.mark.timeout(120)

_IMAGES = torch.tensor((np.cos(np.arange(2 * 8 * 8 * 3) * 0.9) * 100 + 120).reshape(2, 8, 8, 3), dtype=torch.float32)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: layers.MaxNumBoundingBoxes(max_number=-1), r"max_number.*>= 0.*Received: max_number=-1"),
        (
            lambda: layers.ContrastLimitedAdaptiveHistogramEqualization(tile_grid_size=(0, 2)),
            r"tile_grid_size.*positive",
        ),
        (lambda: layers.RandAugment(num_ops=-2), r"num_ops.*non-negative.*Received: num_ops=-2"),
        (lambda: layers.AugMix(alpha=0.0), r"alpha.*positive.*Received: alpha=0.0"),
        (lambda: layers.AugMix(value_range=(1, 2, 3)), r"value_range.*two numbers"),
        (lambda: layers.RandomPerspective(data_format="channels_first"), r"channels-last.*channels_first"),
    ],
)
def test_bad_arguments_say_what_to_pass(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_a_hand_made_randaugment_transformation_is_checked():
    layer = layers.RandAugment()
    with pytest.raises(ValueError, match=r"layer_idxes.*\[0, 11\).*Received: 11"):
        layer.transform_images(_IMAGES, {"transforms": {}, "layer_idxes": [11]})


def test_images_of_the_wrong_rank_are_refused():
    with pytest.raises(ValueError, match=r"rank 3 \(single image\) or 4.*\(8, 8\)"):
        layers.RandomPerspective()(torch.zeros(8, 8))


def test_seeded_layers_repeat_their_draws():
    for make in (
        lambda: layers.AugMix(seed=3),
        lambda: layers.RandAugment(seed=3),
        lambda: layers.RandomPerspective(seed=3),
        lambda: layers.RandomElasticTransform(seed=3),
    ):
        first, second = make()(_IMAGES), make()(_IMAGES)
        assert torch.equal(first, second)
        assert not torch.equal(first, _IMAGES)


def test_policy_layers_still_move_between_dtypes():
    # the operations live as submodules: Module.to reaches them (a method named _apply once hid torch's)
    layer = layers.RandAugment(num_ops=1, seed=0).to(torch.float64)
    assert layer(_IMAGES.double()).dtype == torch.float64


def test_empty_batches_pass_where_keras_fails():
    # Keras 3.15's CLAHE and RandAugment raise on an empty batch; unison returns it empty
    empty = torch.zeros(0, 8, 8, 3)
    for layer in (layers.ContrastLimitedAdaptiveHistogramEqualization(), layers.RandAugment(seed=1)):
        assert layer(empty).shape == (0, 8, 8, 3)


def test_perspective_moves_boxes_and_masks_with_the_images():
    layer = layers.RandomPerspective(factor=(1.0, 1.0), scale=0.0, bounding_box_format="xyxy", seed=0)
    data = {
        "images": _IMAGES,
        "bounding_boxes": {
            "boxes": np.array([[[1.0, 1.0, 4.0, 5.0]], [[0.0, 2.0, 9.0, 6.0]]]),
            "labels": np.ones((2, 1)),
        },
        "segmentation_masks": torch.arange(2 * 8 * 8.0).reshape(2, 8, 8, 1),
    }
    out = layer(data)  # scale 0: the corners stay, so does everything else (boxes clipped to the image)
    assert torch.allclose(out["images"], _IMAGES, atol=1e-3)
    assert out["bounding_boxes"]["boxes"].tolist() == [[[1.0, 1.0, 4.0, 5.0]], [[0.0, 2.0, 8.0, 6.0]]]
    assert torch.equal(out["segmentation_masks"], data["segmentation_masks"])


def test_stft_of_a_signal_shorter_than_a_frame_has_no_frames():
    assert layers.STFTSpectrogram(frame_length=8)(torch.ones(1, 4, 1)).shape == (1, 0, 5)


def test_draw_bounding_boxes_without_opencv_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "cv2", None)
    with pytest.raises(ImportError, match=r"opencv-python-headless"):
        visualization.draw_bounding_boxes(
            np.zeros((1, 4, 4, 3)), {"boxes": np.zeros((1, 0, 4)), "labels": np.zeros((1, 0))}, "xyxy"
        )


def test_the_names_are_where_keras_puts_them():
    assert tf.keras.utils.bounding_boxes.compute_iou is bounding_boxes.compute_iou
    assert tf.keras.visualization.plot_image_gallery is visualization.plot_image_gallery
    assert tf.keras.layers.STFTSpectrogram is layers.STFTSpectrogram


def test_layers_work_in_a_unison_dataset_map():
    ds = tf.data.Dataset.from_tensor_slices(_IMAGES.numpy()).map(layers.RandAugment(seed=1)).batch(2)
    (batch,) = list(ds)
    assert tuple(batch.shape) == (2, 8, 8, 3)


def test_a_dict_without_images_is_refused():
    with pytest.raises(ValueError, match=r"'images' key.*Received a dict with keys \['labels'\]"):
        layers.AugMix()({"labels": np.ones(2)})
