"""Image files through ``keras.utils.load_img``/``save_img`` and ``keras.preprocessing.image``'s
``array_to_img``/``img_to_array``/``load_img``/``save_img`` on unison against Keras 3.15 and Keras 2
(tf_keras) on TF 2.21: the pixels written and read back, resized, converted between color modes."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")
WHERE = ("utils", "preprocessing.image")


def _funcs(tf, where: str):
    module = tf.keras.utils if where == "utils" else tf.keras.preprocessing.image
    image = tf.keras.preprocessing.image
    return module.load_img, module.save_img, image.array_to_img, image.img_to_array


def _names(where: str) -> tuple[str, ...]:
    return tuple(f"keras:{where}.{n}" for n in ("load_img", "save_img")) + tuple(
        f"keras:preprocessing.image.{n}" for n in ("array_to_img", "img_to_array")
    )


def _pixels(h: int = 6, w: int = 5, c: int = 3) -> np.ndarray:
    return ((np.arange(h * w * c).reshape(h, w, c) * 37) % 256).astype(np.float32)


@pytest.mark.parametrize("where", WHERE)
@same_as_tf(*_names("utils"), *_names("preprocessing.image"), dialects=BOTH)
def test_save_and_load_png(tf, where):
    import os
    import tempfile

    load_img, save_img, array_to_img, img_to_array = _funcs(tf, where)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "x.png")
        save_img(path, _pixels())
        img = load_img(path)
        small = load_img(path, target_size=(3, 2), interpolation="nearest")
        gray = load_img(path, color_mode="grayscale")
        scaled = array_to_img(_pixels() / 255.0 - 0.2)  # scale=True maps min..max to 0..255
        return (
            img.size,
            img.mode,
            img_to_array(img),
            img_to_array(small),
            img_to_array(gray),
            img_to_array(scaled),
            img_to_array(array_to_img(_pixels(c=1), scale=False), dtype="uint8"),
        )


@pytest.mark.parametrize("where", WHERE)
@same_as_tf(*_names("utils"), *_names("preprocessing.image"), edge=True, dialects=BOTH)
def test_rgba_jpeg_channels_first_and_bad_inputs(tf, where):
    import os
    import tempfile

    load_img, save_img, array_to_img, img_to_array = _funcs(tf, where)
    out = []
    with tempfile.TemporaryDirectory() as folder:
        rgba = os.path.join(folder, "a.png")
        save_img(rgba, _pixels(4, 4, 4))
        out.append(img_to_array(load_img(rgba, color_mode="rgba")))
        out.append(img_to_array(load_img(rgba, target_size=(2, 4), keep_aspect_ratio=True)))
        first = np.moveaxis(_pixels(3, 2, 3), -1, 0)
        save_img(os.path.join(folder, "f.bmp"), first, data_format="channels_first")
        out.append(img_to_array(load_img(os.path.join(folder, "f.bmp")), data_format="channels_first"))
        for bad in (
            lambda: array_to_img(np.zeros((2, 2), np.float32)),
            lambda: array_to_img(np.zeros((2, 2, 5), np.float32)),
            lambda: load_img(os.path.join(folder, "missing.png")),
            lambda: load_img(rgba, color_mode="cmyk"),
            lambda: img_to_array(array_to_img(_pixels()), data_format="channels_middle"),
        ):
            try:
                bad()
                out.append("accepted")
            except (ValueError, OSError) as exc:
                out.append(type(exc).__name__)
    return out
