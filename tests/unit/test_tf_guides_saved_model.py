"""tf.saved_model.save/load of Keras models (TF's "Save and load a model using a distribution strategy").

The loaded object's ``signatures["serving_default"]`` returns ``{output_name: tensor}`` with the
model's own numbers, ``loaded(x)`` runs the model, and whatever cannot be rebuilt without its
Python code (a tf.Module, custom signatures) is refused at save time with what to do instead.
"""

from __future__ import annotations

import json
import os

import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True)
def _unison_files_only(monkeypatch):
    """These tests read back unison's half of the folder; TF's graph (a TensorFlow child process per
    save) is tested in tests/unit/test_export_saved_model.py."""
    monkeypatch.setenv("UNISON_SAVED_MODEL_GRAPH", "0")


def _sequential():
    torch.manual_seed(0)
    return tf.keras.Sequential(
        [
            tf.keras.layers.Conv2D(4, 3, activation="relu", input_shape=(8, 8, 1)),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(3, name="logits"),
        ]
    )


def test_sequential_round_trip_serving_signature_matches_the_model(tmp_path):
    model = _sequential()
    x = torch.rand(5, 8, 8, 1)
    want = model(x, training=False).detach()
    path = str(tmp_path / "tf_save")
    tf.saved_model.save(model, path)
    assert sorted(os.listdir(path)) == ["keras_model.keras", "saved_model.json"]
    assert tf.saved_model.contains_saved_model(path)
    loaded = tf.saved_model.load(path)
    assert list(loaded.signatures) == ["serving_default"]
    infer = loaded.signatures["serving_default"]
    out = infer(x)
    assert list(out) == ["logits"]  # TF names a Sequential's serving output after its last layer
    torch.testing.assert_close(out["logits"], want)
    torch.testing.assert_close(infer(conv2d_input=x)["logits"], want)  # by name, as TF's signature
    torch.testing.assert_close(loaded(x), want)
    assert len(loaded.trainable_variables) == 4 and not out["logits"].requires_grad


def test_functional_model_signature_uses_input_and_output_layer_names(tmp_path):
    a = tf.keras.Input(shape=(3,), name="input_a")
    b = tf.keras.Input(shape=(2,), name="input_b")
    merged = tf.keras.layers.Concatenate()([a, b])
    model = tf.keras.Model(
        [a, b], [tf.keras.layers.Dense(1, name="score")(merged), tf.keras.layers.Dense(2, name="aux")(merged)]
    )
    xa, xb = torch.rand(4, 3), torch.rand(4, 2)
    want = [t.detach() for t in model([xa, xb])]
    tf.saved_model.save(model, str(tmp_path / "m"))
    meta = json.loads((tmp_path / "m" / "saved_model.json").read_text())
    sig = meta["signatures"]["serving_default"]
    assert [i["name"] for i in sig["inputs"]] == ["input_a", "input_b"] and sig["outputs"] == ["score", "aux"]
    infer = tf.saved_model.load(str(tmp_path / "m")).signatures["serving_default"]
    got = infer(input_b=xb, input_a=xa)
    torch.testing.assert_close(got["score"], want[0])
    torch.testing.assert_close(got["aux"], want[1])
    with pytest.raises(TypeError, match=r"takes inputs named \['input_a', 'input_b'\]"):
        infer(input_a=xa, other=xb)
    with pytest.raises(TypeError, match="takes 2 input"):
        infer(xa)


def test_load_inside_another_strategy_scope_serves_per_replica_batches(tmp_path):
    model = _sequential()
    tf.saved_model.save(model, str(tmp_path / "m"))
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        infer = tf.saved_model.load(str(tmp_path / "m")).signatures["serving_default"]
        dist = strategy.experimental_distribute_dataset(
            tf.data.Dataset.from_tensor_slices(torch.rand(6, 8, 8, 1)).batch(3)
        )
        result = strategy.run(infer, args=(next(iter(dist)),))
    assert result["logits"].shape == (3, 3)


def test_what_cannot_be_rebuilt_is_refused_with_the_alternative(tmp_path):
    with pytest.raises(NotImplementedError, match="saves Keras models and modules.*received a function"):
        tf.saved_model.save(lambda x: x, str(tmp_path / "a"))
    model = _sequential()
    with pytest.raises(NotImplementedError, match=r"save\(signatures=\.\.\.\) is not supported"):
        tf.saved_model.save(model, str(tmp_path / "b"), signatures=lambda x: x)
    # not yet called: exported as TF exports it, without a traced call to serve
    tf.saved_model.save(tf.keras.Sequential([tf.keras.layers.Dense(2)]), str(tmp_path / "c"))
    assert len(tf.saved_model.load(str(tmp_path / "c")).signatures) == 0
    with pytest.raises(TypeError, match="SaveOptions"):
        tf.saved_model.save(model, str(tmp_path / "d"), options={"x": 1})
    tf.saved_model.save(
        model, str(tmp_path / "e"), options=tf.saved_model.SaveOptions(experimental_io_device="/job:localhost")
    )
    assert tf.saved_model.contains_saved_model(str(tmp_path / "e"))


