"""Files that real Keras opens, and files real Keras wrote that unison opens (issue 37).

For each model of :mod:`keras_files_models` and each of ``.keras``, ``.h5`` and ``.weights.h5``:
unison writes, and Keras 3 (``tensorflow.keras``) and Keras 2 (``tf_keras``) load it and predict
the same outputs; Keras writes, and unison rebuilds the architecture (``load_model``) or loads the
weights into its own build (``load_weights``) and predicts the same outputs. Keras runs in a
subprocess (``keras_files_oracle.py``): TensorFlow never enters the pytest process. Skipped where
TensorFlow is not installed (CI installs the conformance extra).

The cells that do not round trip today are listed in ``NOT_YET`` with the reason; every other
cell must pass, and docs/saving.md shows the matrix as measured.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import keras_files_models as models  # noqa: E402

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("tensorflow") is None, reason="TensorFlow (the oracle) is not installed"
    ),
    pytest.mark.timeout(900),
    pytest.mark.slow,
]

FLAVORS = ("keras3", "tf_keras")
# (direction, flavor, model, format) -> why it does not round trip (yet)
_TF_KERAS_ZIP = "tf_keras reads only its own dialect of .keras (Keras 2 configs, tf_keras module paths)"
NOT_YET: dict[tuple[str, str, str, str], str] = {
    (
        "to_keras",
        "keras3",
        "subclassed",
        ".h5",
    ): "Keras's legacy HDF5 has no subclassed models (Keras refuses them too)",
    (
        "to_keras",
        "tf_keras",
        "subclassed",
        ".h5",
    ): "Keras's legacy HDF5 has no subclassed models (Keras refuses them too)",
    ("from_keras", "tf_keras", "subclassed", ".h5"): "tf_keras cannot write a subclassed model to HDF5",
    (
        "from_keras",
        "keras3",
        "subclassed",
        ".h5",
    ): "Keras 3 writes no config a legacy loader can rebuild a subclass from",
    ("to_keras", "keras3", "transformer", ".h5"): "MultiHeadAttention in .h5: tf_keras needs query_shape, Keras 3 "
    "refuses it; unison writes tf_keras's (Keras 3 reads the .keras)",
    **{("to_keras", "tf_keras", name, ".keras"): _TF_KERAS_ZIP for name in models.MODELS},
}
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def _oracle(flavor: str, action: str, directory: str) -> dict[str, str]:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "keras_files_oracle.py"), flavor, action, directory],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = os.path.join(directory, f"{flavor}-{action}.json")
    assert done.returncode == 0 and os.path.exists(report), done.stderr[-3000:]
    with open(report) as fh:
        return dict(json.load(fh))


def _unison_keras() -> Any:
    from unison import keras

    return keras


def _check(results: dict[str, str], direction: str, flavor: str) -> None:
    broken = {
        cell: outcome
        for cell, outcome in results.items()
        if outcome != "ok" and _key(direction, flavor, cell) not in NOT_YET
    }
    assert not broken, json.dumps(broken, indent=1)


def _key(direction: str, flavor: str, cell: str) -> tuple[str, str, str, str]:
    for fmt in sorted(models.FORMATS, key=len, reverse=True):
        if cell.endswith(fmt):
            return (direction, flavor, cell[: -len(fmt)], fmt)
    raise AssertionError(cell)


@pytest.mark.parametrize("flavor", FLAVORS)
def test_unison_files_load_in_keras_and_predict_the_same(flavor: str, tmp_path: Any) -> None:
    keras = _unison_keras()
    directory = str(tmp_path)
    expected: dict[str, np.ndarray] = {}
    results: dict[str, str] = {}
    for name in models.MODELS:
        model = models.build(keras, name)
        models.perturb(model)
        expected[name] = models.predict(model, name)
        for fmt in models.FORMATS:
            path = os.path.join(directory, name + fmt)
            try:
                model.save_weights(path) if fmt == ".weights.h5" else model.save(path)
            except Exception as exc:  # noqa: BLE001 - the matrix records it
                results[name + fmt] = f"unison save: {type(exc).__name__}: {exc}"[:300]
    loaded = _oracle(flavor, "read", directory)
    for cell, outcome in loaded.items():
        if outcome == "ok":
            name = _key("to_keras", flavor, cell)[2]
            got = np.load(os.path.join(directory, f"{cell}.{flavor}.npy"))
            close = got.shape == expected[name].shape and np.allclose(got, expected[name], **TOLERANCE)
            outcome = "ok" if close else _differ(got, expected[name])
        results[cell] = outcome
    for name in models.MODELS:
        for fmt in models.FORMATS:
            results.setdefault(name + fmt, "not written")
    _record("to_keras", flavor, results)
    _check(results, "to_keras", flavor)


@pytest.mark.parametrize("flavor", FLAVORS)
def test_keras_files_load_in_unison_and_predict_the_same(flavor: str, tmp_path: Any) -> None:
    keras = _unison_keras()
    directory = str(tmp_path)
    written = _oracle(flavor, "write", directory)
    results: dict[str, str] = {}
    for cell, outcome in written.items():
        direction, _, name, fmt = _key("from_keras", flavor, cell)
        if outcome != "ok":
            results[cell] = f"Keras save: {outcome}"
            continue
        path = os.path.join(directory, cell)
        try:
            if fmt == ".weights.h5":
                model = models.build(keras, name)
                model.load_weights(path)
            else:
                models.custom_classes(keras)
                model = keras.models.load_model(path)
            got = models.predict(model, name)
        except Exception as exc:  # noqa: BLE001 - the matrix records it
            results[cell] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        want = np.load(os.path.join(directory, name + ".npy"))
        close = got.shape == want.shape and np.allclose(got, want, **TOLERANCE)
        results[cell] = "ok" if close else _differ(got, want)
    _record("from_keras", flavor, results)
    _check(results, "from_keras", flavor)


def _differ(got: np.ndarray, want: np.ndarray) -> str:
    if got.shape != want.shape:
        return f"output shape {got.shape} vs {want.shape}"
    return f"predictions differ (max {np.abs(got - want).max():.3g})"


def _record(direction: str, flavor: str, results: dict[str, str]) -> None:
    # the matrix as measured, for docs/saving.md (UNISON_KERAS_MATRIX=dir to keep it)
    out = os.environ.get("UNISON_KERAS_MATRIX")
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"{direction}-{flavor}.json"), "w") as fh:
            json.dump(results, fh, indent=1, sort_keys=True)
