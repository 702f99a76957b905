"""tf.compat's text and path helpers (keras.io's cats-vs-dogs example filters files with as_bytes)."""

from __future__ import annotations

import pathlib

import pytest

import unison as tf


def test_text_and_bytes_convert_as_tf_does():
    assert tf.compat.as_bytes("JFIF") == b"JFIF" and tf.compat.as_bytes(bytearray(b"ab")) == b"ab"
    assert tf.compat.as_bytes("é", encoding="latin-1") == b"\xe9"
    assert tf.compat.as_str(b"caf\xc3\xa9") == "café" == tf.compat.as_text("café")
    assert tf.compat.as_str_any(3) == "3" and tf.compat.as_str_any(b"x") == "x"
    assert tf.compat.path_to_str(pathlib.Path("/tmp/a")) == "/tmp/a" and tf.compat.path_to_str(3) == 3


def test_wrong_types_and_v1_are_refused_with_the_reason():
    with pytest.raises(TypeError, match="Expected binary or unicode string, got 3"):
        tf.compat.as_bytes(3)
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_str(None)
    with pytest.raises(AttributeError, match=r"does not implement tf.compat.v1.*no graphs or sessions"):
        tf.compat.v1  # noqa: B018
