"""The California housing prices, loaded like Keras 3's ``keras.datasets.california_housing``.

20,640 California block groups from the 1990 census, 8 features each (MedInc, HouseAge, AveRooms,
AveBedrms, Population, AveOccup, Latitude, Longitude); the target is the median house value in
dollars (StatLib). ``version="small"`` keeps the first 600 samples. Keras's
``california_housing.npz`` is looked up in ``$UNISON_DATA_DIR/california_housing/``, Keras's cache
``~/.keras/datasets/``, Debian's folder and unison's cache, else downloaded from Keras's URL and checked
against Keras's sha256.

Example:
    >>> from unison.keras.datasets import california_housing
    >>> (x_train, y_train), _ = california_housing.load_data(version="small")  # doctest: +SKIP
    >>> x_train.shape  # doctest: +SKIP
    (480, 8)
"""

from __future__ import annotations

from unison.keras.datasets import _housing, _keras_files

_NPZ = _keras_files.KerasFile(
    "california_housing",
    "california_housing.npz",
    "https://storage.googleapis.com/tensorflow/tf-keras-datasets/california_housing.npz",
    "1a2e3a52e0398de6463aebe6f4a8da34fb21fbb6b934cf88c3425e766f2a1a6f",
)
_SMALL = 600


def load_data(
    version: str = "large", path: str = "california_housing.npz", test_split: float = 0.2, seed: int = 113
) -> tuple[_housing.Split, _housing.Split]:
    """Load California housing as Keras 3 does.

    Args:
        version: ``"large"`` (all 20,640 samples) or ``"small"`` (the first 600, before shuffling).
        path: Keras's file name (looked up in every place) or a path to it.
        test_split: fraction of the shuffled samples kept for testing, in ``[0, 1)``.
        seed: seed of the shuffle (``np.random.RandomState``).

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: ``x`` of shape ``(n, 8)``, ``y`` of shape ``(n,)``.

    Raises:
        ValueError: ``version`` is not "large"/"small", or ``test_split`` is outside ``[0, 1)``.
        DatasetError: the file is nowhere and cannot be downloaded, or is not numeric x/y arrays.

    Example:
        >>> (x_train, _), (x_test, _) = load_data()  # doctest: +SKIP
        >>> len(x_train), len(x_test)  # doctest: +SKIP
        (16512, 4128)
    """
    _housing.check_test_split("california_housing.load_data", test_split)
    if version not in ("large", "small"):
        raise ValueError(
            f"california_housing.load_data(version={version!r}): version must be 'large' (20,640 samples) "
            "or 'small' (600)."
        )
    x, y = _housing.read_xy(_NPZ, path, features=8)
    if version == "small":
        x, y = x[:_SMALL], y[:_SMALL]
    return _housing.split(x, y, test_split, seed)
