"""tf.Module (TF's "Introduction to modules" guide): tracked variables and sub-modules in TF's order,
names, deferred restoration from checkpoints, and tf.train.list_variables/load_checkpoint keys."""

from __future__ import annotations

import pytest
import torch

import unison as tf

pytestmark = pytest.mark.timeout(60)


class Dense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.random.normal([in_features, out_features]), name="w")
        self.b = tf.Variable(tf.zeros([out_features]), name="b")

    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


class SequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = Dense(in_features=3, out_features=3)
        self.dense_2 = Dense(in_features=3, out_features=2)

    def __call__(self, x):
        return self.dense_2(self.dense_1(x))


class FlexibleDense(tf.Module):
    def __init__(self, out_features, name=None):
        super().__init__(name=name)
        self.is_built = False
        self.out_features = out_features

    def __call__(self, x):
        if not self.is_built:
            self.w = tf.Variable(tf.random.normal([x.shape[-1], self.out_features]), name="w")
            self.b = tf.Variable(tf.zeros([self.out_features]), name="b")
            self.is_built = True
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


class FlexibleSequential(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = FlexibleDense(out_features=3)
        self.dense_2 = FlexibleDense(out_features=2)

    def __call__(self, x):
        return self.dense_2(self.dense_1(x))


def test_variables_and_submodules_in_tfs_order_and_names():
    model = SequentialModule(name="the_model")
    assert model.name == "the_model" and model.name_scope.name == "the_model/"
    assert SequentialModule().name == "sequential_module"  # the class name in snake case, as TF
    assert type("MyHTTPModule2D", (tf.Module,), {})().name == "my_http_module2_d"  # TF's camel_to_snake
    assert model.submodules == (model.dense_1, model.dense_2)
    # TF: this module's attributes sorted by name (b before w), then each sub-module in turn.
    assert [id(v) for v in model.variables] == [
        id(model.dense_1.b),
        id(model.dense_1.w),
        id(model.dense_2.b),
        id(model.dense_2.w),
    ]
    x = tf.constant([[2.0, 2.0, 2.0]])
    want = torch.relu(torch.relu(x @ model.dense_1.w + model.dense_1.b) @ model.dense_2.w + model.dense_2.b)
    torch.testing.assert_close(model(x), want)
    assert len(list(model.parameters())) == 4  # a torch.nn.Module too: optimizers see the variables


def test_trainable_split_lists_dicts_and_shared_variables():
    class Holder(tf.Module):
        def __init__(self):
            super().__init__()
            self.shared = tf.Variable(1.0, name="shared")
            self.frozen = tf.Variable(2.0, trainable=False, name="frozen")
            self.items = [tf.Variable(3.0, name="a"), {"z": tf.Variable(4.0, name="z"), "y": self.shared}]
            self.layers = [Dense(1, 1, name="inner")]
            self.constant = tf.constant(5.0)  # a tensor, not a variable: TF does not track it as state

    h = Holder()
    # attributes sorted (constant, frozen, items, layers, shared); dict items by key; each once
    assert [v.name for v in h.variables] == ["frozen:0", "a:0", "shared:0", "z:0", "b:0", "w:0"]
    assert [v.name for v in h.trainable_variables] == ["a:0", "shared:0", "z:0", "b:0", "w:0"]
    assert [v.name for v in h.non_trainable_variables] == ["frozen:0"]
    assert [m.name for m in h.submodules] == ["inner"]


def test_invalid_names_and_missing_call_are_explained():
    with pytest.raises(ValueError, match="not a valid module name"):
        tf.Module(name="my model")
    with pytest.raises(NotImplementedError, match="defines __call__"):
        tf.Module()(1)
    assert tf.Module.with_name_scope(lambda self, x: x + 1)(tf.Module(), 1) == 2


def test_checkpoint_restores_into_variables_made_later(tmp_path):
    model = FlexibleSequential(name="the_model")
    x = tf.constant([[2.0, 2.0, 2.0]])
    want = model(x).detach()
    path = tf.train.Checkpoint(model=model).write(str(tmp_path / "my_checkpoint"))
    assert tf.train.list_variables(path) == [
        ("_CHECKPOINTABLE_OBJECT_GRAPH", []),
        ("model/dense_1/b/.ATTRIBUTES/VARIABLE_VALUE", [3]),
        ("model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE", [3, 3]),
        ("model/dense_2/b/.ATTRIBUTES/VARIABLE_VALUE", [2]),
        ("model/dense_2/w/.ATTRIBUTES/VARIABLE_VALUE", [3, 2]),  # no save_counter: write() counts no save
    ]
    new_model = FlexibleSequential()
    tf.train.Checkpoint(model=new_model).restore(path)  # no variables yet: the values wait
    torch.testing.assert_close(new_model(x), want)  # made on the first call, restored on creation
    torch.testing.assert_close(new_model.dense_1.w, model.dense_1.w)


def test_deferred_value_of_the_wrong_shape_is_an_error(tmp_path):
    model = FlexibleSequential()
    model(tf.constant([[1.0, 1.0, 1.0]]))
    path = tf.train.Checkpoint(model=model).write(str(tmp_path / "c"))
    other = FlexibleSequential()
    tf.train.Checkpoint(model=other).restore(path)
    with pytest.raises(ValueError, match=r"has shape \(3, 3\), but the variable made for it has shape \(4, 3\)"):
        other(tf.constant([[1.0, 1.0, 1.0, 1.0]]))


def test_checkpoint_reader_shapes_dtypes_and_values(tmp_path):
    model = SequentialModule()
    ckpt = tf.train.Checkpoint(step=tf.Variable(7, dtype=tf.int64), model=model)
    ckpt.save(str(tmp_path / "ckpts" / "ckpt"))
    reader = tf.train.load_checkpoint(str(tmp_path / "ckpts"))  # a directory: its latest checkpoint
    key = "model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE"
    assert reader.get_variable_to_shape_map()[key] == [3, 3]
    dtype = reader.get_variable_to_dtype_map()[key]
    assert dtype.name == "float32" and dtype == torch.float32 and dtype.as_numpy_dtype is __import__("numpy").float32
    assert (reader.get_tensor(key) == model.dense_1.w.detach().numpy()).all()
    assert reader.has_tensor("step/.ATTRIBUTES/VARIABLE_VALUE")
    assert int(tf.train.load_variable(str(tmp_path / "ckpts"), "step")) == 7
    assert int(reader.get_tensor("save_counter/.ATTRIBUTES/VARIABLE_VALUE")) == 1
    with pytest.raises(tf.errors.NotFoundError, match="not found in checkpoint .*Keys like it"):  # TF's class
        reader.get_tensor("model/dense_3/w/.ATTRIBUTES/VARIABLE_VALUE")
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.load_checkpoint(str(tmp_path))


def test_a_subclass_that_never_calls_super_init_works_as_in_tf():
    class NoSuper(tf.Module):
        def __init__(self, value):
            self.weight = tf.Variable(value)

        @tf.function
        def multiply(self, x):
            return x * self.weight

    mod = NoSuper(3)
    assert mod.multiply(tf.constant([1, 2, 3])).tolist() == [3, 6, 9]
    assert mod.name == "no_super" and [v.name for v in mod.variables] == ["Variable:0"]


class MLP(tf.Module):
    def __init__(self, layers):
        self.layers = layers

    @tf.function
    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_layers_in_a_list_are_in_state_dict_checkpoints_and_deferred_restore(tmp_path):
    model = MLP([FlexibleDense(3), FlexibleDense(2)])
    x = tf.constant([[1.0, 2.0, 3.0, 4.0]])
    want = model(x).detach()
    assert sorted(model.state_dict()) == ["layers.0.b", "layers.0.w", "layers.1.b", "layers.1.w"]
    assert str(model.load_state_dict(model.state_dict())) == "<All keys matched successfully>"
    path = tf.train.Checkpoint(model=model).write(str(tmp_path / "c"))
    assert ("model/layers/0/w/.ATTRIBUTES/VARIABLE_VALUE", [4, 3]) in tf.train.list_variables(path)
    fresh = MLP([FlexibleDense(3), FlexibleDense(2)])
    tf.train.Checkpoint(model=fresh).restore(path)  # the layers' variables do not exist yet
    torch.testing.assert_close(fresh(x), want)  # made on the first call and restored then
    bad = MLP([FlexibleDense(3)])
    result = bad.load_state_dict({"layers.0.w": torch.zeros(4, 3), "layers.0.b": torch.zeros(3)}, strict=False)
    assert sorted(result.unexpected_keys) == ["layers.0.b", "layers.0.w"]  # no variables yet: not loadable


def test_saved_model_of_a_module_with_a_list_of_layers_reloads(tmp_path):
    model = MLP([Dense(4, 3), Dense(3, 2)])
    x = tf.constant([[1.0, 2.0, 3.0, 4.0]])
    tf.saved_model.save(model, str(tmp_path / "mlp"))
    loaded = tf.saved_model.load(str(tmp_path / "mlp"))
    assert isinstance(loaded, MLP) and len(loaded.layers) == 2 and isinstance(loaded.layers[1], Dense)
    torch.testing.assert_close(loaded(x), model(x))
