"""Write the public API listings the coverage reports are measured against (run with TensorFlow).

``python tests/conformance/api/make_api_lists.py`` walks the public modules of TensorFlow 2.21,
Keras 3 and tf_keras 2.21 (every attribute path reachable from the package through public module
attributes, each module visited once) and writes one name a line to ``tf.txt``, ``keras3.txt`` and
``tf_keras.txt`` beside this file. The listings are data: the reports read them without TensorFlow.

Left out of TensorFlow's listing, as the TF-API issue measures it: ``tf.keras`` (Keras has its own
listings), ``tf.compat``, ``tf.estimator``, ``tf.tpu``, ``tf.lite``, ``tf.xla``, ``tf.raw_ops``,
DTensor (``tf.dtensor`` and ``tf.experimental.dtensor``), ``tf.security``, ``tf.quantization``,
``tf.feature_column``, ``tf.test`` and ``tf.experimental.numpy``.
"""

from __future__ import annotations

import os
import pathlib
import sys
import types

HERE = pathlib.Path(__file__).resolve().parent

TF_LEFT_OUT = frozenset(
    {
        "keras",
        "compat",
        "estimator",
        "tpu",
        "lite",
        "xla",
        "raw_ops",
        "dtensor",
        "experimental.dtensor",
        "security",
        "quantization",
        "feature_column",
        "test",
        "experimental.numpy",
    }
)


def public_names(package: types.ModuleType, root: str, left_out: frozenset[str] = frozenset()) -> list[str]:
    """Every public attribute path of ``package`` that is not itself a module, sorted."""
    seen: set[int] = set()
    names: list[str] = []

    def walk(module: types.ModuleType, prefix: str) -> None:
        for attr in sorted(dir(module)):
            if attr.startswith("_"):
                continue
            full = f"{prefix}.{attr}" if prefix else attr
            if full in left_out:
                continue
            try:
                obj = getattr(module, attr)
            except Exception:  # a lazy attribute that fails to load is not part of the usable API
                continue
            if isinstance(obj, types.ModuleType):
                inside = obj.__name__.startswith(root) and ".src" not in obj.__name__
                inside = inside and not obj.__name__.startswith(("tensorflow.python", "tensorflow.core"))
                if inside and id(obj) not in seen:
                    seen.add(id(obj))
                    walk(obj, full)
                continue
            names.append(full)

    walk(package, "")
    return sorted(set(names))


def main() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import tensorflow as tf
    import tf_keras

    listings = {
        "tf.txt": (public_names(tf, "tensorflow", TF_LEFT_OUT), f"tensorflow {tf.__version__}"),
        "keras3.txt": (public_names(keras, "keras"), f"keras {keras.__version__}"),
        "tf_keras.txt": (public_names(tf_keras, "tf_keras"), f"tf_keras {tf_keras.__version__}"),
    }
    for file, (names, version) in listings.items():
        (HERE / file).write_text(f"# {version}: {len(names)} public names\n" + "\n".join(names) + "\n")
        print(f"{file}: {version}, {len(names)} names", file=sys.stderr)


if __name__ == "__main__":
    main()
