"""``keras.utils.model_to_dot`` and ``plot_model`` on unison against Keras 3.15 (and Keras 2, tf_keras) on
TF 2.21: the pydot graph's nodes (their labels, in order), edges and attributes, and the files
``plot_model`` writes. Node names are object ids on both sides, so nodes are compared by position."""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf

NAMES = ("keras:utils.model_to_dot", "keras:utils.plot_model")


def _functional(tf):
    k = tf.keras
    x = k.Input((3,), name="inp")
    h = k.layers.Dense(4, activation="relu", name="hidden")(x)
    s = k.layers.Dense(4, name="skip")(x)
    o = k.layers.Dense(2, name="out")(k.layers.Add(name="add")([h, s]))
    return k.Model(x, o, name="net")


def _sequential(tf):
    k = tf.keras
    model = k.Sequential([k.Input((5,)), k.layers.Dense(3, name="d1"), k.layers.Dense(1, name="d2")], name="seq")
    model.layers[1].trainable = False
    return model


def _graph(dot):
    """(labels in order, edges as position pairs, graph attributes) of a pydot graph."""
    nodes = [n for n in dot.get_nodes() if n.get_name() not in ("node", "edge", "graph")]
    where = {n.get_name(): i for i, n in enumerate(nodes)}
    edges = sorted((where[e.get_source()], where[e.get_destination()]) for e in dot.get_edges())
    attrs = {k: str(dot.get(k)) for k in ("rankdir", "concentrate", "dpi", "splines")}
    return [n.get("label") for n in nodes], edges, attrs


@pytest.mark.parametrize("build", ["functional", "sequential"])
@same_as_tf(*NAMES)
def test_model_to_dot_nodes_edges_and_labels(tf, build):
    model = _functional(tf) if build == "functional" else _sequential(tf)
    plain = _graph(tf.keras.utils.model_to_dot(model))
    full = tf.keras.utils.model_to_dot(
        model, show_shapes=True, show_dtype=True, show_layer_activations=True, show_trainable=True, rankdir="LR"
    )
    return plain, _graph(full)


@same_as_tf(*NAMES, edge=True)
def test_plot_model_files_and_bad_arguments(tf):
    import os
    import tempfile

    model = _functional(tf)
    out = []
    with tempfile.TemporaryDirectory() as folder:
        # (not .svg or .dot: Keras 3 writes them, then fails to show them as an IPython image)
        for name in ("m.png", "m.pdf"):
            path = os.path.join(folder, name)
            tf.keras.utils.plot_model(model, to_file=path, show_shapes=True, show_layer_names=False)
            with open(path, "rb") as f:
                out.append((os.path.getsize(path) > 100, f.read(4)))
        for bad in ({"layer_range": ["inp", "out"]}, {"no_such_option": 1}):
            try:
                tf.keras.utils.plot_model(model, to_file=os.path.join(folder, "bad.png"), **bad)
                out.append("accepted")
            except ValueError as exc:
                out.append(type(exc).__name__)
        no_names = _graph(tf.keras.utils.model_to_dot(_sequential(tf), show_layer_names=False, dpi=96))
    return out, no_names
