"""``tf.fingerprint`` and ``tf.strings.to_hash_bucket``: TF's two byte-exact hashes of data.

``tf.fingerprint`` is FarmHash ``Fingerprint64`` (:mod:`unison.ops.farmhash`) of each row of
``data``, stored as 8 little-endian bytes (uint8 ``[rows, 8]``): a row of numbers is hashed as its
bytes; a row of strings as the fingerprints of its strings, one after another (for a vector of
strings, each string itself). ``tf.strings.to_hash_bucket`` uses TF's older ``Hash64`` (a
MurmurHash2-64A variant with seed ``0xDECAFCAFFE``, from ``tensorflow/core/lib/hash/hash.cc``),
modulo ``num_buckets``. Both give TF's exact values, so buckets and fingerprints agree with TF's.

Example:
    >>> import unison as tf
    >>> tf.strings.to_hash_bucket(["a", "hello world!"], 10).tolist()
    [8, 3]
    >>> tf.fingerprint(tf.constant(["a"])).numpy()[0, :2].tolist()
    [227, 117]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.farmhash import fingerprint64
from unison.ops.strings import _numbers, _strings, _utf8

__all__ = ["fingerprint", "hash64", "to_hash_bucket"]

_M64 = (1 << 64) - 1
_MUL = 0xC6A4A7935BD1E995
_SEED = 0xDECAFCAFFE


def hash64(data: bytes, seed: int = _SEED) -> int:
    """TF's legacy ``Hash64(data, n, seed)`` (``core/lib/hash/hash.cc``) as an unsigned int."""
    n = len(data)
    h = (seed ^ (n * _MUL)) & _M64
    whole = n - n % 8
    for i in range(0, whole, 8):
        k = int.from_bytes(data[i : i + 8], "little")
        k = (k * _MUL) & _M64
        k ^= k >> 47
        k = (k * _MUL) & _M64
        h = ((h ^ k) * _MUL) & _M64
    rest = data[whole:]
    if rest:  # the switch's fall-through: the tail bytes, byte j shifted by 8*j, then one multiply
        for j, byte in enumerate(rest):
            h ^= byte << (8 * j)
        h = (h * _MUL) & _M64
    h ^= h >> 47
    h = (h * _MUL) & _M64
    h ^= h >> 47
    return h


def to_hash_bucket(string_tensor: Any, num_buckets: int, name: str | None = None) -> torch.Tensor:
    """``tf.strings.to_hash_bucket``: TF's legacy ``Hash64`` of each string mod ``num_buckets`` (int64).

    Example:
        >>> to_hash_bucket(["a"], 10).tolist()
        [8]
    """
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, (int, np.integer)) or num_buckets < 1:
        raise ValueError(
            f"tf.strings.to_hash_bucket: num_buckets must be a positive integer. Received: {num_buckets!r}"
        )
    arr = _strings(string_tensor, "to_hash_bucket", "string_tensor")
    n = int(num_buckets)
    return _numbers(lambda v: hash64(_utf8(v)) % n, arr, torch.int64)


def _as_array(data: Any) -> np.ndarray:
    if isinstance(data, torch.Tensor):
        return data.detach().cpu().numpy()
    if isinstance(data, np.ndarray):
        return data
    arr = np.asarray(data)
    if arr.dtype.kind in "US":
        return np.asarray(data, dtype=object)
    if arr.dtype == np.float64:  # Python floats become float32 tensors in TF
        return arr.astype(np.float32)
    if arr.dtype == np.int64 and not isinstance(data, np.ndarray):
        return arr.astype(np.int32)
    return arr


def fingerprint(data: Any, method: str = "farmhash64", name: str | None = None) -> torch.Tensor:
    """``tf.fingerprint``: an 8-byte FarmHash fingerprint of each row of ``data`` (uint8 ``[rows, 8]``).

    Example:
        >>> fingerprint(torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)).shape
        torch.Size([2, 8])
    """
    if method != "farmhash64":
        raise InvalidArgumentError(
            None, None, f"Unsupported fingerprint method is used: {method}. tf.fingerprint supports only 'farmhash64'."
        )
    arr = _as_array(data)
    if arr.ndim < 1:
        raise InvalidArgumentError(
            None, None, f"`data` should have at least one dimension: {list(arr.shape)}. Wrap a scalar as [x]."
        )
    rows = arr.shape[0]
    out = np.empty((rows, 8), dtype=np.uint8)
    if arr.dtype == object:
        flat = [fingerprint64(_utf8(v)) for v in arr.reshape(-1).tolist()]
        if arr.ndim == 1:
            values = flat
        else:  # TF hashes each row's string fingerprints (8 little-endian bytes each) together
            per_row = len(flat) // rows if rows else 0
            values = [
                fingerprint64(b"".join(f.to_bytes(8, "little") for f in flat[r * per_row : (r + 1) * per_row]))
                for r in range(rows)
            ]
    else:
        raw = np.ascontiguousarray(arr).reshape(rows, -1) if rows else arr.reshape(0, 0)
        values = [fingerprint64(raw[r].tobytes()) for r in range(rows)]
    for r, v in enumerate(values):
        out[r] = np.frombuffer(v.to_bytes(8, "little"), dtype=np.uint8)
    return torch.from_numpy(out)
