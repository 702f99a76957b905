"""The differential conformance harness: one test body, run on unison and on TensorFlow 2.21.

A conformance test is a function of the module ``tf`` that returns what it computed (a tensor, a
Python or NumPy value, or a nested tuple/list/dict of them) or raises. ``@same_as_tf`` turns it
into a pytest test that runs the body with ``tf = unison`` in the test process and, when TensorFlow
is importable, with ``tf = tensorflow`` in a separate oracle process, then compares values (with a
tolerance per dtype), dtypes and shapes, or, when TensorFlow raises, the error class (CuPy's
``numpy_cupy_allclose`` pattern)::

    @same_as_tf("linalg.det")
    def test_det(tf):
        return tf.linalg.det(tf.constant([[1.0, 2.0], [3.0, 4.0]]))

    @same_as_tf("linalg.det", edge=True)
    def test_det_of_an_empty_batch(tf):
        return tf.linalg.det(tf.zeros([0, 3, 3]))

Rules for a test module (it is also loaded in the TensorFlow process, which never imports unison):
import only ``numpy``, ``pytest`` and this module at module level, and touch ``tf`` only through
the test's argument. Parameters come from ``@pytest.mark.parametrize`` above the decorator and must
be picklable.

The decorator's arguments are data for the coverage report (``tests/conformance/api_coverage.py`` reads
them from the source, without running anything): ``names`` are the public names the test checks
(``"linalg.det"``, written without ``tf.``; ``"keras:layers.Dense"`` for Keras 3 and
``"tf_keras:layers.Dense"`` for Keras 2); ``edge=True`` marks the edge case (empty, broadcasting,
dtype promotion, NaN, a bad argument) a name needs besides its ordinary test; ``differs`` is the
reason for a difference kept on purpose, listed in the report.

Keras 2: ``dialects=("keras", "tf_keras")`` runs the test once per dialect (a ``dialect`` parameter
the body may take too). In the ``"tf_keras"`` run the TensorFlow side's ``tf.keras`` is the
``tf_keras`` package (Keras 2.21, what ``TF_USE_LEGACY_KERAS=1`` gives), in the ``"keras"`` run (and
in every test without ``dialects``) the ``keras`` package (Keras 3.15); unison has one
``keras`` serving both dialects, so its side is the same. A ``"keras:<name>"`` of such a test
counts for ``"tf_keras:<name>"`` too in the report.

Why a separate process for TensorFlow: TF starts thread pools and reads its own OpenMP settings
at import; the replica tests of the same pytest run fork processes afterwards, which must not
inherit them. The oracle is one long-lived process per pytest session, started on first use.
"""

from __future__ import annotations

import atexit
import importlib.util
import inspect
import multiprocessing
import multiprocessing.connection
import os
import re
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["same_as_tf", "oracle_available", "to_portable", "compare", "unison_once"]

# Relative and absolute tolerances per dtype name; exact where absent (ints, bools, strings).
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-2, 1e-2),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-13),
    "complex64": (1e-5, 1e-6),
    "complex128": (1e-12, 1e-13),
}
_ORACLE_TIMEOUT_S = 180.0


# --------------------------------------------------------------------------------------------
# portable values: what both sides' results become before they are compared


class Portable:
    """A result made comparable across processes: an array with its dtype name, or an error."""

    __slots__ = ("kind", "array", "dtype", "text")

    def __init__(self, kind: str, array: Any = None, dtype: str = "", text: str = "") -> None:
        self.kind = kind  # "array", "scalar", "none", "error", "other"
        self.array = array
        self.dtype = dtype
        self.text = text

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.kind, self.array, self.dtype, self.text)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.kind, self.array, self.dtype, self.text = state

    def __repr__(self) -> str:
        if self.kind == "error":
            return f"<raised {self.dtype}: {self.text}>"
        if self.kind == "array":
            return f"<{self.dtype} array shape={tuple(self.array.shape)}: {self.array!r}>"
        return f"<{self.kind} {self.dtype}: {self.array!r}>"


