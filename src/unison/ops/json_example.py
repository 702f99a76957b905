"""``tf.io.decode_json_example``: ``tf.train.Example`` protos written as JSON, to their binary form.

The JSON is the protobuf JSON mapping of ``tensorflow.Example`` (``{"features": {"feature": {"x":
{"floatList": {"value": [1.5]}}}}}``; field names camelCase or as in the .proto, bytes values in
base64, int64 values as numbers or strings). TF converts it with protobuf's streaming JSON-to-binary
writer, whose bytes differ from a parsed message's serialization: fields come in the JSON's order,
map entries in the JSON's order, and repeated numbers unpacked (one tag per value). This module
writes the same bytes, so the output equals TF's byte for byte.

Example:
    >>> import unison as tf
    >>> out = tf.io.decode_json_example('{"features": {"feature": {"a": {"int64List": {"value": [3]}}}}}')
    >>> tf.train.Example.FromString(out.item()).features.feature["a"].int64_list.value[:]
    [3]
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import struct
from typing import Any

import numpy as np

from unison.errors import InvalidArgumentError
from unison.ops.string_tensor import as_string_tensor

__all__ = ["decode_json_example"]


def _bad(what: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        None, None, f"Error while parsing JSON: {what}. Each string must be a tf.train.Example in protobuf JSON form."
    )


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 values take ten bytes, as two's complement
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _len_field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


class _Obj(list[Any]):
    """A JSON object as its (key, value) pairs in the text's order."""


def _object(value: Any, where: str) -> list[tuple[str, Any]]:
    if not isinstance(value, _Obj):
        raise _bad(f"{where}: expected an object, got {json.dumps(_plain(value))}")
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, _Obj):
        return {k: _plain(v) for k, v in value}
    return value


def _float(value: Any) -> float:
    if isinstance(value, bool) or value is None:
        raise _bad(f"expected a number, got {value!r}")
    if isinstance(value, str):
        special = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
        if value in special:
            return special[value]
        try:
            return float(value)
        except ValueError:
            raise _bad(f"expected a number, got {value!r}") from None
    return float(value)


def _int64(value: Any) -> int:
    if isinstance(value, bool) or value is None:
        raise _bad(f"expected an int64, got {value!r}")
    try:
        number = int(value) if isinstance(value, str) else value
    except ValueError:
        raise _bad(f"expected an int64, got {value!r}") from None
    if isinstance(number, float):
        if not number.is_integer():
            raise _bad(f"expected an int64, got {value!r}")
        number = int(number)
    if not -(1 << 63) <= number < 1 << 63:
        raise _bad(f"int64 out of range: {value!r}")
    return int(number)


_LISTS = {"bytesList": 1, "bytes_list": 1, "floatList": 2, "float_list": 2, "int64List": 3, "int64_list": 3}


def _value_list(kind: int, value: Any, where: str) -> bytes:
    out = bytearray()
    for key, items in _object(value, where):
        if key != "value":
            raise _bad(f"{where}: unknown field {key!r}")
        if items is None:
            continue
        if not isinstance(items, list) or isinstance(items, _Obj):
            raise _bad(f"{where}.value: expected an array")
        for item in items:
            if kind == 1:
                if not isinstance(item, str):
                    raise _bad(f"{where}.value: expected base64 strings, got {item!r}")
                try:
                    raw = base64.b64decode(
                        item + "=" * (-len(item) % 4), altchars=b"-_" if "-" in item or "_" in item else None
                    )
                except (binascii.Error, ValueError):
                    raise _bad(f"{where}.value: invalid base64 {item!r}") from None
                out += _len_field(1, raw)
            elif kind == 2:
                out += b"\x0d" + struct.pack("<f", _float(item))
            else:
                out += b"\x08" + _varint(_int64(item))
    return bytes(out)


def _feature(value: Any, where: str) -> bytes:
    out = bytearray()
    for key, inner in _object(value, where):
        if key not in _LISTS:
            raise _bad(f"{where}: unknown field {key!r}")
        if inner is not None:
            out += _len_field(_LISTS[key], _value_list(_LISTS[key], inner, f"{where}.{key}"))
    return bytes(out)


def _features(value: Any) -> bytes:
    out = bytearray()
    for key, features in _object(value, "features"):
        if key != "feature":
            raise _bad(f"features: unknown field {key!r}")
        if features is None:
            continue
        for name, feature in _object(features, "features.feature"):
            entry = _len_field(1, name.encode("utf-8")) + _len_field(2, _feature(feature, f"feature[{name!r}]"))
            out += _len_field(1, entry)
    return bytes(out)


def _example(text: str | bytes) -> bytes:
    try:
        parsed = json.loads(text, object_pairs_hook=_Obj)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _bad(f"invalid JSON: {exc}") from None
    out = bytearray()
    for key, value in _object(parsed, "Example"):
        if key != "features":
            raise _bad(f"Example: unknown field {key!r}")
        if value is not None:
            out += _len_field(1, _features(value))
    return bytes(out)


def decode_json_example(json_examples: Any, name: str | None = None) -> Any:
    """``tf.io.decode_json_example``: each JSON string as the bytes of the ``Example`` it writes.

    Example:
        >>> decode_json_example(['{"features": {}}']).tolist()
        [b'\\n\\x00']
    """
    if isinstance(json_examples, (str, bytes)):
        arr = np.empty((), dtype=object)
        arr[()] = json_examples
    else:
        arr = np.asarray(json_examples.numpy() if hasattr(json_examples, "numpy") else json_examples, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    flat_out = out.reshape(-1)
    for i, text in enumerate(arr.reshape(-1).tolist()):
        if not isinstance(text, (str, bytes)):
            raise TypeError(f"tf.io.decode_json_example takes strings of JSON. Received element {text!r}.")
        flat_out[i] = _example(text)
    return as_string_tensor(out)
