"""``keras.datasets.*.load_data`` (and IMDB's and Reuters's word indexes) on unison against Keras 3.15 and
Keras 2 (tf_keras) on TF 2.21, reading the same files from a Keras cache folder.

There is no network here: each test writes small synthetic files in Keras's on-disk formats (``.npz``,
IDX ``.gz``, CIFAR's pickled batches, JSON word indexes) into a temporary ``$KERAS_HOME/datasets`` in the
layouts Keras 3 and Keras 2 leave there. Keras is pointed at that folder (its dataset modules'
``get_file`` gets ``cache_dir=``) and its hash check is replaced, for the test only, by one that
accepts the synthetic files; unison finds the same files through ``$KERAS_HOME``. ``urllib``'s
``urlopen``, through which both download, fails at once, so a missing file can only end in an error.
Everything changed is restored afterwards.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

BOTH = ("keras", "tf_keras")


def _is_unison(tf) -> bool:
    return tf.keras.__name__.startswith("unison")


class _KerasCache:
    """A temporary Keras home both libraries read their data sets from (see the module notes)."""

    def __init__(self, tf, *modules: str) -> None:
        self.tf, self.modules = tf, modules

    def __enter__(self):
        import importlib
        import os
        import tempfile

        self.folder = tempfile.TemporaryDirectory()
        self.home = self.folder.name
        self.datasets = os.path.join(self.home, "datasets")
        os.makedirs(self.datasets)
        self.env = {k: os.environ.get(k) for k in ("KERAS_HOME", "UNISON_DATA_DIR", "UNISON_CACHE_DIR")}
        os.environ.pop("UNISON_DATA_DIR", None)
        os.environ["KERAS_HOME"] = self.home
        os.environ["UNISON_CACHE_DIR"] = os.path.join(self.home, "unison-cache")
        # no network: every download (Keras's urlretrieve and unison's both open through urllib's
        # urlopen) fails at once
        import urllib.error
        import urllib.request

        def offline(url, *args, **kwargs):
            raise urllib.error.URLError(f"no network in this test ({url})")

        self.patched = [(urllib.request, "urlopen", urllib.request.urlopen)]
        urllib.request.urlopen = offline
        if _is_unison(self.tf):
            from pathlib import Path

            # Keras never reads Debian's /usr/share/datasets (this machine may have some): out of the comparison
            fetch = importlib.import_module("unison.keras.datasets._fetch")
            self.patched.append((fetch, "SYSTEM_DATA_DIR", fetch.SYSTEM_DATA_DIR))
            fetch.SYSTEM_DATA_DIR = Path(self.home) / "no-debian-datasets"
        else:
            import functools  # noqa: I001

            package = self.tf.keras.__name__
            utils = importlib.import_module(
                f"{package}.src.utils.file_utils" if package == "keras" else f"{package}.src.utils.data_utils"
            )
            self.patched.append((utils, "validate_file", utils.validate_file))
            utils.validate_file = lambda *a, **k: True  # the synthetic files are not Keras's downloads
            for name in self.modules:
                module = importlib.import_module(f"{package}.src.datasets.{name}")
                self.patched.append((module, "get_file", module.get_file))
                module.get_file = functools.partial(_in_cache, module.get_file, self.home)
        return self

    def __exit__(self, *exc):
        import os

        for owner, name, value in reversed(self.patched):
            setattr(owner, name, value)
        for k, v in self.env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.folder.cleanup()

    # ---- writers of Keras's formats
    def path(self, *parts: str) -> str:
        import os

        out = os.path.join(self.datasets, *parts)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        return out

    def npz(self, name: str, **arrays) -> None:
        np.savez(self.path(name), **arrays)

    def json(self, name: str, value) -> None:
        import json

        with open(self.path(name), "w") as f:
            json.dump(value, f)

    def empty_tar(self, name: str) -> None:
        # Keras 3 extracts its archive on every call: an empty one leaves the folder written beside it
        import tarfile

        with tarfile.open(self.path(name), "w:gz"):
            pass


def _in_cache(get_file, home: str, *args, **kwargs):
    # tf_keras's loaders pass their own cache_dir=None: only a missing one is replaced
    kwargs["cache_dir"] = kwargs.get("cache_dir") or home
    return get_file(*args, **kwargs)


def _rng(seed: int = 0):
    return np.random.default_rng(seed)


def _sequences(n: int, seed: int):
    rng = _rng(seed)
    out = np.empty(n, dtype=object)
    for i in range(n):
        out[i] = [int(v) for v in rng.integers(1, 30, size=int(rng.integers(2, 9)))]
    return out


def _listed(x):
    return [list(map(int, s)) for s in x]


# --------------------------------------------------------------------------------------------
# MNIST (mnist.npz) and Fashion-MNIST (four IDX .gz files in datasets/fashion-mnist)


def _mnist_files(cache: _KerasCache) -> None:
    rng = _rng(1)
    cache.npz(
        "mnist.npz",
        x_train=rng.integers(0, 256, (5, 28, 28), dtype=np.uint8),
        y_train=np.array([3, 1, 4, 1, 5], np.uint8),
        x_test=rng.integers(0, 256, (3, 28, 28), dtype=np.uint8),
        y_test=np.array([9, 2, 6], np.uint8),
    )


def _idx_files(cache: _KerasCache) -> None:
    import gzip
    import struct

    rng = _rng(2)
    for prefix, n in (("train", 4), ("t10k", 2)):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        with gzip.open(cache.path("fashion-mnist", f"{prefix}-images-idx3-ubyte.gz"), "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
        with gzip.open(cache.path("fashion-mnist", f"{prefix}-labels-idx1-ubyte.gz"), "wb") as f:
            f.write(struct.pack(">II", 2049, n) + np.arange(n, dtype=np.uint8).tobytes())


def _digest(split):
    (x, y), (xt, yt) = split
    return x, y, xt, yt


@same_as_tf("keras:datasets.mnist.load_data", "keras:datasets.fashion_mnist.load_data", dialects=BOTH)
def test_mnist_and_fashion_mnist_from_the_keras_cache(tf):
    with _KerasCache(tf, "mnist", "fashion_mnist") as cache:
        _mnist_files(cache)
        _idx_files(cache)
        return _digest(tf.keras.datasets.mnist.load_data()), _digest(tf.keras.datasets.fashion_mnist.load_data())


def _error(call) -> str:
    try:
        call()
    except Exception:  # Keras raises a bare Exception for a failed download, unison DatasetError
        return "error"
    return "loaded"


# --------------------------------------------------------------------------------------------
# CIFAR-10 and CIFAR-100: pickled batches in cifar-10-batches-py/ and cifar-100-python/


def _pickle(path: str, value) -> None:
    import pickle

    with open(path, "wb") as f:
        pickle.dump(value, f, protocol=4)


def _cifar10_files(cache: _KerasCache) -> None:
    import os

    # Keras 3 fills a (50000, 3, 32, 32) array from five batches of 10000: the batches must be full.
    # Cheap rows: a pattern per batch, so writing and reading stay fast
    base = cache.path("cifar-10-batches-py-target", "cifar-10-batches-py", "x")[:-2]
    for i in range(1, 6):
        data = np.broadcast_to((np.arange(3072) * i % 251).astype(np.uint8), (10000, 3072)).copy()
        data[:, 0] = np.arange(10000) % 256
        _pickle(os.path.join(base, f"data_batch_{i}"), {b"data": data, b"labels": [(j * i) % 10 for j in range(10000)]})
    test = np.broadcast_to((np.arange(3072) % 13).astype(np.uint8), (10000, 3072)).copy()
    _pickle(os.path.join(base, "test_batch"), {b"data": test, b"labels": [j % 10 for j in range(10000)]})
    os.symlink(base, os.path.join(cache.datasets, "cifar-10-batches-py"))  # Keras 2's folder
    cache.empty_tar("cifar-10-batches-py-target_archive")  # Keras 3's archive name
    cache.empty_tar("cifar-10-batches-py.tar.gz")  # Keras 2's


def _cifar100_files(cache: _KerasCache) -> None:
    import os

    rng = _rng(3)
    base = cache.path("cifar-100-python-target", "cifar-100-python", "x")[:-2]
    for name, n in (("train", 6), ("test", 4)):
        _pickle(
            os.path.join(base, name),
            {
                b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                b"fine_labels": [int(v) for v in rng.integers(0, 100, n)],
                b"coarse_labels": [int(v) for v in rng.integers(0, 20, n)],
            },
        )
    os.symlink(base, os.path.join(cache.datasets, "cifar-100-python"))
    cache.empty_tar("cifar-100-python-target_archive")
    cache.empty_tar("cifar-100-python.tar.gz")


@same_as_tf("keras:datasets.cifar10.load_data", "keras:datasets.cifar100.load_data", dialects=BOTH)
def test_cifar_from_the_keras_cache(tf):
    with _KerasCache(tf, "cifar10", "cifar100") as cache:
        _cifar10_files(cache)
        _cifar100_files(cache)
        (x, y), (xt, yt) = tf.keras.datasets.cifar10.load_data()
        rows = np.array([0, 1, 9999, 10000, 25123, 49999])
        ten = (x.shape, x.dtype.name, x[rows], y.shape, y.dtype.name, y[rows], xt.shape, xt[[0, 9999]], yt[:12])
        fine = tf.keras.datasets.cifar100.load_data()
        coarse = tf.keras.datasets.cifar100.load_data(label_mode="coarse")
        return ten, _digest(fine), coarse[0][1], coarse[1][1]


# --------------------------------------------------------------------------------------------
# IMDB and Reuters: ragged sequences in an .npz, word indexes in JSON


def _imdb_files(cache: _KerasCache) -> None:
    cache.npz(
        "imdb.npz",
        x_train=_sequences(8, 4),
        y_train=np.array([0, 1, 1, 0, 1, 0, 0, 1]),
        x_test=_sequences(6, 5),
        y_test=np.array([1, 0, 1, 1, 0, 0]),
    )
    cache.json("imdb_word_index.json", {"the": 1, "and": 2, "film": 17, "bad": 29})


def _reuters_files(cache: _KerasCache) -> None:
    cache.npz("reuters.npz", x=_sequences(10, 6), y=np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3]))
    cache.json("reuters_word_index.json", {"the": 1, "of": 2, "said": 5, "oil": 28})


def _sequences_out(result):
    (x, y), (xt, yt) = result
    return _listed(x), np.asarray(y), _listed(xt), np.asarray(yt), x.dtype.name


IMDB_ARGS = (
    {},
    {"num_words": 12, "skip_top": 2, "seed": 7},
    {"maxlen": 5, "start_char": 3, "oov_char": 4, "index_from": 5, "num_words": 20},
    {"start_char": None, "oov_char": None, "num_words": 10},
)
REUTERS_ARGS = (
    {},
    {"test_split": 0.3, "seed": 5, "num_words": 15, "skip_top": 1},
    {"maxlen": 6, "index_from": 1, "start_char": 2, "oov_char": 9, "num_words": 12},
)


@same_as_tf(
    "keras:datasets.imdb.load_data",
    "keras:datasets.imdb.get_word_index",
    "keras:datasets.reuters.load_data",
    "keras:datasets.reuters.get_word_index",
    "keras:datasets.reuters.get_label_names",
    dialects=BOTH,
)
def test_imdb_and_reuters_with_their_options(tf):
    with _KerasCache(tf, "imdb", "reuters") as cache:
        _imdb_files(cache)
        _reuters_files(cache)
        imdb = [_sequences_out(tf.keras.datasets.imdb.load_data(**kw)) for kw in IMDB_ARGS]
        reuters = [_sequences_out(tf.keras.datasets.reuters.load_data(**kw)) for kw in REUTERS_ARGS]
        return (
            imdb,
            reuters,
            tf.keras.datasets.imdb.get_word_index(),
            tf.keras.datasets.reuters.get_word_index(),
            list(tf.keras.datasets.reuters.get_label_names()),
        )


# --------------------------------------------------------------------------------------------
# Boston and California housing: x and y in an .npz, split by test_split after a seeded shuffle


@same_as_tf("keras:datasets.boston_housing.load_data", dialects=BOTH)
def test_boston_housing_splits(tf):
    with _KerasCache(tf, "boston_housing") as cache:
        rng = _rng(7)
        cache.npz("boston_housing.npz", x=rng.normal(size=(11, 13)), y=rng.normal(size=11))
        loaded = [tf.keras.datasets.boston_housing.load_data(**kw) for kw in ({}, {"test_split": 0.5, "seed": 3})]
        return [_digest(split) for split in loaded]


@same_as_tf("keras:datasets.california_housing.load_data")
def test_california_housing_versions_and_splits(tf):
    with _KerasCache(tf, "california_housing") as cache:
        rng = _rng(8)
        cache.npz("california_housing.npz", x=rng.normal(size=(700, 8)), y=rng.normal(size=700))
        load = tf.keras.datasets.california_housing.load_data
        small = load(version="small", test_split=0.25, seed=2)
        return [_digest(split) for split in (load(), small)]


# --------------------------------------------------------------------------------------------
# edges: options at their limits, and files that are not there (no network)


EDGE_NAMES = (
    "keras:datasets.mnist.load_data",
    "keras:datasets.fashion_mnist.load_data",
    "keras:datasets.cifar10.load_data",
    "keras:datasets.cifar100.load_data",
    "keras:datasets.imdb.load_data",
    "keras:datasets.imdb.get_word_index",
    "keras:datasets.reuters.load_data",
    "keras:datasets.reuters.get_word_index",
    "keras:datasets.boston_housing.load_data",
)


@same_as_tf(*EDGE_NAMES, edge=True, dialects=BOTH)
def test_missing_files_without_a_network_are_errors(tf):
    d = tf.keras.datasets
    calls = (
        d.mnist.load_data,
        d.fashion_mnist.load_data,
        d.cifar10.load_data,
        d.cifar100.load_data,
        d.imdb.load_data,
        d.imdb.get_word_index,
        d.reuters.load_data,
        d.reuters.get_word_index,
        d.boston_housing.load_data,
    )
    with _KerasCache(tf, *(c.__module__.rsplit(".", 1)[1] for c in calls)):
        return [_error(c) for c in calls]


@same_as_tf(
    "keras:datasets.imdb.load_data",
    "keras:datasets.reuters.load_data",
    "keras:datasets.reuters.get_label_names",
    "keras:datasets.boston_housing.load_data",
    edge=True,
    dialects=BOTH,
)
def test_sequence_options_at_their_limits(tf):
    with _KerasCache(tf, "imdb", "reuters", "boston_housing") as cache:
        _imdb_files(cache)
        _reuters_files(cache)
        rng = _rng(9)
        cache.npz("boston_housing.npz", x=rng.normal(size=(4, 13)), y=rng.normal(size=4))
        out = []
        # (not start_char=None with index_from=0: tf_keras then adds the train and test object arrays
        # elementwise, a bug Keras 3 fixed and unison does not copy)
        for kw in ({"maxlen": 1}, {"num_words": 1, "skip_top": 5}, {"index_from": 0, "oov_char": None}):
            try:
                out.append(_sequences_out(tf.keras.datasets.imdb.load_data(**kw)))
            except ValueError as exc:
                out.append(type(exc).__name__)
        out.append(_sequences_out(tf.keras.datasets.reuters.load_data(test_split=0.0)))
        out.append(_sequences_out(tf.keras.datasets.reuters.load_data(test_split=1.0)))
        out.append(_digest(tf.keras.datasets.boston_housing.load_data(test_split=0.0)))
        out.append(len(tf.keras.datasets.reuters.get_label_names()))
        return out


@same_as_tf("keras:datasets.california_housing.load_data", edge=True)
def test_california_housing_bad_version_and_missing_file(tf):
    with _KerasCache(tf, "california_housing") as cache:
        missing = _error(tf.keras.datasets.california_housing.load_data)
        rng = _rng(10)
        cache.npz("california_housing.npz", x=rng.normal(size=(620, 8)), y=rng.normal(size=620))
        try:
            tf.keras.datasets.california_housing.load_data(version="medium")
            bad = "accepted"
        except ValueError as exc:
            bad = type(exc).__name__
        return missing, bad, _digest(tf.keras.datasets.california_housing.load_data(version="small", test_split=0.0))


@pytest.mark.parametrize("dataset", ["mnist", "imdb"])
def test_unison_error_says_where_it_looked(dataset):
    """unison's missing-file error names the places it looked and the fix (the edge above only compares
    that both sides fail)."""
    import unison as tf

    with _KerasCache(tf, dataset):
        with pytest.raises(ValueError, match=r"(?s)Looked in.*To fix"):
            getattr(tf.keras.datasets, dataset).load_data()
