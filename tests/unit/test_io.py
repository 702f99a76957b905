"""The one atomic/verified writer every file in unison goes through."""

from __future__ import annotations

import os

import pytest

from unison.core.atomic_io import VerificationError, atomic_write_text, read_verified, write_verified


def test_verified_round_trip_and_no_temporary_left(tmp_path):
    path = tmp_path / "sub" / "w.bin"
    write_verified(path, b"abc" * 100, kind="t/1")
    assert read_verified(path, kind="t/1") == b"abc" * 100
    assert os.listdir(path.parent) == ["w.bin"]


def test_flipped_byte_is_detected_and_names_the_file(tmp_path):
    path = tmp_path / "w.bin"
    write_verified(path, bytes(range(256)) * 8, kind="t/1")
    data = bytearray(path.read_bytes())
    data[-100] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(VerificationError, match="w.bin.*damaged"):
        read_verified(path, kind="t/1")


@pytest.mark.parametrize("content, cause", [(b"", "empty"), (b"junk", "not a file written by unison")])
def test_empty_or_foreign_file(tmp_path, content, cause):
    path = tmp_path / "w.bin"
    path.write_bytes(content)
    with pytest.raises(VerificationError, match=cause):
        read_verified(path, kind="t/1")


def test_wrong_kind_and_missing_file(tmp_path):
    path = tmp_path / "w.bin"
    write_verified(path, b"x", kind="a/1")
    with pytest.raises(VerificationError, match="'a/1'.*expected a 'b/1'"):
        read_verified(path, kind="b/1")
    with pytest.raises(FileNotFoundError, match="nope.bin"):
        read_verified(tmp_path / "nope.bin", kind="a/1")


def test_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "f.txt"
    atomic_write_text(path, "old")

    class Boom(Exception):
        pass

    from unison.core.atomic_io import atomic_write

    def write(fh):
        fh.write(b"half")
        raise Boom

    with pytest.raises(Boom):
        atomic_write(path, write)
    assert path.read_text() == "old"
    assert os.listdir(tmp_path) == ["f.txt"]
