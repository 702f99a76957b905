"""Small reference data sets, loaded like ``tf.keras.datasets``.

Each submodule has Keras's ``load_data(...) -> ((x_train, y_train), (x_test, y_test))`` returning
numpy arrays: ``mnist``, ``fashion_mnist``, ``cifar10``, ``cifar100``, ``imdb`` and ``reuters`` (with
``get_word_index``), ``boston_housing``, ``california_housing``. Files are looked up in
``$UNISON_DATA_DIR/<name>/``, Keras's ``~/.keras/datasets/`` (``$KERAS_HOME``; the files Keras itself
reads), Debian's ``/usr/share/datasets/``, then in the cache
(``$UNISON_CACHE_DIR/<name>/``, default ``~/.cache/unison/datasets/<name>/``), then downloaded
into the cache with sha256 verification; a missing or corrupt file raises
``unison.errors.DatasetError`` saying where unison looked and how to fix it.

Example:
    >>> from unison.keras.datasets import mnist
    >>> (x_train, y_train), (x_test, y_test) = mnist.load_data()
    >>> x_train.shape, x_test.shape
    ((60000, 28, 28), (10000, 28, 28))
"""

from unison.keras.datasets import (
    boston_housing,
    california_housing,
    cifar10,
    cifar100,
    fashion_mnist,
    imdb,
    mnist,
    reuters,
)

__all__ = [
    "boston_housing",
    "california_housing",
    "cifar10",
    "cifar100",
    "fashion_mnist",
    "imdb",
    "mnist",
    "reuters",
]
