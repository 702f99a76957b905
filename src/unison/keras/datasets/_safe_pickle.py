"""Reading the pickles inside Keras's data files without running their code.

CIFAR's python batches are pickled dicts, and IMDB's and Reuters' ``.npz`` files hold ragged
sequences as numpy object arrays, which numpy can only store as pickles. ``pickle.load`` would run
any callable a tampered file names (``os.system``...), so these files go through
:class:`RestrictedUnpickler`: the only globals it resolves are numpy's array reconstruction
(``ndarray``, ``_reconstruct``) and ``numpy.dtype`` limited to numeric kinds (plus ``object``
where the caller allows ragged arrays). Dicts, lists, tuples, ints, floats, bytes and str need no
global and come through as pickle builds them; everything else is refused with
:class:`UnsafePickleError`.

Example:
    >>> import io, pickle
    >>> import numpy as np
    >>> blob = pickle.dumps({b"labels": [3, 1], b"data": np.zeros((2, 4), np.uint8)}, protocol=3)
    >>> sorted(load_pickle(io.BytesIO(blob)))
    [b'data', b'labels']
    >>> try:
    ...     load_pickle(io.BytesIO(pickle.dumps(print)))
    ... except UnsafePickleError as exc:
    ...     print(str(exc).split(":")[0])
    refusing to load builtins.print
"""

from __future__ import annotations

import io
import pickle
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import numpy as np

# numpy's own reconstruction function, whatever module numpy 1 or 2 calls it from.
_RECONSTRUCT: Callable[..., np.ndarray] = np.zeros(0).__reduce__()[0]  # type: ignore[assignment]
_RECONSTRUCT_NAMES = {("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct")}
_FROMBUFFER_NAMES = {("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer")}
_NUMERIC_KINDS = frozenset("biufc")

# An npz member declaring more than this many bytes, far above what it stores, is a zip bomb.
_BOMB_FLOOR = 1 << 32
_BOMB_RATIO = 100


class UnsafePickleError(pickle.UnpicklingError):
    """A pickle asked for something outside the allowed set (a callable, a class, an object dtype)."""


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that rebuilds numpy arrays of numeric dtypes and builtin containers, nothing else.

    Args:
        file: the binary stream.
        allow_object: also allow ``dtype('O')`` arrays (IMDB/Reuters' ragged sequences); their
            elements are unpickled by this same restricted unpickler.
        encoding: how to decode Python 2 ``str`` objects; ``"bytes"`` keeps them as bytes (CIFAR).
    """

    def __init__(self, file: IO[bytes], *, allow_object: bool = False, encoding: str = "ASCII") -> None:
        super().__init__(file, encoding=encoding)
        self._allow_object = allow_object

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _RECONSTRUCT_NAMES:
            return _reconstruct
        if (module, name) in _FROMBUFFER_NAMES:  # how pickle protocol 5 stores a numeric array
            return _frombuffer
        if (module, name) == ("numpy", "ndarray"):
            return np.ndarray
        if (module, name) == ("numpy", "dtype"):
            return self._dtype
        raise UnsafePickleError(
            f"refusing to load {module}.{name}: a data set file may only contain numpy arrays, lists, "
            "dicts, numbers and strings, so this one is corrupt or was tampered with"
        )

    def _dtype(self, spec: object, *args: object) -> np.dtype[Any]:
        # Python 2 pickles read with encoding="bytes" spell the type code as bytes (b"u1").
        code = spec.decode("latin1") if isinstance(spec, bytes) else spec
        dtype = np.dtype(code) if isinstance(code, str) else None
        if dtype is None or not (dtype.kind in _NUMERIC_KINDS or (dtype.kind == "O" and self._allow_object)):
            raise UnsafePickleError(
                f"refusing to load a numpy array of dtype {spec!r}: a data set file holds numeric arrays"
                + (" or ragged sequences" if self._allow_object else "")
                + ", so this one is corrupt or was tampered with"
            )
        return np.dtype(code, *args)  # type: ignore[call-overload]


def _reconstruct(cls: object, shape: object, dtype_code: object) -> np.ndarray:
    """numpy's ``_reconstruct``, only for plain ndarrays (its first argument could name any type)."""
    if cls is not np.ndarray:
        raise UnsafePickleError(f"refusing to reconstruct {cls!r}: only numpy.ndarray is allowed")
    return _RECONSTRUCT(cls, shape, dtype_code)


def _frombuffer(buffer: object, dtype: object, shape: object, order: object) -> np.ndarray:
    """numpy's protocol-5 array rebuild, for a numeric dtype (already built by the restricted dtype)."""
    if not isinstance(dtype, np.dtype) or dtype.kind not in _NUMERIC_KINDS:
        raise UnsafePickleError(f"refusing to rebuild an array of dtype {dtype!r} from a buffer")
    if not isinstance(buffer, (bytes, bytearray, pickle.PickleBuffer)) or order not in ("C", "F"):
        raise UnsafePickleError("refusing a malformed protocol-5 array")
    return np.frombuffer(memoryview(buffer), dtype=dtype).reshape(shape, order=order)  # type: ignore[call-overload]


def load_pickle(file: IO[bytes], *, allow_object: bool = False, encoding: str = "bytes") -> Any:
    """Unpickle ``file`` with :class:`RestrictedUnpickler`.

    Raises:
        UnsafePickleError: the pickle names anything outside the allowed set.

    Example:
        >>> import io, pickle
        >>> load_pickle(io.BytesIO(pickle.dumps([1, b"a"])))
        [1, b'a']
    """
    return RestrictedUnpickler(file, allow_object=allow_object, encoding=encoding).load()


def read_npy(stream: IO[bytes], *, allow_object: bool) -> np.ndarray:
    """One ``.npy`` stream: numeric arrays by numpy with pickling off, object arrays restricted."""
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
    elif version in ((2, 0), (3, 0)):  # 3.0 only changes the header's text encoding
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
    else:
        raise ValueError(f"unsupported .npy format version {version}")
    if dtype.kind != "O":
        stream.seek(0)
        return np.lib.format.read_array(stream, allow_pickle=False)
    if not allow_object:
        raise UnsafePickleError(
            "refusing to load an object array: this data set holds numeric arrays only, so this file is "
            "corrupt or was tampered with"
        )
    array = load_pickle(stream, allow_object=True, encoding="ASCII")
    if not isinstance(array, np.ndarray) or array.shape != tuple(shape):
        raise ValueError(f"the pickled object array does not match its header shape {shape}")
    return array


def load_npz(path: Path, *, allow_object: bool = False) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file, by name, without unrestricted unpickling.

    Raises:
        UnsafePickleError: an object array's pickle names anything outside the allowed set, or an
            object array is present while ``allow_object`` is false.
        ValueError, OSError, zipfile.BadZipFile: the file is not a readable ``.npz``.

    Example:
        >>> import os, tempfile
        >>> p = Path(tempfile.mkdtemp()) / "a.npz"
        >>> np.savez(p, x=np.arange(3))
        >>> load_npz(p)["x"].tolist()
        [0, 1, 2]
    """
    arrays: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                continue
            if info.file_size > _BOMB_FLOOR and info.file_size > _BOMB_RATIO * info.compress_size:
                raise ValueError(
                    f"member {info.filename} declares {info.file_size} bytes but stores {info.compress_size}: "
                    "refusing a likely decompression bomb"
                )
            with archive.open(info) as raw:
                buffer = io.BytesIO(raw.read())
            arrays[info.filename[: -len(".npy")]] = read_npy(buffer, allow_object=allow_object)
    return arrays
