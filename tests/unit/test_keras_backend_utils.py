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
