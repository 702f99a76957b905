"""``keras.utils.pad_sequences`` and ``keras.utils.normalize`` (numpy in, numpy out, as in Keras).

Example:
    >>> pad_sequences([[1, 2, 3], [4]], maxlen=2).tolist()
    [[2, 3], [0, 4]]
    >>> normalize([[3.0, 4.0]]).tolist()
    [[0.6, 0.8]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch


def _as_array(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def pad_sequences(
    sequences: Sequence[Any],
    maxlen: int | None = None,
    dtype: Any = "int32",
    padding: str = "pre",
    truncating: str = "pre",
    value: Any = 0.0,
) -> np.ndarray:
    """Pad (or cut) a list of sequences to one length: a ``(len(sequences), maxlen, ...)`` numpy array.

    Args:
        sequences: a list of sequences (lists or arrays, items may be vectors of one shape).
        maxlen: the length; default the longest sequence's.
        dtype: the result's dtype (``"int32"`` by default, as in Keras; ``object``/``str`` for strings).
        padding: ``"pre"`` (default) or ``"post"``: where the padding goes.
        truncating: ``"pre"`` (default) or ``"post"``: which end of a long sequence is dropped.
        value: the padding value.

    Example:
        >>> pad_sequences([[1], [2, 3]], padding="post").tolist()
        [[1, 0], [2, 3]]
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError(f"pad_sequences: sequences must be a list of sequences. Received {type(sequences).__name__}.")
    for name, choice in (("padding", padding), ("truncating", truncating)):
        if choice not in ("pre", "post"):
            raise ValueError(f"pad_sequences: {name} must be 'pre' or 'post'. Received: {name}={choice!r}")
    lengths: list[int] = []
    sample_shape: tuple[int, ...] = ()
    found_shape = False
    for i, seq in enumerate(sequences):
        if not hasattr(seq, "__len__"):
            raise ValueError(
                f"pad_sequences: every entry must be a sequence (list or array). Entry {i} is {seq!r:.60}; "
                "wrap single numbers in a list."
            )
        lengths.append(len(seq))
        if not found_shape and len(seq):
            sample_shape = _as_array(seq).shape[1:]
            found_shape = True
    if maxlen is None:
        maxlen = max(lengths) if lengths else 0
    if int(maxlen) < 0:
        raise ValueError(f"pad_sequences: maxlen must be non-negative. Received: maxlen={maxlen!r}")
    maxlen = int(maxlen)
    np_dtype = np.dtype(dtype)
    is_text = np.issubdtype(np_dtype, np.str_) or np.issubdtype(np_dtype, np.object_)
    if isinstance(value, str) and not is_text:
        raise ValueError(
            f"pad_sequences: dtype {dtype!r} cannot hold the padding value {value!r}. "
            "Pass dtype=object for string sequences, or a numeric value."
        )
    out = np.full((len(lengths), maxlen, *sample_shape), value, dtype=np_dtype)
    for i, seq in enumerate(sequences):
        if not len(seq) or not maxlen:
            continue
        arr = _as_array(seq)
        kept = arr[-maxlen:] if truncating == "pre" else arr[:maxlen]
        if kept.shape[1:] != sample_shape:
            raise ValueError(
                f"pad_sequences: entry {i} has items of shape {kept.shape[1:]}, but the first non-empty entry's "
                f"are {sample_shape}. Make every item the same shape."
            )
        if padding == "post":
            out[i, : len(kept)] = kept
        else:
            out[i, maxlen - len(kept) :] = kept
    return out


def normalize(x: Any, axis: int = -1, order: int = 2) -> Any:
    """``keras.utils.normalize(x, axis=-1, order=2)``: ``x`` divided by its ``order``-norm along ``axis``.

    Zero vectors stay zero. A numpy array (or list) gives numpy; a torch tensor gives a tensor
    (``keras.ops.normalize``).
    """
    if isinstance(x, torch.Tensor):
        from unison.keras.ops.nn import normalize as ops_normalize

        return ops_normalize(x, axis=axis, order=order)
    arr = np.asarray(x)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"normalize expects numbers. Received an array of dtype {arr.dtype}.")
    arr = arr.astype(arr.dtype if arr.dtype.kind == "f" else np.float32)
    norms = np.atleast_1d(np.linalg.norm(arr, order, axis))
    norms[norms == 0] = 1
    return arr / np.expand_dims(norms, axis)


__all__ = ["normalize", "pad_sequences"]
