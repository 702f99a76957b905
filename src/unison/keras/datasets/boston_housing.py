"""The Boston housing prices, loaded like ``keras.datasets.boston_housing``.

506 suburbs of Boston in the 1970s, 13 attributes each; the target is the median home value in
k$ (StatLib). Keras warns that the attribute "B" makes the set ethically problematic; prefer
``california_housing(version="small")`` for new work. Keras's ``boston_housing.npz`` is looked up in
``$UNISON_DATA_DIR/boston_housing/``, Keras's cache ``~/.keras/datasets/``, Debian's folder and
unison's cache, else downloaded from Keras's URL and checked against Keras's sha256.

Example:
    >>> from unison.keras.datasets import boston_housing
    >>> (x_train, y_train), (x_test, y_test) = boston_housing.load_data()  # doctest: +SKIP
    >>> x_train.shape, x_test.shape  # doctest: +SKIP
    ((404, 13), (102, 13))
"""

from __future__ import annotations

from unison.keras.datasets import _housing, _keras_files

_NPZ = _keras_files.KerasFile(
    "boston_housing",
    "boston_housing.npz",
    "https://storage.googleapis.com/tensorflow/tf-keras-datasets/boston_housing.npz",
    "f553886a1f8d56431e820c5b82552d9d95cfcb96d1e678153f8839538947dff5",
)


def load_data(
    path: str = "boston_housing.npz", test_split: float = 0.2, seed: int = 113
) -> tuple[_housing.Split, _housing.Split]:
    """Load Boston housing as Keras does.

    Args:
        path: Keras's file name (looked up in every place) or a path to it.
        test_split: fraction of the shuffled samples kept for testing, in ``[0, 1)``.
        seed: seed of the shuffle (``np.random.RandomState``).

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: float64 ``x`` of shape ``(n, 13)`` and ``y`` of
        shape ``(n,)``; 404 training and 102 test samples with the defaults.

    Raises:
        ValueError: ``test_split`` outside ``[0, 1)``.
        DatasetError: the file is nowhere and cannot be downloaded, or is not numeric x/y arrays.

    Example:
        >>> (x_train, y_train), _ = load_data(test_split=0.5)  # doctest: +SKIP
        >>> len(x_train)  # doctest: +SKIP
        253
    """
    _housing.check_test_split("boston_housing.load_data", test_split)
    x, y = _housing.read_xy(_NPZ, path, features=13)
    return _housing.split(x, y, test_split, seed)
