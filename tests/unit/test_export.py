"""model.export for serving: ONNX (onnxruntime predicts what unison predicts), TensorFlow SavedModel
(TensorFlow loads it in a child process and its serving signature predicts the same), torch.export,
and the named errors (unknown format, missing package, unbuilt model, an op ONNX lacks).

The SavedModel tests start TensorFlow (twice per test: the export's child and the oracle), so they
are slow and group their models; they skip where TensorFlow is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras
from unison.errors import (
    ExportDependencyError,
    ModelNotBuiltError,
    OnnxExportError,
    SavedModelExportError,
    UnknownExportFormatError,
)

pytestmark = pytest.mark.timeout(300)

needs_onnx = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("onnx", "onnxscript", "onnxruntime")),
    reason="needs onnx, onnxscript and onnxruntime (pip install 'unison[onnx]' onnxruntime)",
)
needs_tf = pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs TensorFlow")


# --- the models of issue 37 ---------------------------------------------------------------------
def _perturb(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Weights away from their initial values (BatchNorm statistics too), so that a layer TF or ONNX
    computes differently shows up in the outputs."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, value in model.state_dict().items():
            if value.is_floating_point():
                value.add_(0.2 * torch.randn(value.shape, generator=gen))
                if "var" in name:
                    value.abs_().add_(0.5)
    return model.eval()


def sequential_cnn():
    torch.manual_seed(0)
    model = keras.Sequential(
        [
            keras.Input((8, 8, 3)),
            keras.layers.Conv2D(4, 3, activation="relu"),
            keras.layers.BatchNormalization(),
            keras.layers.MaxPooling2D(),
            keras.layers.Flatten(),
            keras.layers.Dense(5, activation="softmax"),
        ]
    )
    return _perturb(model), [(8, 8, 3)]


def functional_multi_input():
    torch.manual_seed(0)
    a, b = keras.Input((6,), name="a"), keras.Input((4,), name="b")
    x = keras.layers.Concatenate()([keras.layers.Dense(8, activation="relu")(a), b])
    out = [keras.layers.Dense(3, name="score")(x), keras.layers.Dense(1, activation="sigmoid", name="aux")(x)]
    return _perturb(keras.Model([a, b], out)), [(6,), (4,)]


def transformer_block():
    torch.manual_seed(0)
    t = keras.Input((5, 16), name="tokens")
    h = keras.layers.MultiHeadAttention(num_heads=2, key_dim=8)(t, t)
    h = keras.layers.LayerNormalization()(keras.layers.Add()([t, h]))
    f = keras.layers.Dense(16)(keras.layers.Dense(32, activation="relu")(h))
    out = keras.layers.LayerNormalization()(keras.layers.Add()([h, f]))
    return _perturb(keras.Model(t, out)), [(5, 16)]


@keras.utils.register_keras_serializable(package="export_test")
class ScaledTanh(keras.layers.Layer):
    """A custom layer with a weight of its own."""

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="scale")

    def call(self, x):
        return torch.tanh(x) * self.scale + x


class SubclassedNet(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(8, activation="relu")
        self.custom = ScaledTanh()
        self.head = keras.layers.Dense(3)

    def call(self, x):
        return self.head(self.custom(self.hidden(x)))


def subclassed_custom():
    torch.manual_seed(0)
    model = SubclassedNet()
    model(torch.zeros(2, 6))  # a subclassed model knows its input once called
    return _perturb(model), [(6,)]


def application():
    torch.manual_seed(0)
    model = keras.applications.MobileNetV2(
        input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=10, classifier_activation=None
    )
    return _perturb(model), [(32, 32, 3)]  # its initial logits are ~1e-11: nothing to compare


def _batch(shapes, rows=3, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.random((rows, *s), dtype=np.float32) for s in shapes]


def _unison(model, batch):
    x = [torch.from_numpy(b) for b in batch]
    with torch.no_grad():
        out = model(x if len(x) > 1 else x[0], training=False)
    return [o.numpy() for o in (out if isinstance(out, (list, tuple)) else [out])]


def _max_diff(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
    return max(float(np.max(np.abs(g - w))) for g, w in zip(got, want))


# --- ONNX ---------------------------------------------------------------------------------------
def _onnx_round_trip(make, tmp_path):
    import onnxruntime

    model, shapes = make()
    path = str(tmp_path / f"{make.__name__}.onnx")
    model.export(path, format="onnx", verbose=False)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    batch = _batch(shapes)  # 3 rows: the export traced 2, so the batch axis must be dynamic
    names = [i.name for i in session.get_inputs()]
    assert [o.name for o in session.get_outputs()][0] == "output_0"
    got = session.run(None, dict(zip(names, batch)))
    return names, _max_diff(got, _unison(model, batch))


@needs_onnx
@pytest.mark.parametrize("make", [sequential_cnn, functional_multi_input, subclassed_custom, transformer_block])
def test_onnxruntime_predicts_what_unison_predicts(make, tmp_path):
    names, diff = _onnx_round_trip(make, tmp_path)
    assert diff < 1e-5, diff
    if make is functional_multi_input:
        assert names == ["a", "b"]  # Keras 3's names: the model's keras.Input names


@needs_onnx
@pytest.mark.slow
def test_onnx_of_a_keras_application(tmp_path):
    _, diff = _onnx_round_trip(application, tmp_path)
    assert diff < 1e-5 * 20, diff  # logits up to ~15: float32 rounding over 50 layers


@needs_onnx
def test_onnx_export_takes_an_input_signature_and_prints_keras_line(tmp_path, capsys):
    import onnxruntime

    model, _ = subclassed_custom()
    path = str(tmp_path / "sig.onnx")
    model.export(path, format="onnx", input_signature=[tf.TensorSpec(shape=(None, 6), dtype=tf.float32, name="x")])
    assert f"Saved artifact at '{path}'." in capsys.readouterr().out
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    assert [(i.name, i.shape) for i in session.get_inputs()] == [("x", ["batch", 6])]


@needs_onnx
def test_an_op_onnx_cannot_convert_is_named(tmp_path):
    class Zeta(keras.layers.Layer):
        def call(self, x):
            return torch.special.zeta(x + 2.0, torch.tensor(2.0))

    model = keras.Sequential([keras.Input((4,)), Zeta()])
    with pytest.raises(OnnxExportError, match=r"uses the torch op 'prims.zeta'.*custom_translation_table"):
        model.export(str(tmp_path / "zeta.onnx"), format="onnx", verbose=False)


@needs_onnx
def test_python_control_flow_on_values_is_explained(tmp_path):
    class Branchy(keras.layers.Layer):
        def call(self, x):
            return x * 2 if float(x.sum()) > 0 else x

    model = keras.Sequential([keras.Input((4,)), Branchy()])
    with pytest.raises(OnnxExportError, match="torch.export could not trace.*torch.cond"):
        model.export(str(tmp_path / "b.onnx"), format="onnx", verbose=False)


# --- errors that need no exporter ---------------------------------------------------------------
def test_an_unknown_format_lists_the_formats(tmp_path):
    model, _ = sequential_cnn()
    with pytest.raises(UnknownExportFormatError, match=r"format='onx' \(did you mean 'onnx'\?\).*'tf_saved_model'"):
        model.export(str(tmp_path / "m"), format="onx")
    with pytest.raises(ValueError, match="'tf_saved_model' writes the SavedModel"):
        model.export(str(tmp_path / "m"), format="saved_model")


def test_a_model_without_input_shape_says_how_to_give_one(tmp_path):
    model = keras.Sequential([keras.layers.Dense(2)])
    for fmt in ("onnx", "tf_saved_model"):
        with pytest.raises(ModelNotBuiltError, match=r"input shape is not known.*input_signature="):
            model.export(str(tmp_path / "m"), format=fmt)
    assert not os.path.exists(tmp_path / "m")


def test_missing_packages_name_the_extra(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in ("onnxscript", "tensorflow") else real(name, *a)
    )
    monkeypatch.delenv("UNISON_TF_PYTHON", raising=False)
    model, _ = sequential_cnn()
    with pytest.raises(ExportDependencyError, match=r"\['onnxscript'\].*pip install 'unison\[onnx\]'"):
        model.export(str(tmp_path / "m.onnx"), format="onnx")
    with pytest.raises(ExportDependencyError, match=r"needs TensorFlow.*pip install 'unison\[export-tf\]'"):
        model.export(str(tmp_path / "sm"), format="tf_saved_model")
    with pytest.warns(UserWarning, match=r"no saved_model.pb.*unison\[export-tf\]"):
        tf.saved_model.save(model, str(tmp_path / "unison_only"))
    assert sorted(os.listdir(tmp_path / "unison_only")) == ["keras_model.keras", "saved_model.json"]


def test_a_subclassed_model_is_refused_as_saved_model_with_the_alternatives(tmp_path):
    model, _ = subclassed_custom()
    with pytest.raises(SavedModelExportError, match=r"no architecture config.*format='onnx' or torch.export"):
        model.export(str(tmp_path / "sm"), format="tf_saved_model")
    assert not os.path.exists(tmp_path / "sm")


# --- PyTorch serving (docs/export.md) -----------------------------------------------------------
def test_torch_export_of_the_serving_module_predicts_the_same(tmp_path):
    from unison.keras.export import ServingModule, example_inputs, input_specs

    model, shapes = functional_multi_input()
    specs = input_specs(model)
    serving = ServingModule(model, specs).eval()
    batch = torch.export.Dim("batch")
    program = torch.export.export(serving, example_inputs(specs), dynamic_shapes=(({0: batch}, {0: batch}),))
    torch.export.save(program, str(tmp_path / "model.pt2"))
    reloaded = torch.export.load(str(tmp_path / "model.pt2")).module()
    x = [torch.from_numpy(b) for b in _batch(shapes, rows=5)]
    got = [t.detach().numpy() for t in reloaded(*x)]
    assert _max_diff(got, _unison(model, [b.numpy() for b in x])) < 1e-6


# --- TensorFlow SavedModel ----------------------------------------------------------------------
_ORACLE = """
import json, sys, numpy as np, tensorflow as tf
jobs = json.load(open(sys.argv[1]))
for job in jobs:
    fn = tf.saved_model.load(job["dir"]).signatures["serving_default"]
    names = sorted(fn.structured_input_signature[1])
    data = np.load(job["inputs"])
    feed = {n: tf.constant(data[f"x{i}"]) for i, n in enumerate(job["names"] if len(names) > 1 else names)}
    out = fn(**feed)
    keys = sorted(out, key=lambda k: int(k.rsplit("_", 1)[1]))
    np.savez(job["outputs"], **{f"y{i}": out[k].numpy() for i, k in enumerate(keys)})
    job["keys"] = keys
