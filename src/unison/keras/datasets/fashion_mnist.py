"""Fashion-MNIST (Zalando article images), loaded like ``tf.keras.datasets.fashion_mnist``.

60,000 training and 10,000 test images, 28x28 grayscale, in 10 classes: 0 T-shirt/top,
1 Trouser, 2 Pullover, 3 Dress, 4 Coat, 5 Sandal, 6 Shirt, 7 Sneaker, 8 Bag, 9 Ankle boot
(Xiao, Rasul, Vollgraf 2017; MIT license). Files are looked up in
``$UNISON_DATA_DIR/fashion_mnist/`` (or ``fashion-mnist/``, Debian's and Keras's name), then Keras's
own ``~/.keras/datasets/fashion-mnist/``, Debian's ``/usr/share/datasets/``, then in the cache (``$UNISON_CACHE_DIR/fashion_mnist/``,
default ``~/.cache/unison/datasets/fashion_mnist/``), then downloaded from Keras's mirror (or
``$UNISON_DATASETS_MIRROR``) with sha256 verification.

Example:
    >>> from unison.keras.datasets import fashion_mnist
    >>> (x_train, y_train), (x_test, y_test) = fashion_mnist.load_data()
    >>> x_train.shape
    (60000, 28, 28)
"""

from __future__ import annotations

from unison.keras.datasets import _fetch, _loader

# sha256 of Zalando's release files (26421880, 29515, 4422102 and 5148 bytes), which Keras's
# mirror serves unchanged. Zalando's README publishes only md5s (8d4fb7e6c68d591d4c3dfef9ec88bf0d,
# 25c81989df183df01b3e8a0aad5dffbe, bef4ecab320f06d8554ea6380940ec79,
# bb300cfdad3c16e7a12a480ee83cd310); these sha256 values are the ones many independent public
# checksum lists pair with those md5s and sizes.
_SPEC = _fetch.DatasetSpec(
    name="fashion_mnist",
    mirror="https://storage.googleapis.com/tensorflow/tf-keras-datasets/",
    sha256={
        _fetch.TRAIN_IMAGES: "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
        _fetch.TRAIN_LABELS: "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
        _fetch.TEST_IMAGES: "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
        _fetch.TEST_LABELS: "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
    },
    aliases=("fashion-mnist",),  # Keras's and Debian's (dataset-fashion-mnist) folder name
)


def load_data() -> tuple[_loader.Split, _loader.Split]:
    """Load Fashion-MNIST as Keras does.

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 numpy arrays, images shaped
        ``(60000, 28, 28)`` and ``(10000, 28, 28)`` with values 0-255, labels shaped
        ``(60000,)`` and ``(10000,)`` with class indices 0-9.

    Raises:
        DatasetError: the files are missing and cannot be downloaded, a download does not
            match its sha256, or a local file is corrupt. The message names the file, every
            place unison looked and how to fix it.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = load_data()
        >>> x_test.shape, y_test.shape
        ((10000, 28, 28), (10000,))
    """
    return _loader.load(_SPEC)