def _dtype_name(dtype: Any) -> str:
    """TF's dtype name for a TF DType, a torch dtype, unison's ``tf.string`` or a NumPy dtype."""
    name = getattr(dtype, "name", None)
    if isinstance(name, str) and not isinstance(dtype, np.dtype):
        return name  # tf.DType and unison's StringDType ("string")
    text = str(dtype)
    if text.startswith("torch."):
        text = text[len("torch.") :]
        return {"bool": "bool", "complex64": "complex64", "cfloat": "complex64"}.get(text, text)
    np_dtype = np.dtype(dtype)
    if np_dtype.kind in "OSU":
        return "string"
    return np_dtype.name


def _string_array(values: Any) -> np.ndarray:
    arr = np.asarray(values, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for index, item in np.ndenumerate(arr):
        out[index] = item.encode() if isinstance(item, str) else bytes(item)
    return out


def to_portable(value: Any) -> Any:
    """Nested tuples/lists/dicts of ``Portable``: tensors of either framework become NumPy arrays."""
    if value is None:
        return Portable("none")
    if isinstance(value, Mapping):
        return {str(k): to_portable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(to_portable(v) for v in value) if isinstance(value, list) else tuple(map(to_portable, value))
    if hasattr(value, "_fields"):  # namedtuple: compare field by field
        return {f: to_portable(getattr(value, f)) for f in value._fields}
    if isinstance(value, (bool, int, float, complex, str, bytes)):
        return Portable("scalar", value.encode() if isinstance(value, str) else value, type(value).__name__)
    composite = _composite(value)
    if composite is not None:
        return composite
    if hasattr(value, "numpy") and hasattr(value, "dtype"):
        dtype = _dtype_name(value.dtype)
        try:
            array = value.numpy()
        except TypeError:  # torch's bfloat16 has no NumPy dtype: compare its values as float32
            array = value.float().numpy()
        if dtype == "string":
            array = _string_array(array)
        return Portable("array", np.asarray(array), dtype)
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        dtype = _dtype_name(value.dtype)
        array = _string_array(value) if dtype == "string" else np.asarray(value)
        return Portable("array", array, dtype)
    if hasattr(value, "as_list") and hasattr(value, "rank"):  # TensorShape
        return Portable("scalar", tuple(value.as_list()) if value.rank is not None else None, "TensorShape")
    return Portable("other", repr(value), type(value).__name__)


def _composite(value: Any) -> Any:
    """SparseTensor and RaggedTensor as their components (both frameworks spell them alike)."""
    cls = type(value).__name__
    if cls in ("SparseTensor", "SparseTensorValue") and hasattr(value, "indices"):
        return {
            "indices": to_portable(value.indices),
            "values": to_portable(value.values),
            "dense_shape": to_portable(value.dense_shape),
        }
    if cls in ("RaggedTensor", "RaggedTensorValue") and hasattr(value, "to_list"):
        return {
            "ragged": Portable("scalar", repr(value.to_list()), "ragged"),
            "flat_values": to_portable(value.flat_values),
        }
    return None


def _error(exc: BaseException) -> Portable:
    # the class names up the hierarchy: unison may raise a subclass of TF's class (EndOfSequenceError
    # is an OutOfRangeError), which `except tf.errors.OutOfRangeError` catches as TF's would
    bases = [cls.__name__ for cls in type(exc).__mro__]
    return Portable("error", bases, type(exc).__name__, f"{exc}".splitlines()[0] if str(exc) else "")


# --------------------------------------------------------------------------------------------
# comparison


def compare(ours: Any, theirs: Any, *, rtol: float | None, atol: float | None, check_dtype: bool, values: bool) -> None:
    """Raise AssertionError naming the first difference between unison's and TF's results."""
    _compare(ours, theirs, "result", rtol, atol, check_dtype, values)


def _compare(ours: Any, theirs: Any, where: str, rtol, atol, check_dtype: bool, values: bool) -> None:  # noqa: ANN001
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), f"{where}: TF gives a structure {sorted(theirs)}, unison {ours!r}"
        assert sorted(ours) == sorted(theirs), f"{where}: keys {sorted(ours)} != TF's {sorted(theirs)}"
        for key in theirs:
            _compare(ours[key], theirs[key], f"{where}[{key!r}]", rtol, atol, check_dtype, values)
        return
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"{where}: TF gives a sequence of {len(theirs)}, unison {ours!r}"
        assert len(ours) == len(theirs), f"{where}: {len(ours)} items, TF has {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _compare(a, b, f"{where}[{i}]", rtol, atol, check_dtype, values)
        return
    assert isinstance(ours, Portable) and isinstance(theirs, Portable), f"{where}: {ours!r} vs TF's {theirs!r}"
    if theirs.kind == "error" or ours.kind == "error":
        assert ours.kind == "error", f"{where}: TF raises {theirs.dtype} ({theirs.text}); unison returned {ours!r}"
        assert theirs.kind == "error", f"{where}: unison raises {ours.dtype} ({ours.text}); TF returned {theirs!r}"
        assert ours.dtype == theirs.dtype or theirs.dtype in (ours.array or ()), (
            f"{where}: unison raises {ours.dtype} ({ours.text}); TF raises {theirs.dtype} ({theirs.text})"
        )
        return
    if theirs.kind == "none" or ours.kind == "none":
        assert ours.kind == theirs.kind, f"{where}: {ours!r} vs TF's {theirs!r}"
        return
    if theirs.kind in ("scalar", "other") and ours.kind in ("scalar", "other"):
        if isinstance(theirs.array, float) and isinstance(ours.array, (int, float)):
            _close(np.asarray(ours.array), np.asarray(theirs.array), "float64", where, rtol, atol)
        elif values:
            assert ours.array == theirs.array, f"{where}: {ours.array!r} != TF's {theirs.array!r}"
        return
    # arrays (a 0-d array on one side may be a Python scalar on the other)
    a, b = np.asarray(ours.array), np.asarray(theirs.array)
    if check_dtype and ours.kind == "array" and theirs.kind == "array":
        assert ours.dtype == theirs.dtype, f"{where}: dtype {ours.dtype} != TF's {theirs.dtype}"
    assert a.shape == b.shape, f"{where}: shape {a.shape} != TF's {b.shape}"
    if values:
        _close(a, b, theirs.dtype, where, rtol, atol)


def _close(a: np.ndarray, b: np.ndarray, dtype: str, where: str, rtol: float | None, atol: float | None) -> None:
    if b.dtype == object or a.dtype == object:
        assert a.tolist() == b.tolist(), f"{where}: {a!r} != TF's {b!r}"
        return
    default = TOLERANCES.get(dtype)
    if default is None and rtol is None and atol is None:
        np.testing.assert_array_equal(a, b, err_msg=f"{where} differs from TF's")
        return
    r, t = default or (0.0, 0.0)
    np.testing.assert_allclose(
        a.astype(np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64),
        b.astype(np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64),
        rtol=r if rtol is None else rtol,
        atol=t if atol is None else atol,
        equal_nan=True,
        err_msg=f"{where} differs from TF's",
    )


# --------------------------------------------------------------------------------------------
# the TensorFlow process


def _load_module(path: str) -> Any:
    name = "conformance_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _oracle_main(conn: multiprocessing.connection.Connection, here: str) -> None:
    """The oracle process: import TensorFlow once, then run test bodies as they are asked for."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.path.insert(0, here)
    try:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        conn.send(("ready", tf.__version__))
    except Exception as exc:  # TF is missing or broken: the harness runs unison alone
        conn.send(("missing", f"{type(exc).__name__}: {exc}"))
        return
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        path, qualname, kwargs, dialect = request
        try:
            body = getattr(_load_module(path), qualname).tf_body
            result: Any = to_portable(body(_with_keras(tf, dialect), **kwargs))
        except Exception as exc:
            result = _error(exc)
        except BaseException as exc:  # noqa: B036 - report anything, the test process decides
            result = Portable("error", None, type(exc).__name__, traceback.format_exc(limit=3))
        conn.send(result)


class _KerasDialect:
    """TensorFlow with another ``keras``: ``tf.keras`` is ``tf_keras`` (Keras 2), the rest is TF's."""

    def __init__(self, tf: Any, keras: Any) -> None:
        self._tf = tf
        self.keras = keras

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tf, name)