json.dump(jobs, open(sys.argv[1], "w"))
"""


def _tf_serves(tmp_path, exported):
    """Run each SavedModel's serving_default in one TensorFlow process; its outputs per folder."""
    jobs = []
    for i, (path, names, batch) in enumerate(exported):
        inputs = str(tmp_path / f"in{i}.npz")
        np.savez(inputs, **{f"x{j}": b for j, b in enumerate(batch)})
        jobs.append({"dir": path, "names": names, "inputs": inputs, "outputs": str(tmp_path / f"out{i}.npz")})
    job_file = tmp_path / "jobs.json"
    job_file.write_text(json.dumps(jobs))
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run(
        [sys.executable, "-c", _ORACLE, str(job_file)], env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    jobs = json.loads(job_file.read_text())
    results = []
    for job in jobs:
        assert job["keys"][0] == "output_0"
        data = np.load(job["outputs"])
        results.append([data[f"y{i}"] for i in range(len(job["keys"]))])
    return results


@needs_tf
@pytest.mark.slow
def test_tensorflow_serves_the_saved_model_with_unison_predictions(tmp_path):
    exported = []
    models = []
    for make in (sequential_cnn, functional_multi_input, transformer_block):
        model, shapes = make()
        path = str(tmp_path / make.__name__)
        if make is transformer_block:
            tf.saved_model.save(model, path)  # TF's own entry point writes the same folder
        else:
            model.export(path, format="tf_saved_model", verbose=False)
        assert {"saved_model.pb", "variables"} <= set(os.listdir(path))
        names = [kt.name for kt in model.inputs]
        exported.append((path, names, _batch(shapes)))
        models.append(model)
    for model, (path, _, batch), got in zip(models, exported, _tf_serves(tmp_path, exported)):
        want = _unison(model, batch)
        assert _max_diff(got, want) < 1e-5, path
        # unison reads the folder back too (its own files beside TF's graph)
        served = tf.saved_model.load(path)
        x = [torch.from_numpy(b) for b in batch]
        mine = served(x if len(x) > 1 else x[0])
        mine = mine if isinstance(mine, (list, tuple)) else [mine]
        assert _max_diff([m.numpy() for m in mine], want) < 1e-6
    # TF's half alone (as TF wrote it for a TF program) is refused with what it is
    graph_only = tmp_path / "graph_only"
    graph_only.mkdir()
    for name in ("saved_model.pb", "variables"):
        os.rename(os.path.join(exported[0][0], name), graph_only / name)
    with pytest.raises(FileNotFoundError, match="a TensorFlow SavedModel .* serve it with TensorFlow"):
        tf.saved_model.load(str(graph_only))


@needs_tf
@pytest.mark.slow
def test_tensorflow_serves_a_keras_application(tmp_path):
    model, shapes = application()
    path = str(tmp_path / "mobilenet")
    model.export(path, format="tf_saved_model", verbose=False)
    batch = _batch(shapes)
    (got,) = _tf_serves(tmp_path, [(path, [model.inputs[0].name], batch)])
    assert _max_diff(got, _unison(model, batch)) < 1e-5 * 20  # logits up to ~15

    # a functional model with a layer only unison's code defines: TF's child names the layer
    inputs = keras.Input((6,), name="x")
    custom = keras.Model(inputs, ScaledTanh(name="scaled")(keras.layers.Dense(4)(inputs)))
    custom(torch.zeros(2, 6))
    with pytest.raises(SavedModelExportError, match=r"layer 'scaled' \(ScaledTanh\).*format='onnx'"):
        custom.export(str(tmp_path / "custom"), format="tf_saved_model", verbose=False)
    assert not os.path.exists(tmp_path / "custom")
