"""Small reference data sets, loaded like ``tf.keras.datasets``.

Each submodule has ``load_data() -> ((x_train, y_train), (x_test, y_test))`` returning uint8
numpy arrays. Files are looked up in ``$UNISON_DATA_DIR/<name>/``, then in the cache
(``$UNISON_CACHE_DIR/<name>/``, default ``~/.cache/unison/datasets/<name>/``), then downloaded
into the cache with sha256 verification; a missing or corrupt file raises
``unison.errors.DatasetError`` saying where unison looked and how to fix it.

Example:
    >>> from unison.keras.datasets import mnist
    >>> (x_train, y_train), (x_test, y_test) = mnist.load_data()
    >>> x_train.shape, x_test.shape
    ((60000, 28, 28), (10000, 28, 28))
"""

from unison.keras.datasets import fashion_mnist, mnist

__all__ = ["fashion_mnist", "mnist"]