def test_loading_something_else_says_what_it_is(tmp_path):
    with pytest.raises(FileNotFoundError, match="holds no saved_model.json"):
        tf.saved_model.load(str(tmp_path))
    (tmp_path / "tfmodel").mkdir()
    (tmp_path / "tfmodel" / "saved_model.pb").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="TensorFlow SavedModel"):
        tf.saved_model.load(str(tmp_path / "tfmodel"))
    model = _sequential()
    model.save(str(tmp_path / "model.h5"))
    with pytest.raises(FileNotFoundError, match="it is a file"):
        tf.saved_model.load(str(tmp_path / "model.h5"))
    with pytest.raises(KeyError, match="exported signatures are"):
        tf.saved_model.save(model, str(tmp_path / "ok"))
        tf.saved_model.load(str(tmp_path / "ok")).signatures["predict"]


class _Dense(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(torch.randn(3, 2), name="w")
        self.steps = tf.Variable(4, trainable=False, name="steps")
        self.units = 2

    @tf.function
    def __call__(self, x):
        return tf.matmul(x, self.w)


class _Outer(tf.Module):
    def __init__(self):  # no super().__init__(), as TF's basics guide writes it
        self.dense_1 = _Dense()
        self.scale = tf.Variable(2.0)

    @tf.function
    def multiply(self, x):
        return self.dense_1(x) * self.scale


def test_a_module_of_classes_this_process_defines_loads_as_itself(tmp_path):
    model = _Outer()
    x = tf.ones([1, 3])
    tf.saved_model.save(model, str(tmp_path / "saved"))
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    assert isinstance(loaded, _Outer) and loaded is not model
    torch.testing.assert_close(loaded.multiply(x), model.multiply(x))  # the class's tf.function runs
    assert loaded.dense_1.units == 2 and loaded.dense_1.name == "__dense"  # TF's snake case of "_Dense"
    assert int(loaded.dense_1.steps) == 4 and float(loaded.scale) == 2.0
    assert [v.name for v in loaded.trainable_variables] == ["scale:0", "w:0"]
    assert [v.name for v in loaded.non_trainable_variables] == ["steps:0"]
    with torch.no_grad():
        model.scale.assign(5.0)
    assert float(loaded.scale) == 2.0  # its own variables, not the exported object's


def test_a_module_whose_class_is_not_defined_here_loads_as_its_variables(tmp_path):
    def make():
        class Local(tf.Module):  # a class load cannot look up (defined inside a function)
            def __init__(self):
                super().__init__()
                self.dense_1 = _Dense()

            def __call__(self, x):
                return self.dense_1(x)

        return Local()

    model = make()
    tf.saved_model.save(model, str(tmp_path / "the_saved_model"))
    loaded = tf.saved_model.load(str(tmp_path / "the_saved_model"))
    assert not isinstance(loaded, tf.Module) and len(loaded.signatures) == 0  # as TF: a restored object
    torch.testing.assert_close(loaded.dense_1.w.detach(), model.dense_1.w.detach())
    assert int(loaded.dense_1.steps) == 4
    with pytest.raises(NotImplementedError, match=r"Local, a class this process does not define.*Checkpoint\(root="):
        loaded(tf.ones([1, 3]))
    with pytest.raises(AttributeError, match=r"'multiply' was not restored"):
        loaded.multiply  # noqa: B018
    rebuilt = make()  # the way back the error names
    tf.train.Checkpoint(root=rebuilt).restore(str(tmp_path / "the_saved_model" / "variables" / "variables"))
    torch.testing.assert_close(rebuilt(tf.ones([1, 3])), model(tf.ones([1, 3])))


def _double_features(x):
    return tf.concat([x, x], axis=1)


class _Normalize(tf.Module):
    def __init__(self, x):
        self.mean = tf.math.reduce_mean(x, axis=0)  # tensors, not variables (TF captures them)
        self.std = tf.math.reduce_std(x, axis=0)

    def norm(self, x):
        return (x - self.mean) / self.std


class _Export(tf.Module):
    def __init__(self, extract_features, norm_x, scale):
        self.extract_features = extract_features
        self.norm_x = norm_x
        self.scale = tf.Variable(scale)

    @tf.function(input_signature=[tf.TensorSpec(shape=[None, None], dtype=tf.float32)])
    def __call__(self, x):
        return self.norm_x.norm(self.extract_features(x)) * self.scale


def test_the_core_quickstart_export_module_reloads_with_its_constants_and_functions(tmp_path):
    x = torch.rand(8, 2)
    export = _Export(_double_features, _Normalize(_double_features(x)), 3.0)
    tf.saved_model.save(export, str(tmp_path / "lin_reg_export"))
    loaded = tf.saved_model.load(str(tmp_path / "lin_reg_export"))
    assert isinstance(loaded, _Export) and loaded.extract_features is _double_features
    torch.testing.assert_close(loaded.norm_x.mean, export.norm_x.mean)
    torch.testing.assert_close(loaded(x), export(x))


def test_a_function_the_class_module_did_not_define_is_not_looked_up(tmp_path):
    import json
    import os

    export = _Export(_double_features, _Normalize(torch.rand(4, 4)), 1.0)
    tf.saved_model.save(export, str(tmp_path / "m"))
    meta_path = tmp_path / "m" / "saved_model.json"
    meta = json.loads(meta_path.read_text())
    meta["tree"]["functions"]["extract_features"] = "os:system"  # what a tampered directory could say
    meta_path.write_text(json.dumps(meta))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert not isinstance(loaded, _Export)  # not rebuilt: only the variables come back
    assert float(loaded.scale) == 1.0 and os.system is not getattr(loaded, "__dict__", {}).get("extract_features")
