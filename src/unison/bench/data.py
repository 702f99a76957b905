"""The data every system of one ``unison bench`` run trains on: loaded once, written once.

The command loads the data set in its own process (so a missing data set is one clear error
before anything starts), keeps ``--samples`` of it, and writes the uint8 arrays to one ``.npz``
file that every child (unison, DDP, TensorFlow) reads: all systems see the very same rows.

``synthetic`` is MNIST-shaped (28x28 uint8 images, 10 classes, 60,000 + 10,000) and made in
memory from a fixed seed, so the command runs anywhere: each class has its own mean image
(a few Gaussian blobs), and every example is that mean, randomly scaled and shifted by up to
two pixels, plus noise. A model learns it, so the final accuracy means something, and it is
not trivially separable (an MLP reaches about 90% after one epoch).

Example:
    >>> (x, y), (xt, yt) = synthetic(1000, 200)
    >>> x.shape, x.dtype, sorted(set(y.tolist())) == list(range(10))
    ((1000, 28, 28), dtype('uint8'), True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

DATASETS = ("mnist", "fashion_mnist", "synthetic")
SYNTHETIC_SEED = 20240601
_TRAIN, _TEST = 60000, 10000

Split = tuple[np.ndarray, np.ndarray]


def _class_means(rng: np.random.Generator, num_classes: int = 10) -> np.ndarray:
    yy, xx = np.mgrid[0:28, 0:28].astype(np.float32)
    means = np.zeros((num_classes, 28, 28), np.float32)
    for c in range(num_classes):
        for _ in range(3):
            cy, cx = rng.uniform(6, 22, size=2)
            sigma = rng.uniform(2.0, 4.5)
            means[c] += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * sigma**2))
    return 255.0 * means / means.max(axis=(1, 2), keepdims=True)


def _examples(rng: np.random.Generator, means: np.ndarray, n: int) -> Split:
    # Every (class, shift) mean image once, then one gather per example: fast for 70,000 rows.
    shifted = np.stack([np.roll(means, (dy, dx), axis=(1, 2)) for dy in range(-2, 3) for dx in range(-2, 3)], 1)
    shifted = shifted.reshape(-1, 28, 28)  # index: class * 25 + shift
    y = rng.integers(0, len(means), size=n).astype(np.uint8)
    pick = y.astype(np.int64) * 25 + rng.integers(0, 25, size=n)
    scale = rng.uniform(0.6, 1.2, size=(n, 1, 1)).astype(np.float32)
    x = np.empty((n, 28, 28), np.uint8)
    for a in range(0, n, 4096):  # chunks that stay in cache
        b = min(a + 4096, n)
        chunk = shifted[pick[a:b]] * scale[a:b]
        chunk += rng.standard_normal(size=chunk.shape, dtype=np.float32) * np.float32(70.0)
        x[a:b] = np.clip(chunk, 0, 255)
    return x, y


def synthetic(train: int = _TRAIN, test: int = _TEST, seed: int = SYNTHETIC_SEED) -> tuple[Split, Split]:
    """MNIST-shaped, learnable data from a fixed seed: ``((x, y), (x_test, y_test))``, uint8."""
    rng = np.random.default_rng(seed)
    means = _class_means(rng)
    return _examples(rng, means, train), _examples(rng, means, test)


def load(name: str, samples: int | None = None) -> tuple[tuple[Split, Split], dict[str, Any]]:
    """Load data set ``name`` and keep the first ``samples`` training rows.

    The validation set is cut in proportion (MNIST's 6:1, at most the whole test set).

    Returns:
        ``((x_train, y_train), (x_test, y_test))`` and a description for the results.

    Raises:
        ValueError: unknown name. ``unison.errors.DatasetError`` (a ``ValueError``) when
            the files are not there; its message says where unison looked and what to do.
    """
    if name not in DATASETS:
        raise ValueError(f"Unknown dataset {name!r}. Choose one of {', '.join(DATASETS)}. Received: dataset={name!r}")
    if name == "synthetic":
        n_train = _TRAIN if samples is None else samples
        (x, y), (xt, yt) = synthetic(n_train, _val_rows(n_train, _TEST))
    else:
        from unison.keras.datasets import fashion_mnist, mnist

        (x, y), (xt, yt) = (mnist if name == "mnist" else fashion_mnist).load_data()
        if samples is not None:
            x, y = x[:samples], y[:samples]
            xt, yt = xt[: _val_rows(len(x), len(xt))], yt[: _val_rows(len(x), len(yt))]
    info = {
        "dataset": name,
        "train_samples": len(x),
        "val_samples": len(xt),
        "image_shape": list(x.shape[1:]),
        "classes": int(max(y.max(), yt.max())) + 1,
    }
    return ((x, y), (xt, yt)), info


def _val_rows(train_rows: int, available: int) -> int:
    return max(1, min(available, train_rows // 6))


def save(path: str, data: tuple[Split, Split]) -> None:
    """Write the four arrays to ``path`` (``.npz``, uncompressed: loading stays fast)."""
    (x, y), (xt, yt) = data
    np.savez(path, x_train=x, y_train=y, x_test=xt, y_test=yt)


def read(path: str, shape: tuple[int, ...]) -> tuple[Split, Split]:
    """Read what :func:`save` wrote: float32 images in [0, 1] of ``shape`` per example, int64 labels."""
    with np.load(path) as f:

        def images(a: np.ndarray) -> np.ndarray:
            return a.reshape(len(a), *shape).astype(np.float32) / 255.0

        return (
            (images(f["x_train"]), f["y_train"].astype(np.int64)),
            (images(f["x_test"]), f["y_test"].astype(np.int64)),
        )
