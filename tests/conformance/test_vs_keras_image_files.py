"""``save_img``/``load_img``/``img_to_array``/``array_to_img`` through files, on the
``keras.utils`` and ``keras.preprocessing.image`` paths, against Keras 3.15 and tf_keras 2.21."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")
NAMES = (
    "keras:utils.load_img",
    "keras:utils.save_img",
    "keras:preprocessing.image.load_img",
    "keras:preprocessing.image.save_img",
    "keras:preprocessing.image.img_to_array",
    "keras:preprocessing.image.array_to_img",
)
IMAGE = (np.arange(4 * 5 * 3).reshape(4, 5, 3) * 4 % 256).astype("float32")


@same_as_tf(*NAMES, dialects=BOTH)
def test_image_file_round_trip(tf, tmp_path):
    image = tf.keras.preprocessing.image
    path = str(tmp_path / f"{tf.__name__}.png")
    tf.keras.utils.save_img(path, IMAGE)
    rgb = image.img_to_array(tf.keras.utils.load_img(path))
    gray = image.img_to_array(image.load_img(path, color_mode="grayscale"))
    small = image.img_to_array(image.load_img(path, target_size=(2, 3), interpolation="nearest"))
    first = str(tmp_path / f"{tf.__name__}_first.png")
    image.save_img(first, np.transpose(IMAGE, (2, 0, 1)), data_format="channels_first")
    pil = image.array_to_img(IMAGE[:, :, :1], scale=False)
    return rgb, gray, small, image.img_to_array(image.load_img(first)), pil.size, pil.mode


@pytest.mark.parametrize("case", ["missing_file", "bad_rank", "bad_color_mode", "rgba"])
@same_as_tf(*NAMES, edge=True, dialects=BOTH)
def test_image_file_mistakes(tf, tmp_path, case):
    image = tf.keras.preprocessing.image
    if case == "missing_file":
        return image.load_img(str(tmp_path / "no_such.png"))
    if case == "bad_rank":
        return image.array_to_img(np.zeros((4, 5), "float32"))
    if case == "bad_color_mode":
        path = str(tmp_path / f"{tf.__name__}.png")
        tf.keras.utils.save_img(path, IMAGE)
        return tf.keras.utils.load_img(path, color_mode="cmyk")
    path = str(tmp_path / f"{tf.__name__}_rgba.png")
    image.save_img(path, np.concatenate([IMAGE, np.full((4, 5, 1), 255.0, "float32")], axis=-1))
    return image.img_to_array(image.load_img(path, color_mode="rgba"))