def _with_keras(tf: Any, dialect: str) -> Any:
    # Keras 3's side is the ``keras`` package itself (what the report's listing walks): TF's
    # ``tf.keras`` is a narrower face of it (no ``keras.losses.mean_squared_error`` there)
    if dialect == "keras":
        import keras
    else:
        import tf_keras as keras
    return _KerasDialect(tf, keras)


class _Oracle:
    def __init__(self) -> None:
        self.conn: multiprocessing.connection.Connection | None = None
        self.process: Any = None
        self.version: str | None = None
        self.missing: str | None = None

    def start(self) -> None:
        if self.conn is not None or self.missing is not None:
            return
        if os.environ.get("UNISON_CONFORMANCE_ORACLE", "1") == "0":
            self.missing = "UNISON_CONFORMANCE_ORACLE=0"
            return
        if importlib.util.find_spec("tensorflow") is None:
            self.missing = "tensorflow is not installed (pip install -e '.[conformance]')"
            return
        ctx = multiprocessing.get_context("spawn")
        ours, theirs = ctx.Pipe()
        self.process = ctx.Process(
            target=_oracle_main, args=(theirs, os.path.dirname(os.path.abspath(__file__))), daemon=True
        )
        self.process.start()
        theirs.close()
        if not ours.poll(_ORACLE_TIMEOUT_S):
            self.process.kill()
            raise RuntimeError(f"the TensorFlow oracle process did not start within {_ORACLE_TIMEOUT_S:.0f} s")
        status, detail = ours.recv()
        if status != "ready":
            self.missing = detail
            return
        self.conn, self.version = ours, detail
        atexit.register(self.stop)

    def run(self, path: str, qualname: str, kwargs: dict[str, Any], dialect: str = "keras") -> Any:
        assert self.conn is not None
        self.conn.send((path, qualname, kwargs, dialect))
        if not self.conn.poll(_ORACLE_TIMEOUT_S):
            self.process.kill()
            self.conn = None
            raise RuntimeError(f"TensorFlow took over {_ORACLE_TIMEOUT_S:.0f} s on {qualname}; the oracle was stopped")
        return self.conn.recv()

    def stop(self) -> None:
        if self.conn is not None:
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.conn = None
        if self.process is not None:
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()


