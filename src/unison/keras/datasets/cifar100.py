"""CIFAR-100, loaded like ``keras.datasets.cifar100``.

50,000 training and 10,000 test colour images, 32x32, labelled with 100 fine classes grouped into
20 coarse superclasses (Krizhevsky 2009). The folder ``cifar-100-python/`` (``train``, ``test``) or
the tarball ``cifar-100-python.tar.gz`` (or the binary version, ``cifar-100-binary/`` or
``cifar-100-binary.tar.gz``) is looked up in ``$UNISON_DATA_DIR/cifar100/``, Keras's cache
``~/.keras/datasets/`` (Keras 2's and Keras 3's layouts), Debian's ``/usr/share/datasets/cifar100/``
and unison's cache, else downloaded from Keras's URL and checked against Keras's sha256.

Example:
    >>> from unison.keras.datasets import cifar100
    >>> (x_train, y_train), _ = cifar100.load_data(label_mode="coarse")  # doctest: +SKIP
    >>> int(y_train.max())  # doctest: +SKIP
    19
"""

from __future__ import annotations

import numpy as np

from unison.keras.datasets import _cifar, _keras_files

_SPEC = _keras_files.KerasArchive(
    name="cifar100",
    inner="cifar-100-python",
    files=("train", "test"),
    origin="https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz",
    archive="cifar-100-python.tar.gz",
    file_hash="85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7",
    aliases=("cifar-100",),
    keras_dirs=("cifar-100-python-target",),  # Keras 3: get_file("cifar-100-python-target", extract=True)
    keras_archives=("cifar-100-python-target_archive", "cifar-100-python.tar.gz"),  # Keras 3, Keras 2
)
# The "binary version": records of a coarse and a fine label byte + 3072 pixels; read, never downloaded.
_BINARY = _keras_files.KerasArchive(
    name="cifar100",
    inner="cifar-100-binary",
    files=("train.bin", "test.bin"),
    origin="https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz",
    archive="cifar-100-binary.tar.gz",
    file_hash=None,
    aliases=("cifar-100",),
)


def load_data(label_mode: str = "fine") -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Load CIFAR-100 as Keras does.

    Args:
        label_mode: ``"fine"`` (100 classes) or ``"coarse"`` (20 superclasses).

    Returns:
        ``((x_train, y_train), (x_test, y_test))``: uint8 images ``(50000, 32, 32, 3)`` and
        ``(10000, 32, 32, 3)`` (channels last) and int64 labels ``(50000, 1)`` and ``(10000, 1)``.

    Raises:
        ValueError: ``label_mode`` is neither ``"fine"`` nor ``"coarse"``.
        DatasetError: the files are nowhere on this machine and cannot be downloaded, a download does
            not match Keras's sha256, or a batch is corrupt or holds anything but arrays and numbers.

    Example:
        >>> (x_train, y_train), (x_test, y_test) = load_data()  # doctest: +SKIP
        >>> y_train.shape  # doctest: +SKIP
        (50000, 1)
    """
    if label_mode not in ("fine", "coarse"):
        raise ValueError(
            f'cifar100.load_data(label_mode={label_mode!r}): label_mode must be "fine" (100 classes) or '
            '"coarse" (20 superclasses).'
        )
    form, folder = _cifar.find(_SPEC, _BINARY)
    if form is _BINARY:
        index = 0 if label_mode == "coarse" else 1
        x_train, y_train = _cifar.read_binary(folder / "train.bin", 2, index)
        x_test, y_test = _cifar.read_binary(folder / "test.bin", 2, index)
    else:
        key = f"{label_mode}_labels"
        x_train, y_train = _cifar.load_batch(folder / "train", key)
        x_test, y_test = _cifar.load_batch(folder / "test", key)
    # Keras makes the label lists int64 arrays (CIFAR-10's are uint8, filled into a preallocated array)
    return (
        (_cifar.channels_last(x_train), y_train.astype(np.int64).reshape(-1, 1)),
        (_cifar.channels_last(x_test), y_test.astype(np.int64).reshape(-1, 1)),
    )
