"""The IMDB movie-review sentiment set, loaded like ``keras.datasets.imdb``.

25,000 training and 25,000 test reviews labelled 1 (positive) or 0 (negative), each a list of word
indices (Maas et al. 2011). Keras's ``imdb.npz`` and ``imdb_word_index.json`` are looked up in
``$UNISON_DATA_DIR/imdb/``, Keras's cache ``~/.keras/datasets/``, Debian's
``/usr/share/datasets/imdb/`` and unison's cache, else downloaded from Keras's URL and checked against
Keras's hash. The ragged arrays inside the ``.npz`` are read by a restricted unpickler.

Example:
    >>> from unison.keras.datasets import imdb
    >>> (x_train, y_train), (x_test, y_test) = imdb.load_data(num_words=10000)  # doctest: +SKIP
    >>> x_train[0][:3]  # doctest: +SKIP
    [1, 14, 22]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from unison.keras.datasets import _keras_files, _sequences

_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
_NPZ = _keras_files.KerasFile(
    "imdb", "imdb.npz", _ORIGIN + "imdb.npz", "69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f"
)
_WORD_INDEX = _keras_files.KerasFile(
    "imdb", "imdb_word_index.json", _ORIGIN + "imdb_word_index.json", "bfafd718b763782e994055a2d397834f"
)


def load_data(
    path: str = "imdb.npz",
    num_words: int | None = None,
    skip_top: int = 0,
    maxlen: int | None = None,
    seed: int = 113,
    start_char: int | None = 1,
    oov_char: int | None = 2,
    index_from: int = 3,
    **kwargs: Any,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load IMDB as Keras does.

    Args:
        path: Keras's file name (looked up in every place) or a path to it.
        num_words: keep the ``num_words`` most frequent words (indices ``< num_words``); the rest
            become ``oov_char``. None: all (Keras's rule: below the largest index present).
        skip_top: the ``skip_top`` most frequent indices also become ``oov_char``.
        maxlen: drop the reviews whose length, start mark included, is ``maxlen`` or more.
        seed: seed of the shuffle (``np.random.RandomState``), train then test.
        start_char: index that starts every review (None: none).
        oov_char: index of removed words (None: drop them).
        index_from: added to every word rank (ranks start at 1, so 0..index_from stay reserved).

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: ``x`` 1-D object arrays of lists of ints,
        ``y`` int arrays of 0/1.

    Raises:
        ValueError: a negative limit, an unknown keyword, or ``maxlen`` so small no review remains.
        DatasetError: the file is nowhere and cannot be downloaded, or is corrupt or unsafe.

    Example:
        >>> (x_train, _), _ = load_data(num_words=5000, maxlen=200)  # doctest: +SKIP
        >>> max(len(x) for x in x_train) < 200  # doctest: +SKIP
        True
    """
    if "nb_words" in kwargs and num_words is None:  # Keras 1's spelling, still honoured by Keras 2
        num_words = kwargs.pop("nb_words")
    if kwargs:
        raise TypeError(f"imdb.load_data() got unexpected keyword arguments {sorted(kwargs)}.")
    _sequences.check_args("imdb.load_data", num_words, skip_top, maxlen)
    arrays = _sequences.read_npz(_NPZ, path, ("x_train", "y_train", "x_test", "y_test"))
    _sequences.check_sequences(arrays["x_train"], arrays["y_train"], f"{path} (train)")
    _sequences.check_sequences(arrays["x_test"], arrays["y_test"], f"{path} (test)")
    rng = np.random.RandomState(seed)
    x_train, labels_train = _sequences.shuffle(rng, arrays["x_train"], arrays["y_train"])
    x_test, labels_test = _sequences.shuffle(rng, arrays["x_test"], arrays["y_test"])
    train = _sequences.shift(x_train, start_char, index_from)
    test = _sequences.shift(x_test, start_char, index_from)
    train, labels_train = _sequences.drop_long(maxlen, train, labels_train)
    test, labels_test = _sequences.drop_long(maxlen, test, labels_test)
    if maxlen and (not train or not test):
        raise ValueError(
            f"imdb.load_data(maxlen={maxlen}): no review is shorter than {maxlen} words (the start mark "
            f"included) in the {'training' if not train else 'test'} split. Increase maxlen."
        )
    xs = _sequences.cap_vocab(train + test, num_words, skip_top, oov_char)
    n = len(train)
    return (
        (_sequences.as_object_array(xs[:n]), labels_train),
        (_sequences.as_object_array(xs[n:]), labels_test),
    )


def get_word_index(path: str = "imdb_word_index.json") -> dict[str, int]:
    """Return the word -> rank dictionary of IMDB (rank 1 is the most frequent word).

    Add ``index_from`` (3) to a rank to get the index ``load_data`` uses.

    Example:
        >>> word_index = get_word_index()  # doctest: +SKIP
        >>> word_index["the"]  # doctest: +SKIP
        1
    """
    return _sequences.read_word_index(_WORD_INDEX, path)
