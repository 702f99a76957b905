"""Reading and validating gzipped IDX files, the format of the MNIST family.

An IDX file is a 4-byte big-endian magic number ``0x0000TTDD`` (``TT`` the element type,
``0x08`` for uint8; ``DD`` the number of dimensions), then one big-endian uint32 per
dimension, then the payload in C order. Files are checked by structure only (gzip stream,
magic number, dimension count, payload length, matching image and label counts), never by
hash: users may point unison at their own, re-encoded copies.

Example:
    >>> import struct
    >>> raw = struct.pack(">II", LABELS_MAGIC, 3) + bytes([7, 2, 1])
    >>> parse_idx(raw, LABELS_MAGIC).tolist()
    [7, 2, 1]
"""

from __future__ import annotations

import gzip
import math
import struct
import zlib
from pathlib import Path

import numpy as np

LABELS_MAGIC = 2049  # 0x00000801: uint8 elements, 1 dimension
IMAGES_MAGIC = 2051  # 0x00000803: uint8 elements, 3 dimensions
_KIND = {LABELS_MAGIC: "labels (idx1)", IMAGES_MAGIC: "images (idx3)"}


class IdxFormatError(ValueError):
    """A file is not a well-formed gzipped IDX file of the expected kind.

    The loader turns it into a ``DatasetError`` that also says where unison looked and how
    to fix it; this type only carries the file and what is wrong with it.

    Attributes:
        path: the offending file.
        problem: what is wrong, as a phrase ("magic number is 2049, expected 2051 ...").
    """

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def parse_idx(raw: bytes, magic: int) -> np.ndarray:
    """Decode an uncompressed uint8 IDX payload, checking its header against ``magic``.

    Args:
        raw: the whole uncompressed file.
        magic: the expected magic number, ``IMAGES_MAGIC`` or ``LABELS_MAGIC``.

    Returns:
        A writable uint8 array shaped by the header's dimensions.

    Raises:
        ValueError: the header or the payload length is wrong (the message says which).

    Example:
        >>> import struct
        >>> parse_idx(struct.pack(">IIII", IMAGES_MAGIC, 1, 2, 2) + bytes(4), IMAGES_MAGIC).shape
        (1, 2, 2)
    """
    ndim = magic & 0xFF
    header_len = 4 + 4 * ndim
    if len(raw) < 4:
        raise ValueError(f"it holds only {len(raw)} bytes, fewer than the 4-byte IDX magic number")
    received = int.from_bytes(raw[:4], "big")
    if received != magic:
        raise ValueError(
            f"its IDX magic number is {received}, expected {magic} for {_KIND.get(magic, 'IDX')} "
            "(is it the right file, or a file of another kind renamed?)"
        )
    if len(raw) < header_len:
        raise ValueError(
            f"its IDX header is cut short: {len(raw)} bytes, expected {header_len} "
            f"(magic number and {ndim} dimension sizes)"
        )
    dims = struct.unpack(f">{ndim}I", raw[4:header_len])
    expected = math.prod(dims)
    payload = len(raw) - header_len
    if payload != expected:
        raise ValueError(
            f"its payload is {payload} bytes, but its header's dimensions {tuple(dims)} "
            f"need {expected} bytes (the file is truncated or padded)"
        )
    # copy() so callers get a writable array, as Keras returns (frombuffer over bytes is read-only).
    return np.frombuffer(raw, dtype=np.uint8, offset=header_len).reshape(dims).copy()


def read_idx_gz(path: Path, magic: int) -> np.ndarray:
    """Read and validate one gzipped IDX file.

    Args:
        path: the ``.gz`` file.
        magic: the expected magic number, ``IMAGES_MAGIC`` or ``LABELS_MAGIC``.

    Returns:
        A writable uint8 array shaped by the file's header.

    Raises:
        IdxFormatError: the file is unreadable, not gzip, truncated or not the IDX kind expected.

    Example:
        >>> from unison.keras.datasets import _fetch, mnist
        >>> folder = _fetch.locate(mnist._SPEC)  # the local MNIST folder
        >>> y = read_idx_gz(folder / "t10k-labels-idx1-ubyte.gz", LABELS_MAGIC)
        >>> y.shape, y.dtype
        ((10000,), dtype('uint8'))
    """
    try:
        with gzip.open(path, "rb") as stream:
            raw = stream.read()
    # EOFError: gzip stream cut short; BadGzipFile (an OSError): not gzip; zlib.error: damaged.
    except (OSError, EOFError, zlib.error) as exc:
        raise IdxFormatError(
            path,
            f"it cannot be read as a gzip file ({type(exc).__name__}: {exc}); "
            "it is probably truncated (an interrupted copy) or not gzip-compressed",
        ) from exc
    try:
        return parse_idx(raw, magic)
    except ValueError as exc:
        raise IdxFormatError(path, str(exc)) from None


def read_split(images_path: Path, labels_path: Path, image_shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Read one split (images and labels) and check that the two files agree.

    Args:
        images_path: the ``*-images-idx3-ubyte.gz`` file.
        labels_path: the ``*-labels-idx1-ubyte.gz`` file.
        image_shape: the (rows, cols) every image must have, (28, 28) for MNIST.

    Returns:
        ``(x, y)``: uint8 arrays shaped ``(N, rows, cols)`` and ``(N,)``.

    Raises:
        IdxFormatError: either file is malformed, the images are not ``image_shape``, or the
            two files hold different numbers of samples.

    Example:
        >>> from unison.keras.datasets import _fetch, mnist
        >>> folder = _fetch.locate(mnist._SPEC)
        >>> x, y = read_split(folder / "t10k-images-idx3-ubyte.gz", folder / "t10k-labels-idx1-ubyte.gz", (28, 28))
        >>> x.shape, y.shape
        ((10000, 28, 28), (10000,))
    """
    x = read_idx_gz(images_path, IMAGES_MAGIC)
    if x.shape[1:] != image_shape:
        raise IdxFormatError(
            images_path,
            f"its images are {x.shape[1]}x{x.shape[2]} pixels, expected {image_shape[0]}x{image_shape[1]}",
        )
    y = read_idx_gz(labels_path, LABELS_MAGIC)
    if len(y) != len(x):
        raise IdxFormatError(
            labels_path,
            f"it holds {len(y)} labels but {images_path.name} holds {len(x)} images; "
            "the two files of a split must come from the same release",
        )
    return x, y