_ORACLE = _Oracle()


def oracle_available() -> bool:
    """Whether TensorFlow answers in this session (starts the oracle process on first call)."""
    _ORACLE.start()
    return _ORACLE.conn is not None


# --------------------------------------------------------------------------------------------
# the decorator


def same_as_tf(
    *names: str,
    edge: bool = False,
    rtol: float | None = None,
    atol: float | None = None,
    values: bool = True,
    check_dtype: bool = True,
    differs: str | None = None,
    match: str | None = None,
    dialects: Sequence[str] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., None]]:
    """Make ``fn(tf, **params)`` a test that compares unison's result with TensorFlow's.

    Args:
        names: the public names the test checks, for the coverage report (``"image.resize"``).
        edge: this test is a name's edge case (empty, broadcasting, promotion, NaN, bad argument).
        rtol, atol: tolerances replacing the per-dtype defaults of ``TOLERANCES``.
        values: ``False`` compares dtypes and shapes only (random samplers).
        check_dtype: ``False`` with ``differs`` set: a dtype kept different on purpose.
        differs: why unison differs from TF here on purpose (listed in the coverage report).
        match: a regular expression unison's error message must match when the body raises (the
            message names the op and the argument).
        dialects: run once per Keras dialect, ``"keras"`` (Keras 3) and/or ``"tf_keras"`` (Keras 2):
            TensorFlow's side then gets ``tf_keras`` as ``tf.keras``; a body taking a ``dialect``
            parameter is told which.

    Without TensorFlow the body still runs on unison (and must match ``match`` where given); the
    comparison is then skipped with the reason. CI installs TensorFlow, so there it always compares.
    """
    if not check_dtype and not differs:
        raise ValueError("same_as_tf(check_dtype=False) needs differs='why unison keeps another dtype'")
    if dialects is not None and (not dialects or set(dialects) - {"keras", "tf_keras"}):
        raise ValueError(f"same_as_tf(dialects=...) takes 'keras' and/or 'tf_keras'. Received: {dialects!r}")

    def decorate(fn: Callable[..., Any]) -> Callable[..., None]:
        signature = inspect.signature(fn)
        params = list(signature.parameters.values())
        if not params or params[0].name != "tf":
            raise TypeError(f"conformance test {fn.__name__} must take `tf` as its first argument")
        path = os.path.abspath(inspect.getfile(fn))
        body_takes_dialect = "dialect" in signature.parameters

        def test(**kwargs: Any) -> None:
            import unison

            dialect = kwargs.pop("dialect", "keras") if dialects is not None else "keras"
            if body_takes_dialect:
                kwargs["dialect"] = dialect

            try:
                ours: Any = to_portable(fn(unison, **kwargs))
            except Exception as exc:  # compared with TF's outcome below
                ours = _error(exc)
                if match is not None:
                    assert re.search(match, str(exc)), f"unison's message {str(exc)!r} does not match {match!r}"
            if match is not None and not (isinstance(ours, Portable) and ours.kind == "error"):
                raise AssertionError(f"unison returned {ours!r} where an error matching {match!r} was expected")
            if not oracle_available():
                # without TensorFlow there is nothing to compare with: the body ran on unison (a crash
                # outside the expected error fails above), the comparison is skipped, saying why
                import pytest

                pytest.skip(f"TensorFlow is not importable here ({_ORACLE.missing}): nothing to compare with")
            theirs = _ORACLE.run(path, fn.__name__, kwargs, dialect)
            compare(ours, theirs, rtol=rtol, atol=atol, check_dtype=check_dtype, values=values)

        test.__name__ = fn.__name__
        test.__qualname__ = fn.__qualname__
        test.__module__ = fn.__module__
        test.__doc__ = fn.__doc__
        rest = params[1:]
        marks = list(getattr(fn, "pytestmark", []))
        if dialects is not None:
            import pytest

            if not body_takes_dialect:
                rest = [*rest, inspect.Parameter("dialect", inspect.Parameter.KEYWORD_ONLY)]
            marks.append(pytest.mark.parametrize("dialect", list(dialects)))
        test.__signature__ = signature.replace(parameters=rest)  # type: ignore[attr-defined]
        test.tf_body = fn  # type: ignore[attr-defined]
        test.pytestmark = marks  # type: ignore[attr-defined]
        return test

    return decorate


_UNISON_RESULTS: dict[tuple[Any, ...], Any] = {}


def unison_once(tf: Any, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
    """``compute()``, run once per ``key`` on unison's side, for a body run in both Keras dialects.

    unison has one ``keras`` for both dialects, so the same call gives the same result in each; a
    costly one (building a large application model) is computed in the first dialect's run and
    reused in the second's, where TensorFlow's side (another Keras) computes its own. ``key`` must
    name every argument ``compute`` depends on; the result must not be changed by the caller.
    """
    if getattr(tf, "__name__", "") != "unison":
        return compute()
    if key not in _UNISON_RESULTS:
        _UNISON_RESULTS[key] = compute()
    return _UNISON_RESULTS[key]


def tf_names(entries: Sequence[str]) -> list[str]:
    """The ``tf.`` names among a decorator's ``names`` (those without a ``keras:`` prefix)."""
    return [n for n in entries if ":" not in n]
