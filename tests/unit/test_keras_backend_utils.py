"""keras.utils.pad_sequences (and keras.preprocessing.sequence.pad_sequences), keras.utils.normalize."""

import numpy as np
import pytest
import torch

from unison import keras
from unison.keras.preprocessing.sequence import pad_sequences


def test_defaults_pad_and_truncate_at_the_front():
    out = keras.utils.pad_sequences([[1, 2, 3], [4, 5], [6]])
    assert out.dtype == np.int32
    assert out.tolist() == [[1, 2, 3], [0, 4, 5], [0, 0, 6]]
    assert keras.utils.pad_sequences([[1, 2, 3, 4]], maxlen=2).tolist() == [[3, 4]]
    assert pad_sequences is keras.utils.pad_sequences


def test_post_padding_truncating_value_dtype():
    out = keras.utils.pad_sequences(
        [[1, 2, 3, 4], [5]], maxlen=3, padding="post", truncating="post", value=-1, dtype="float32"
    )
    assert out.dtype == np.float32 and out.tolist() == [[1, 2, 3], [5, -1, -1]]


def test_empty_sequences_vector_items_and_strings():
    assert keras.utils.pad_sequences([[], [1]], maxlen=2).tolist() == [[0, 0], [0, 1]]
    vectors = keras.utils.pad_sequences([np.ones((1, 2)), np.ones((2, 2))])
    assert vectors.shape == (2, 2, 2) and vectors[0].tolist() == [[0, 0], [1, 1]]
    words = keras.utils.pad_sequences([["a", "b"], ["c"]], dtype=object, value="<pad>")
    assert words.tolist() == [["a", "b"], ["<pad>", "c"]]
    assert keras.utils.pad_sequences([]).shape == (0, 0)


def test_errors():
    with pytest.raises(ValueError, match="padding must be 'pre' or 'post'"):
        keras.utils.pad_sequences([[1]], padding="both")
    with pytest.raises(ValueError, match="Entry 1 is 5"):
        keras.utils.pad_sequences([[1], 5])
    with pytest.raises(ValueError, match="cannot hold the padding value"):
        keras.utils.pad_sequences([[1]], value="x")
    with pytest.raises(ValueError, match="same shape"):
        keras.utils.pad_sequences([np.ones((1, 2)), np.ones((1, 3))])
    with pytest.raises(ValueError, match="maxlen must be non-negative"):
        keras.utils.pad_sequences([[1]], maxlen=-1)


def test_normalize():
    out = keras.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert isinstance(out, np.ndarray) and out.tolist() == [[0.6, 0.8], [0.0, 0.0]]
    l1 = keras.utils.normalize([[1, 3]], order=1)
    assert l1.dtype == np.float32 and l1.tolist() == [[0.25, 0.75]]
    cols = keras.utils.normalize(np.array([[3.0, 1.0], [4.0, 0.0]]), axis=0)
    assert cols.tolist() == [[0.6, 1.0], [0.8, 0.0]]
    t = keras.utils.normalize(torch.tensor([[3.0, 4.0]]))
    assert isinstance(t, torch.Tensor) and torch.allclose(t, torch.tensor([[0.6, 0.8]]))
    with pytest.raises(ValueError, match="expects numbers"):
        keras.utils.normalize(np.array(["a"]))


def test_image_round_trip_and_loading(tmp_path):
    from unison.keras.preprocessing import image

    pixels = np.zeros((4, 6, 3), np.float32)
    pixels[:, 3:, 0] = 255.0  # right half red
    path = tmp_path / "red.png"
    image.save_img(path, pixels, scale=False)
    loaded = image.load_img(path)
    arr = image.img_to_array(loaded)
    assert arr.dtype == np.float32 and arr.shape == (4, 6, 3) and arr[0, 5].tolist() == [255.0, 0.0, 0.0]
    small = image.img_to_array(image.load_img(path, target_size=(2, 3)))
    assert small.shape == (2, 3, 3) and small[0, 2, 0] == 255.0 and small[0, 0, 0] == 0.0
    gray = image.img_to_array(image.load_img(path, color_mode="grayscale"), data_format="channels_first")
    assert gray.shape == (1, 4, 6)
    square = image.load_img(path, target_size=(4, 4), keep_aspect_ratio=True)
    assert square.size == (4, 4)
    scaled = image.img_to_array(image.array_to_img(np.array([[[0.0], [0.5]]])))
    assert scaled[:, :, 0].tolist() == [[0.0, 255.0]]  # scale=True stretches to [0, 255]
    with pytest.raises(FileNotFoundError, match="no image file"):
        image.load_img(tmp_path / "missing.png")
    with pytest.raises(ValueError, match="color_mode must be one of"):
        image.load_img(path, color_mode="cmyk")
    with pytest.raises(ValueError, match="1, 3 or 4 channels"):
        image.array_to_img(np.zeros((2, 2, 2)))
