"""The Reuters newswire topic set, loaded like ``keras.datasets.reuters``.

11,228 newswires labelled with 46 topics, each a list of word indices. Keras's ``reuters.npz`` and
``reuters_word_index.json`` are looked up in ``$UNISON_DATA_DIR/reuters/``, Keras's cache
``~/.keras/datasets/``, Debian's ``/usr/share/datasets/reuters/`` and unison's cache, else
downloaded from Keras's URL and checked against Keras's hash. The ragged arrays inside the ``.npz``
are read by a restricted unpickler.

Example:
    >>> from unison.keras.datasets import reuters
    >>> (x_train, y_train), (x_test, y_test) = reuters.load_data(num_words=10000)  # doctest: +SKIP
    >>> len(x_train), len(x_test)  # doctest: +SKIP
    (8982, 2246)
"""

from __future__ import annotations

import numpy as np

from unison.keras.datasets import _keras_files, _sequences

_ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
_NPZ = _keras_files.KerasFile(
    "reuters",
    "reuters.npz",
    _ORIGIN + "reuters.npz",
    "d6586e694ee56d7a4e65172e12b3e987c03096cb01eab99753921ef915959916",
)
_WORD_INDEX = _keras_files.KerasFile(
    "reuters", "reuters_word_index.json", _ORIGIN + "reuters_word_index.json", "4d44cc38712099c9e383dc6e5f11a921"
)
_LABELS = (
    "cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply", "coffee",
    "sugar", "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas", "cpi", "money-fx",
    "interest", "gnp", "meal-feed", "alum", "oilseed", "gold", "tin", "strategic-metal", "livestock",
    "retail", "ipi", "iron-steel", "rubber", "heat", "jobs", "lei", "bop", "zinc", "orange", "pet-chem",
    "dlr", "gas", "silver", "wpi", "hog", "lead",
)  # fmt: skip


def load_data(
    path: str = "reuters.npz",
    num_words: int | None = None,
    skip_top: int = 0,
    maxlen: int | None = None,
    test_split: float = 0.2,
    seed: int = 113,
    start_char: int | None = 1,
    oov_char: int | None = 2,
    index_from: int = 3,
) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load Reuters as Keras does.

    Args:
        path: Keras's file name (looked up in every place) or a path to it.
        num_words: keep indices ``< num_words``; the rest become ``oov_char``. None: all (Keras's
            rule: below the largest index present).
        skip_top: the ``skip_top`` most frequent indices also become ``oov_char``.
        maxlen: drop the newswires whose length, start mark included, is ``maxlen`` or more.
        test_split: fraction of the (shuffled) newswires that form the test split: the first
            ``int(n * (1 - test_split))`` are training ones.
        seed: seed of the shuffle (``np.random.RandomState``).
        start_char: index that starts every newswire (None: none).
        oov_char: index of removed words (None: drop them).
        index_from: added to every word rank.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: ``x`` 1-D object arrays of lists of ints,
        ``y`` int arrays of topic indices 0-45 (names: :func:`get_label_names`).

    Raises:
        ValueError: a negative limit or ``test_split`` outside ``[0, 1]``.
        DatasetError: the file is nowhere and cannot be downloaded, or is corrupt or unsafe.

    Example:
        >>> (x_train, y_train), _ = load_data(num_words=1000, test_split=0.5)  # doctest: +SKIP
        >>> int(max(max(x) for x in x_train)) < 1000  # doctest: +SKIP
        True
    """
    _sequences.check_args("reuters.load_data", num_words, skip_top, maxlen)
    if not 0 <= test_split <= 1:  # Keras takes 1.0 (everything in the test split)
        raise ValueError(f"reuters.load_data(test_split={test_split!r}): test_split must be in [0, 1].")
    arrays = _sequences.read_npz(_NPZ, path, ("x", "y"))
    _sequences.check_sequences(arrays["x"], arrays["y"], path)
    xs_raw, labels = _sequences.shuffle(np.random.RandomState(seed), arrays["x"], arrays["y"])
    xs = _sequences.shift(xs_raw, start_char, index_from)
    xs, labels = _sequences.drop_long(maxlen, xs, labels)
    xs = _sequences.cap_vocab(xs, num_words, skip_top, oov_char)
    idx = int(len(xs) * (1 - test_split))
    return (
        (_sequences.as_object_array(xs[:idx]), np.array(labels[:idx])),
        (_sequences.as_object_array(xs[idx:]), np.array(labels[idx:])),
    )


def get_word_index(path: str = "reuters_word_index.json") -> dict[str, int]:
    """Return the word -> rank dictionary of Reuters (add ``index_from``, 3, to match ``load_data``).

    Example:
        >>> get_word_index()["the"]  # doctest: +SKIP
        1
    """
    return _sequences.read_word_index(_WORD_INDEX, path)


def get_label_names() -> tuple[str, ...]:
    """The 46 topic names, indexed like the labels.

    Example:
        >>> get_label_names()[3]
        'earn'
    """
    return _LABELS
