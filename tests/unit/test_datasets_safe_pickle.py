"""The restricted unpickler: numeric arrays and builtin containers load, anything callable is refused."""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from unison.keras.datasets._safe_pickle import UnsafePickleError, load_npz, load_pickle


class _Runs:
    def __init__(self, target: Any, *args: Any) -> None:
        self.target, self.args = target, args

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.target, self.args)


def test_numeric_arrays_and_containers_round_trip() -> None:
    value = {b"data": np.arange(12, dtype=np.int16).reshape(3, 4), b"labels": [1, 2], "name": "x", "f": 1.5}
    # (Python 3's protocol 2 spells bytes as a call to _codecs.encode: refused like any other call.)
    for protocol in (3, 4, 5):
        out = load_pickle(io.BytesIO(pickle.dumps(value, protocol=protocol)))
        assert out[b"data"].tolist() == value[b"data"].tolist() and out[b"data"].dtype == np.int16
        assert out[b"labels"] == [1, 2] and out["name"] == "x" and out["f"] == 1.5


@pytest.mark.parametrize(
    "payload",
    [
        _Runs(__import__("os").system, "echo pwned"),
        _Runs(eval, "1+1"),
        _Runs(__import__("subprocess").Popen, ["true"]),
        _Runs(getattr, [], "append"),
    ],
)
def test_callables_are_refused(payload: Any) -> None:
    with pytest.raises(UnsafePickleError, match="refusing to load"):
        load_pickle(io.BytesIO(pickle.dumps(payload, protocol=4)))


def test_object_dtype_only_when_allowed() -> None:
    ragged = np.empty(2, dtype=object)
    ragged[:] = [[1, 2], [3]]
    blob = pickle.dumps(ragged, protocol=3)
    with pytest.raises(UnsafePickleError, match="dtype"):
        load_pickle(io.BytesIO(blob))
    assert [list(x) for x in load_pickle(io.BytesIO(blob), allow_object=True)] == [[1, 2], [3]]
    # An allowed object array still cannot smuggle a callable in as an element.
    evil = np.empty(1, dtype=object)
    evil[0] = _Runs(print, "x")
    with pytest.raises(UnsafePickleError, match="builtins.print"):
        load_pickle(io.BytesIO(pickle.dumps(evil, protocol=3)), allow_object=True)


def test_reconstruct_only_builds_ndarray() -> None:
    # A hand-written pickle: numpy.core.multiarray._reconstruct(numpy.dtype, ...) must be refused.
    blob = b"\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\ndtype\nK\x00\x85U\x01b\x87R."
    with pytest.raises(UnsafePickleError, match="only numpy.ndarray"):
        load_pickle(io.BytesIO(blob))


def test_load_npz(tmp_path: Path) -> None:
    ragged = np.empty(2, dtype=object)
    ragged[:] = [[1], [2, 3]]
    np.savez(tmp_path / "a.npz", x=ragged, y=np.array([0.5, 1.5]))
    with pytest.raises(UnsafePickleError, match="object array"):
        load_npz(tmp_path / "a.npz")
    arrays = load_npz(tmp_path / "a.npz", allow_object=True)
    assert arrays["y"].tolist() == [0.5, 1.5] and [list(v) for v in arrays["x"]] == [[1], [2, 3]]
