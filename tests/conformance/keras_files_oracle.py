"""Real Keras on the other side of the file round trips: run as a subprocess, never imported by pytest.

``python keras_files_oracle.py FLAVOR ACTION DIR [MODEL ...]``: FLAVOR is ``keras3``
(``tensorflow.keras``, Keras 3) or ``tf_keras`` (Keras 2); ACTION is

* ``write``: build each model (:mod:`keras_files_models`), move its weights off their initial
  values, save ``DIR/<model><format>`` for every format, and its predictions in ``DIR/<model>.npy``;
* ``read``: load every ``DIR/<model><format>`` that unison wrote (``load_model`` for ``.keras`` and
  ``.h5``; a fresh build and ``load_weights`` for ``.weights.h5``) and save its predictions in
  ``DIR/<model><format>.<FLAVOR>.npy``.

Each failure is recorded, not raised, in ``DIR/<FLAVOR>-<ACTION>.json`` (model and format ->
"ok" or the error), so one run answers the whole matrix. TensorFlow lives only in this process:
the pytest process, whose replica tests fork later, never imports it.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keras_files_models as models  # noqa: E402


def _keras(flavor: str):  # noqa: ANN202 - the module itself
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if flavor == "tf_keras":
        import tf_keras

        return tf_keras
    import tensorflow as tf

    return tf.keras


def _file(directory: str, name: str, fmt: str) -> str:
    return os.path.join(directory, name + fmt)


def write(keras, flavor: str, directory: str, names: list[str]) -> dict[str, str]:  # noqa: ANN001
    report = {}
    for name in names:
        try:
            model = models.build(keras, name)
            models.perturb(model)
            np.save(os.path.join(directory, name + ".npy"), models.predict(model, name))
        except Exception as exc:  # noqa: BLE001 - recorded for the matrix
            for fmt in models.FORMATS:
                report[name + fmt] = f"build: {type(exc).__name__}: {exc}"[:400]
            continue
        for fmt in models.FORMATS:
            try:
                path = _file(directory, name, fmt)
                if fmt == ".weights.h5":
                    model.save_weights(path)
                else:
                    model.save(path)
                report[name + fmt] = "ok"
            except Exception as exc:  # noqa: BLE001
                report[name + fmt] = f"{type(exc).__name__}: {exc}"[:400]
    return report


def read(keras, flavor: str, directory: str, names: list[str]) -> dict[str, str]:  # noqa: ANN001
    report = {}
    for name in names:
        for fmt in models.FORMATS:
            path = _file(directory, name, fmt)
            if not os.path.exists(path):
                continue
            try:
                if fmt == ".weights.h5":
                    model = models.build(keras, name)
                    model.load_weights(path)
                else:
                    models.custom_classes(keras)  # registered, as a user's program imports them
                    model = keras.models.load_model(path)
                np.save(f"{path}.{flavor}.npy", models.predict(model, name))
                report[name + fmt] = "ok"
            except Exception as exc:  # noqa: BLE001
                last = traceback.format_exc().strip().splitlines()[-1]
                report[name + fmt] = f"{type(exc).__name__}: {last}"[:400]
    return report


def main() -> None:
    flavor, action, directory, *names = sys.argv[1:]
    keras = _keras(flavor)
    run = write if action == "write" else read
    report = run(keras, flavor, directory, names or list(models.MODELS))
    with open(os.path.join(directory, f"{flavor}-{action}.json"), "w") as fh:
        json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
