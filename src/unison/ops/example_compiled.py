"""The compiled ``tf.train.Example`` reader (``_wirescan.c``), with the pure-Python reader as its fallback.

``setup.py`` builds ``unison.ops._wirescan`` when unison is installed (``pip install -e .``); it is the
C twin of :func:`unison.ops.example_wire.scan_columns`: the same walk over each record's bytes, the
same columns, the same two signals (:class:`~unison.ops.example_wire._Unusual` for an encoding left
to the protobuf runtime, :class:`~unison.ops.example_wire._WrongKind` for a list of another type).
It walks a batch with the GIL released, so a pipeline's reader and other parse threads run
meanwhile, and costs a fraction of the Python walk per record (see BENCHMARKS.md).

Without a C compiler at install time the module is missing; :func:`available` then warns once
(:class:`CompiledParserMissing`) and ``tf.io.parse_example`` takes the Python reader, which gives
the same results, several times slower. ``UNISON_PURE_PYTHON_PARSE=1`` chooses the Python reader on
purpose (the tests compare the two).

Example:
    >>> import unison as tf
    >>> data = tf.train.Example(features=tf.train.Features(feature={"x": tf.train.Feature(
    ...     int64_list=tf.train.Int64List(value=[1, 300]))})).SerializeToString()
    >>> if available():
    ...     [(values, counts)] = columns([data, data], (b"x",), (3,))
    ...     print(values.tolist(), counts.tolist())
    ... else:
    ...     print([1, 300, 1, 300], [2, 2])
    [1, 300, 1, 300] [2, 2]
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from unison.ops.example_wire import BYTES, FLOAT, _Unusual, _WrongKind

try:
    from unison.ops import _wirescan  # type: ignore[attr-defined]
except ImportError:  # built without a C compiler: the Python reader (warned once, on first use)
    _wirescan = None

_NUMBERS: dict[int, np.dtype[Any]] = {FLOAT: np.dtype("<f4"), 3: np.dtype("<i8")}
ONE_RECORD_KEYS = 32  # scan_one's limit (a fixed array in C); a larger spec takes the Python one-record path
BATCH_KEYS = 4096  # scan_columns's limit (MAX_KEYS in C); a larger spec takes the Python reader
# read once: the parse path checks this per record (the tests switch it to compare the two readers)
use = _wirescan is not None and os.environ.get("UNISON_PURE_PYTHON_PARSE", "") in ("", "0")
_warned = False


class CompiledParserMissing(RuntimeWarning):
    """unison was installed without its compiled Example reader; records are parsed in Python."""


def available() -> bool:
    """Whether the compiled reader is used (warns once when it is missing and not turned off on purpose)."""
    global _warned
    if use:
        return True
    if _wirescan is None and not _warned:
        _warned = True
        warnings.warn(
            "unison.ops._wirescan (the compiled tf.train.Example reader) is not built, so tf.io.parse_example "
            "and parse_single_example read records in Python, several times slower (same results). It is built "
            "when unison is installed with a C compiler present: install one (e.g. apt-get install gcc) and "
            "run `pip install -e .` again.",
            CompiledParserMissing,
            stacklevel=3,
        )
    return False


def _raise(signal: tuple[Any, ...]) -> None:
    if signal[0] == "wrong":
        raise _WrongKind(signal[1], signal[2], signal[3])
    raise _Unusual(signal[1])


def columns(records: list[bytes], keys: tuple[bytes, ...], kinds: tuple[int, ...]) -> list[Any]:
    """``scan_columns(records, ...)`` in C: per key, ``(values, counts)`` (counts ``-1`` where missing).

    Numbers come as writable float32/int64 numpy arrays, bytes values as a list of ``bytes``.

    Raises:
        _WrongKind: a record's list of a key is of another type than ``kinds`` says.
        _Unusual: an encoding the byte reader leaves to the protobuf runtime.
    """
    out = _wirescan.scan_columns(records, keys, kinds)
    if type(out) is tuple:
        _raise(out)
    result = []
    for (values, counts), kind in zip(out, kinds):
        found = np.frombuffer(counts, dtype=np.int64)
        result.append((values if kind == BYTES else np.frombuffer(values, dtype=_NUMBERS[kind]), found))
    return result


def record_lists(
    record: bytes, keys: tuple[bytes, ...], kinds: tuple[int, ...], sparse: tuple[bool, ...]
) -> list[Any] | None:
    """One record's value list per key, or None when a key is missing, has no list or a list of another
    type (the batch path raises or fills those as TF does).

    Each entry is a bytearray of little-endian numbers or a list of ``bytes``; for a key marked in
    ``sparse`` it is ``(values, indices, dense_shape)``, the last two int64 bytearrays of a
    ``VarLenFeature``'s ``[n, 1]`` indices and ``[n]`` shape, ready for ``torch.frombuffer``.

    Raises:
        _Unusual: an encoding the byte reader leaves to the protobuf runtime.
    """
    lists = _wirescan.scan_one(record, keys, kinds, sparse)
    if type(lists) is tuple:
        _raise(lists)
    return lists


__all__ = ["BATCH_KEYS", "ONE_RECORD_KEYS", "CompiledParserMissing", "available", "columns", "record_lists", "use"]
