"""Keras 2's ``keras.backend`` (``K``) functions on unison against ``tf_keras.backend`` on TF 2.21.

TF-era programs call ``K.mean``, ``K.sum``, ``K.square``, ``K.epsilon()``... One generic body
calls ``tf.keras.backend.<name>(*args, **kwargs)`` on the same inputs in both (Keras 2's dialect,
``dialects=("tf_keras",)``); ``K_OPS`` holds each function's ordinary call and ``K_OPS_EDGE`` its
edge case (special values, another axis, ``keepdims``, a bad argument). Strings beginning with
``@`` name inputs (``"@VAR"`` is a ``K.variable`` of ``A``).
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf

KERAS2 = ("tf_keras",)


def _inputs() -> dict:
    a = (np.sin(np.arange(12)) * 2.0).reshape(3, 4).astype(np.float32)
    return {
        "A": a,
        "B": (np.cos(np.arange(12)) * 2.0).reshape(3, 4).astype(np.float32),
        "P": np.abs(a) + 0.5,
        "U": (np.sin(np.arange(12)) * 0.9).reshape(3, 4).astype(np.float32),
        "N": np.array([np.nan, np.inf, -np.inf, 0.0, -1.5, 2.5], np.float32),
        "M": (np.arange(12) % 3 == 0).reshape(3, 4),
        "I": np.array([1, 0, 3], np.int32),
        "Q": (np.sin(np.arange(24)) * 2.0).reshape(2, 3, 4).astype(np.float32),
        "R": (np.cos(np.arange(24)) * 2.0).reshape(2, 4, 3).astype(np.float32),
        "C": np.array([[1.0], [-2.0], [0.5]], np.float32),
        "V": np.array([0.5, -1.0, 2.0, 3.0], np.float32),
        "BIN": np.array([[1.0, 0.0, 1.0, 0.0]] * 3, np.float32),
        "PROB": np.array([[0.8, 0.1, 0.6, 0.3], [0.2, 0.4, 0.9, 0.7], [0.55, 0.65, 0.05, 0.45]], np.float32),
        "SOFT": np.array([[0.2, 0.5, 0.1, 0.2], [0.25, 0.25, 0.4, 0.1], [0.7, 0.1, 0.1, 0.1]], np.float32),
        "ONEHOT": np.eye(4, dtype=np.float32)[[1, 0, 3]],
        "E": np.zeros((0, 4), np.float32),
        "R1": (np.cos(np.arange(8)) * 0.5).reshape(4, 2).astype(np.float32),
        "LOGITS": np.array([[2.0, -1.0, 0.5, 0.0], [0.0, 3.0, -2.0, 1.0], [1.0, 1.0, 1.0, -1.0]], np.float32),
        "I0": np.array([2, 2, 0], np.int32),
        "IG": np.array([[0, 2], [1, 1]], np.int32),
        "T": np.array(True),
        "I2D": np.array([[1, 0], [3, 2]], np.int32),
        "Q1": (np.sin(np.arange(4)) * 2.0).reshape(1, 4).astype(np.float32),
    }


def _arg(tf, value, inputs: dict):
    if value == "@VAR":
        return tf.keras.backend.variable(inputs["A"])
    # Keras 2's K functions take tensors (several fail on NumPy arrays), so inputs become tf.constant
    if isinstance(value, str) and value.startswith("@"):
        return tf.constant(inputs[value[1:]])
    if isinstance(value, list) and value and all(isinstance(v, str) and v.startswith("@") for v in value):
        return [tf.constant(inputs[v[1:]]) for v in value]
    return value


K_OPS = (
    ("abs", ("@A",), {}),
    ("all", ("@M",), {"axis": 1}),
    ("any", ("@M",), {"axis": 0}),
    ("arange", (1, 7, 2), {}),
    ("argmax", ("@A",), {}),
    ("argmin", ("@A",), {}),
    ("batch_dot", ("@Q", "@R"), {"axes": (2, 1)}),
    ("batch_flatten", ("@Q",), {}),
    ("binary_crossentropy", ("@BIN", "@PROB"), {}),
    ("cast", ("@A", "int32"), {}),
    ("categorical_crossentropy", ("@ONEHOT", "@SOFT"), {}),
    ("clip", ("@A", -1.0, 1.0), {}),
    ("concatenate", (["@A", "@B"],), {}),
    ("constant", ([[1.0, 2.0], [3.0, 4.0]],), {}),
    ("cos", ("@A",), {}),
    ("count_params", ("@VAR",), {}),
    ("cumprod", ("@U",), {"axis": 1}),
    ("cumsum", ("@A",), {"axis": 1}),
    ("dot", ("@A", "@R1"), {}),
    ("dtype", ("@VAR",), {}),
    ("elu", ("@A",), {"alpha": 0.5}),
    ("equal", ("@A", "@A"), {}),
    ("eval", ("@VAR",), {}),
    ("exp", ("@A",), {}),
    ("expand_dims", ("@A",), {"axis": 1}),
    ("eye", (3,), {}),
    ("flatten", ("@A",), {}),
    ("gather", ("@A", "@I0"), {}),
    ("get_value", ("@VAR",), {}),
    ("greater", ("@A", "@B"), {}),
    ("greater_equal", ("@A", "@B"), {}),
    ("int_shape", ("@VAR",), {}),
    ("l2_normalize", ("@A",), {"axis": 1}),
    ("less", ("@A", "@B"), {}),
    ("less_equal", ("@A", "@B"), {}),
    ("log", ("@P",), {}),
    ("max", ("@A",), {"axis": 1}),
    ("maximum", ("@A", "@B"), {}),
    ("mean", ("@A",), {"axis": 0}),
    ("min", ("@A",), {"axis": 1}),
    ("minimum", ("@A", "@B"), {}),
    ("ndim", ("@Q",), {}),
    ("not_equal", ("@A", "@B"), {}),
    ("one_hot", ("@I", 4), {}),
    ("ones", ((2, 3),), {}),
    ("ones_like", ("@A",), {}),
    ("permute_dimensions", ("@Q", (2, 0, 1)), {}),
    ("pow", ("@P", 2.5), {}),
    ("prod", ("@U",), {"axis": 1}),
    ("relu", ("@A",), {}),
    ("repeat_elements", ("@A", 2, 1), {}),
    ("reshape", ("@A", (4, 3)), {}),
    ("round", ("@A",), {}),
    ("shape", ("@A",), {}),
    ("sigmoid", ("@A",), {}),
    ("sign", ("@A",), {}),
    ("sin", ("@A",), {}),
    ("softmax", ("@A",), {}),
    ("softplus", ("@A",), {}),
    ("softsign", ("@A",), {}),
    ("sparse_categorical_crossentropy", ("@I", "@SOFT"), {}),
    ("sqrt", ("@P",), {}),
    ("square", ("@A",), {}),
    ("squeeze", ("@C", 1), {}),
    ("stack", (["@A", "@B"],), {}),
    ("std", ("@A",), {"axis": 1}),
    ("stop_gradient", ("@A",), {}),
    ("sum", ("@A",), {"axis": 1}),
    ("switch", ("@M", "@A", "@B"), {}),
    ("tanh", ("@A",), {}),
    ("tile", ("@A", (2, 1)), {}),
    ("transpose", ("@A",), {}),
    ("var", ("@A",), {"axis": 0}),
    ("zeros", ((2, 3),), {}),
    ("zeros_like", ("@A",), {}),
)

_SPECIAL = (
    "abs", "cos", "exp", "log", "round", "sigmoid", "sign", "sin", "softplus", "softsign", "sqrt", "square",
    "tanh", "relu",
)  # fmt: skip
_EDGE_CALLS = {
    "all": (("@M",), {"keepdims": True}),
    "any": (("@E",), {}),
    "arange": ((5,), {"dtype": "float32"}),
    "argmax": (("@A",), {"axis": 0}),
    "argmin": (("@Q",), {"axis": 1}),
    "batch_dot": (("@Q", "@Q"), {"axes": 2}),
    "batch_flatten": (("@E",), {}),
    "binary_crossentropy": (("@BIN", "@LOGITS"), {"from_logits": True}),
    "cast": (("@N", "bool"), {}),
    "categorical_crossentropy": (("@ONEHOT", "@LOGITS"), {"from_logits": True}),
    "clip": (("@A", None, 1.0), {}),
    "concatenate": ((["@A", "@E"],), {"axis": 0}),
    "constant": ((2.5,), {"shape": (2, 3)}),
    "count_params": (("@VAR",), {}),
    "cumprod": (("@U",), {}),
    "cumsum": (("@A",), {}),
    "dot": (("@Q", "@R1"), {}),
    "dtype": (("@VAR",), {}),
    "elu": (("@N",), {}),
    "equal": (("@C", "@V"), {}),
    "eval": (("@VAR",), {}),
    "expand_dims": (("@A",), {}),
    "eye": ((2,), {"dtype": "float64"}),
    "flatten": (("@Q",), {}),
    "gather": (("@A", "@IG"), {}),
    "get_value": (("@VAR",), {}),
    "greater": (("@C", "@V"), {}),
    "greater_equal": (("@C", "@V"), {}),
    "int_shape": (("@A",), {}),
    "l2_normalize": (("@A",), {}),
    "less": (("@C", "@V"), {}),
    "less_equal": (("@C", "@V"), {}),
    "max": (("@A",), {"keepdims": True}),
    "maximum": (("@C", "@V"), {}),
    "mean": (("@A",), {}),
    "min": (("@N",), {}),
    "minimum": (("@C", "@V"), {}),
    "ndim": (("@VAR",), {}),
    "not_equal": (("@C", "@V"), {}),
    "one_hot": (("@I2D", 4), {}),
    "ones": ((0,), {}),
    "ones_like": (("@E",), {}),
    "permute_dimensions": (("@A", (1, 0)), {}),
    "pow": (("@A", 2), {}),
    "prod": (("@U",), {"keepdims": True}),
    "relu": (("@A",), {"alpha": 0.1, "max_value": 1.0, "threshold": 0.2}),
    "repeat_elements": (("@Q", 3, 0), {}),
    "reshape": (("@A", (-1,)), {}),
    "shape": (("@E",), {}),
    "softmax": (("@Q",), {"axis": 1}),
    "sparse_categorical_crossentropy": (("@I", "@LOGITS"), {"from_logits": True}),
    "squeeze": (("@Q1",), {"axis": 0}),
    "stack": ((["@A", "@B"],), {"axis": -1}),
    "std": (("@A",), {"keepdims": True}),
    "stop_gradient": (("@E",), {}),
    "sum": (("@A",), {"axis": (0, 1)}),
    "switch": (("@T", "@A", "@B"), {}),
    "tile": (("@V", 3), {}),
    "transpose": (("@Q",), {}),
    "var": (("@A",), {}),
    "zeros": (((2, 2),), {"dtype": "int32"}),
    "zeros_like": (("@A",), {"dtype": "int32"}),
}


def _edge(name: str, args: tuple, kwargs: dict) -> tuple:
    if name in _EDGE_CALLS:
        return (name, *_EDGE_CALLS[name])
    assert name in _SPECIAL, f"{name} has no edge case"
    return (name, ("@N",), kwargs)


K_OPS_EDGE = tuple(_edge(*row) for row in K_OPS)


K_NAMES = (
    "tf_keras:backend.abs",
    "tf_keras:backend.all",
    "tf_keras:backend.any",
    "tf_keras:backend.arange",
    "tf_keras:backend.argmax",
    "tf_keras:backend.argmin",
    "tf_keras:backend.batch_dot",
    "tf_keras:backend.batch_flatten",
    "tf_keras:backend.binary_crossentropy",
    "tf_keras:backend.cast",
    "tf_keras:backend.categorical_crossentropy",
    "tf_keras:backend.clip",
    "tf_keras:backend.concatenate",
    "tf_keras:backend.constant",
    "tf_keras:backend.cos",
    "tf_keras:backend.count_params",
    "tf_keras:backend.cumprod",
    "tf_keras:backend.cumsum",
    "tf_keras:backend.dot",
    "tf_keras:backend.dtype",
    "tf_keras:backend.elu",
    "tf_keras:backend.equal",
    "tf_keras:backend.eval",
    "tf_keras:backend.exp",
    "tf_keras:backend.expand_dims",
    "tf_keras:backend.eye",
    "tf_keras:backend.flatten",
    "tf_keras:backend.gather",
    "tf_keras:backend.get_value",
    "tf_keras:backend.greater",
    "tf_keras:backend.greater_equal",
    "tf_keras:backend.int_shape",
    "tf_keras:backend.l2_normalize",
    "tf_keras:backend.less",
    "tf_keras:backend.less_equal",
    "tf_keras:backend.log",
    "tf_keras:backend.max",
    "tf_keras:backend.maximum",
    "tf_keras:backend.mean",
    "tf_keras:backend.min",
    "tf_keras:backend.minimum",
    "tf_keras:backend.ndim",
    "tf_keras:backend.not_equal",
    "tf_keras:backend.one_hot",
    "tf_keras:backend.ones",
    "tf_keras:backend.ones_like",
    "tf_keras:backend.permute_dimensions",
    "tf_keras:backend.pow",
    "tf_keras:backend.prod",
    "tf_keras:backend.relu",
    "tf_keras:backend.repeat_elements",
    "tf_keras:backend.reshape",
    "tf_keras:backend.round",
    "tf_keras:backend.shape",
    "tf_keras:backend.sigmoid",
    "tf_keras:backend.sign",
    "tf_keras:backend.sin",
    "tf_keras:backend.softmax",
    "tf_keras:backend.softplus",
    "tf_keras:backend.softsign",
    "tf_keras:backend.sparse_categorical_crossentropy",
    "tf_keras:backend.sqrt",
    "tf_keras:backend.square",
    "tf_keras:backend.squeeze",
    "tf_keras:backend.stack",
    "tf_keras:backend.std",
    "tf_keras:backend.stop_gradient",
    "tf_keras:backend.sum",
    "tf_keras:backend.switch",
    "tf_keras:backend.tanh",
    "tf_keras:backend.tile",
    "tf_keras:backend.transpose",
    "tf_keras:backend.var",
    "tf_keras:backend.zeros",
    "tf_keras:backend.zeros_like",
)


def _call(tf, name: str, args: tuple, kwargs: dict):
    inputs = _inputs()
    fn = getattr(tf.keras.backend, name)
    out = fn(*[_arg(tf, a, inputs) for a in args], **{k: _arg(tf, v, inputs) for k, v in kwargs.items()})
    if name == "shape":  # a tensor in both (Keras 2's K.shape is tf.shape)
        return [int(d) for d in np.asarray(out)]
    return out


@pytest.mark.parametrize(("name", "args", "kwargs"), K_OPS, ids=[r[0] for r in K_OPS])
@same_as_tf(*K_NAMES, dialects=KERAS2, rtol=1e-5, atol=1e-6)
def test_backend_function(tf, name, args, kwargs):
    return _call(tf, name, args, kwargs)


@pytest.mark.parametrize(("name", "args", "kwargs"), K_OPS_EDGE, ids=[r[0] for r in K_OPS_EDGE])
@same_as_tf(*K_NAMES, edge=True, dialects=KERAS2, rtol=1e-5, atol=1e-6)
def test_backend_function_edge(tf, name, args, kwargs):
    return _call(tf, name, args, kwargs)


def test_the_tables_cover_the_listed_names():
    assert [r[0] for r in K_OPS] == [n.rsplit(".", 1)[1] for n in K_NAMES]


# the settings functions both dialects share
SETTINGS_NAMES = (
    "keras:backend.epsilon",
    "keras:backend.set_epsilon",
    "keras:backend.floatx",
    "keras:backend.set_floatx",
    "keras:backend.image_data_format",
    "keras:backend.set_image_data_format",
    "keras:backend.clear_session",
    "keras:backend.is_keras_tensor",
    "keras:backend.get_uid",
)
BOTH = ("keras", "tf_keras")


@same_as_tf(*SETTINGS_NAMES, dialects=BOTH)
def test_backend_settings(tf):
    k = tf.keras.backend
    eps, fx, fmt = k.epsilon(), k.floatx(), k.image_data_format()
    k.set_epsilon(1e-5)
    k.set_floatx("float64")
    k.set_image_data_format("channels_first")
    changed = (k.epsilon(), k.floatx(), k.image_data_format())
    k.set_epsilon(eps)
    k.set_floatx(fx)
    k.set_image_data_format(fmt)
    k.clear_session()
    uids = [k.get_uid("conformance_prefix"), k.get_uid("conformance_prefix")]
    symbolic = (k.is_keras_tensor(tf.keras.Input((2,))), k.is_keras_tensor(tf.constant([1.0])))
    return eps, fx, fmt, changed, uids[1] - uids[0], symbolic


@pytest.mark.parametrize(("setter", "value"), [("set_floatx", "float8"), ("set_image_data_format", "nchw")])
@same_as_tf(*SETTINGS_NAMES, edge=True, dialects=BOTH)
def test_backend_settings_refuse_bad_values(tf, setter, value):
    k = tf.keras.backend
    before = (k.epsilon(), k.floatx(), k.image_data_format())
    try:
        getattr(k, setter)(value)
    finally:
        k.set_epsilon(before[0])
        k.set_floatx(before[1])
        k.set_image_data_format(before[2])
