"""The rest of ``tf.strings``: n-grams, segment joins, offsets of decoded characters, transcoding,
and SipHash buckets (``to_hash_bucket_strong``).

Each follows TF 2.21's documented semantics, compared with TensorFlow by
``tests/conformance/test_vs_tf_strings_more.py``.

Example:
    >>> import unison as tf
    >>> tf.strings.ngrams(["a", "b", "c"], 2).tolist()
    [b'a b', b'b c']
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import to_tensor
from unison.ops.ragged import RaggedTensor
from unison.ops.strings import _decode, _pieces, _strings, _utf8

__all__ = [
    "ngrams",
    "to_hash_bucket_strong",
    "unicode_decode_with_offsets",
    "unicode_split_with_offsets",
    "unicode_transcode",
    "unsorted_segment_join",
]


def _row_ngrams(
    row: list[bytes],
    widths: Sequence[int],
    separator: bytes,
    pads: tuple[bytes, bytes] | None,
    padding: int,
    short: bool,
) -> list[bytes]:
    out: list[bytes] = []
    for width in widths:
        pad = builtins.min(padding if padding >= 0 else width - 1, width - 1) if pads is not None else 0
        items = [pads[0]] * pad + row + [pads[1]] * pad if pads is not None else list(row)
        count = len(items) - width + 1
        if count > 0:
            out += [separator.join(items[i : i + width]) for i in range(count)]
        elif short and items and pads is None or (short and pads is not None and row):
            out.append(separator.join(items))
    return out


def ngrams(
    data: Any,
    ngram_width: int | Sequence[int],
    separator: str = " ",
    pad_values: Any = None,
    padding_width: int | None = None,
    preserve_short_sequences: bool = False,
    name: str | None = None,
) -> Any:
    """``tf.strings.ngrams``: the ``ngram_width``-grams of the strings of the last axis, joined by ``separator``.

    A 1-D input gives a 1-D result; a 2-D or ragged input gives a RaggedTensor with one row of
    n-grams per row (a dense 2-D input gives a dense 2-D result). ``pad_values`` (one string, or a (left, right) pair) pads each row with
    ``padding_width`` (default ``width - 1``) values per side first.

    Example:
        >>> ngrams(["a", "b"], 2, pad_values="#").tolist()
        [b'# a', b'a b', b'b #']
    """
    widths = [int(ngram_width)] if isinstance(ngram_width, (int, np.integer)) else [int(w) for w in ngram_width]
    if any(w <= 0 for w in widths):
        raise InvalidArgumentError(
            None, None, f"tf.strings.ngrams: ngram_width must be > 0. Received: {ngram_width!r}."
        )
    pads: tuple[bytes, bytes] | None = None
    if pad_values is not None:
        pair = (pad_values, pad_values) if isinstance(pad_values, (str, bytes)) else tuple(pad_values)
        if len(pair) != 2:
            raise ValueError(
                f"tf.strings.ngrams: pad_values must be a string or a pair of strings. Received: {pad_values!r}."
            )
        pads = (_utf8(pair[0]), _utf8(pair[1]))
    if padding_width is not None and pad_values is None:
        raise ValueError("tf.strings.ngrams: padding_width needs pad_values (the strings to pad with).")
    if padding_width is not None and int(padding_width) <= 0:
        raise ValueError(f"tf.strings.ngrams: padding_width must be > 0. Received: {padding_width}.")
    padding = -1 if padding_width is None else int(padding_width)
    sep = _utf8(separator)

    def grams(row: Sequence[Any]) -> list[bytes]:
        return _row_ngrams([_utf8(v) for v in row], widths, sep, pads, padding, preserve_short_sequences)

    def as_array(items: list[bytes]) -> np.ndarray:
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out

    if isinstance(data, RaggedTensor):
        rows = [list(np.asarray(r, dtype=object).reshape(-1)) for r in data.to_list()]
        result = [grams(r) for r in rows]
        return RaggedTensor.from_row_lengths(as_array([g for r in result for g in r]), [len(r) for r in result])
    arr = np.asarray(_strings(data, "ngrams"))
    if arr.ndim == 1:
        return as_array(grams(arr.tolist()))
    if arr.ndim == 2:  # rows of one length: a dense [rows, n-grams] result, as TF's
        result = [grams(r) for r in arr.tolist()]
        return as_array([g for r in result for g in r]).reshape(len(result), -1 if result and result[0] else 0)
    raise ValueError(f"tf.strings.ngrams takes a 1-D, 2-D or ragged string tensor. Received shape {arr.shape}.")


def unsorted_segment_join(
    inputs: Any, segment_ids: Any, num_segments: Any, separator: str = "", name: str | None = None
) -> np.ndarray:
    """``tf.strings.unsorted_segment_join``: the strings of each segment joined in order (empty segments: ``b""``).

    Example:
        >>> unsorted_segment_join(["a", "b", "c"], [1, 0, 1], 3, "-").tolist()
        [b'b', b'a-c', b'']
    """
    arr = np.asarray(_strings(inputs, "unsorted_segment_join"))
    ids = to_tensor(segment_ids).to(torch.int64)
    n = int(num_segments)
    if tuple(ids.shape) != arr.shape[: ids.dim()]:
        raise InvalidArgumentError(
            None,
            None,
            f"tf.strings.unsorted_segment_join: segment_ids shape {list(ids.shape)} must be a prefix of the "
            f"inputs' shape {list(arr.shape)}.",
        )
    rest = arr.shape[ids.dim() :]
    flat = arr.reshape((-1, *rest))
    out = np.empty((n, *rest), dtype=object)
    pieces: list[list[Any]] = [[] for _ in range(n)]
    for i, segment in enumerate(ids.reshape(-1).tolist()):
        if segment >= n:
            raise InvalidArgumentError(
                None, None, f"tf.strings.unsorted_segment_join: segment_id {segment} is not < num_segments={n}."
            )
        if segment >= 0:  # negative ids are dropped, as in TF
            pieces[segment].append(flat[i])
    sep = _utf8(separator)
    for s in range(n):
        if rest:
            for index in np.ndindex(*rest):
                out[(s,) + index] = sep.join(_utf8(p[index]) for p in pieces[s])
        else:
            out[s] = sep.join(_utf8(p) for p in pieces[s])
    return out


_CODECS = {"utf8": "utf-8", "utf16be": "utf-16-be", "utf32be": "utf-32-be"}


def _codec(encoding: str, fn: str) -> str:
    key = encoding.lower().replace("-", "")
    if key not in _CODECS:
        raise ValueError(f"tf.strings.{fn}: encodings are 'UTF-8', 'UTF-16-BE' or 'UTF-32-BE'. Received: {encoding!r}")
    return _CODECS[key]


def _offsets(text: str, codec: str) -> list[int]:
    starts, at = [], 0
    for char in text:
        starts.append(at)
        at += len(char.encode(codec, errors="surrogatepass"))
    return starts


def unicode_decode_with_offsets(
    input: Any,  # noqa: A002 - TF's name
    input_encoding: str,
    errors: str = "replace",
    replacement_char: int = 65533,
    replace_control_characters: bool = False,
    name: str | None = None,
) -> tuple[Any, Any]:
    """``tf.strings.unicode_decode_with_offsets``: (code points, byte offset where each starts), int32/int64.

    Example:
        >>> chars, starts = unicode_decode_with_offsets("añb", "UTF-8")
        >>> chars.tolist(), starts.tolist()
        ([97, 241, 98], [0, 1, 3])
    """
    codec = _codec(input_encoding, "unicode_decode_with_offsets")
    arr = _strings(input, "unicode_decode_with_offsets")

    def text(v: Any) -> str:
        return _decode(v, input_encoding, errors, replacement_char, "unicode_decode_with_offsets")

    codes = _pieces(arr, lambda v: [ord(c) for c in text(v)], "unicode_decode_with_offsets", numeric=torch.int32)
    starts = _pieces(arr, lambda v: _offsets(text(v), codec), "unicode_decode_with_offsets", numeric=torch.int64)
    return codes, starts


def unicode_split_with_offsets(
    input: Any,  # noqa: A002 - TF's name
    input_encoding: str,
    errors: str = "replace",
    replacement_char: int = 65533,
    name: str | None = None,
) -> tuple[Any, Any]:
    """``tf.strings.unicode_split_with_offsets``: (characters as UTF-8 strings, byte offset where each starts).

    Example:
        >>> chars, starts = unicode_split_with_offsets("añ", "UTF-8")
        >>> chars.tolist(), starts.tolist()
        ([b'a', b'\\xc3\\xb1'], [0, 1])
    """
    codec = _codec(input_encoding, "unicode_split_with_offsets")
    arr = _strings(input, "unicode_split_with_offsets")

    def text(v: Any) -> str:
        return _decode(v, input_encoding, errors, replacement_char, "unicode_split_with_offsets")

    chars = _pieces(arr, lambda v: [c.encode("utf-8") for c in text(v)], "unicode_split_with_offsets")
    starts = _pieces(arr, lambda v: _offsets(text(v), codec), "unicode_split_with_offsets", numeric=torch.int64)
    return chars, starts


def unicode_transcode(
    input: Any,  # noqa: A002 - TF's name
    input_encoding: str,
    output_encoding: str,
    errors: str = "replace",
    replacement_char: int = 65533,
    replace_control_characters: bool = False,
    name: str | None = None,
) -> np.ndarray:
    """``tf.strings.unicode_transcode``: each string re-encoded from ``input_encoding`` to ``output_encoding``.

    Example:
        >>> unicode_transcode(["hé"], "UTF-8", "UTF-16-BE").tolist()
        [b'\\x00h\\x00\\xe9']
    """
    out_codec = _codec(output_encoding, "unicode_transcode")
    _codec(input_encoding, "unicode_transcode")
    arr = np.asarray(_strings(input, "unicode_transcode"))
    out = np.empty(arr.shape, dtype=object)
    for index in np.ndindex(*arr.shape):
        item = arr[index]
        text = _decode(
            item.item() if isinstance(item, np.ndarray) else item,
            input_encoding,
            errors,
            replacement_char,
            "unicode_transcode",
        )
        if replace_control_characters:
            text = "".join(chr(replacement_char) if ord(c) < 32 or 127 <= ord(c) < 160 else c for c in text)
        out[index] = text.encode(out_codec)
    return out


# --- SipHash-2-4 (to_hash_bucket_strong) -----------------------------------------------------------

_MASK = (1 << 64) - 1


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & _MASK


def _siphash24(k0: int, k1: int, data: bytes) -> int:
    v0, v1, v2, v3 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573

    def rounds(v0: int, v1: int, v2: int, v3: int, n: int) -> tuple[int, int, int, int]:
        for _ in range(n):
            v0 = (v0 + v1) & _MASK
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & _MASK
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & _MASK
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & _MASK
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    tail = len(data) % 8
    for i in range(0, len(data) - tail, 8):
        m = int.from_bytes(data[i : i + 8], "little")
        v3 ^= m
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = (len(data) & 0xFF) << 56 | int.from_bytes(data[len(data) - tail :], "little")
    v3 ^= last
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


def to_hash_bucket_strong(input: Any, num_buckets: int, key: Sequence[int], name: str | None = None) -> torch.Tensor:  # noqa: A002
    """``tf.strings.to_hash_bucket_strong``: keyed SipHash-2-4 of each string mod ``num_buckets`` (int64).

    ``key`` is two uint64 integers, SipHash's 128-bit key.

    Example:
        >>> to_hash_bucket_strong(["a"], 10, [1, 2]).dtype
        torch.int64
    """
    if int(num_buckets) <= 0:
        raise InvalidArgumentError(
            None, None, f"to_hash_bucket_strong: num_buckets must be > 0. Received: {num_buckets}."
        )
    if len(key) != 2:
        raise InvalidArgumentError(
            None, None, f"to_hash_bucket_strong: key must be 2 integers. Received: key={list(key)!r}."
        )
    arr = _strings(input, "to_hash_bucket_strong")
    k0, k1 = int(key[0]) & _MASK, int(key[1]) & _MASK
    flat = [_siphash24(k0, k1, _utf8(v)) % int(num_buckets) for v in arr.reshape(-1).tolist()]
    return torch.tensor(flat, dtype=torch.int64).reshape(arr.shape)
