"""keras.utils.plot_model / model_to_dot through pydot and Graphviz, and the errors that name what
to install when either is missing."""

from __future__ import annotations

import builtins
import shutil

import pytest

from unison import keras

pydot = pytest.importorskip("pydot", reason="pydot is in the test extra; install it with pip install pydot")


def _functional() -> keras.Model:
    inputs = keras.Input((8,), name="features")
    a = keras.layers.Dense(4, activation="relu", name="left")(inputs)
    b = keras.layers.Dense(4, name="right")(inputs)
    merged = keras.layers.Concatenate(name="join")([a, b])
    return keras.Model(inputs, keras.layers.Dense(1, name="head")(merged))


def _labels(dot) -> list[str]:
    return [n.get_label().strip('"') for n in dot.get_nodes() if n.get_name() not in ("node", "edge", "graph")]


def test_functional_graph_has_a_node_per_layer_and_an_edge_per_tensor() -> None:
    dot = keras.utils.model_to_dot(_functional(), show_shapes=True, show_layer_activations=True)
    labels = _labels(dot)
    assert len(labels) == 5
    # Keras 3's HTML-table labels
    assert any("<b>features</b> (InputLayer)" in label for label in labels)
    join = next(label for label in labels if "<b>join</b> (Concatenate)" in label)
    assert "Input shape: <b>[(None, 4), (None, 4)]</b>" in join and "Output shape: <b>(None, 8)</b>" in join
    assert any("Activation: <b>relu</b>" in label for label in labels)
    edges = {(e.get_source(), e.get_destination()) for e in dot.get_edges()}
    assert len(edges) == 5  # input->left, input->right, left->join, right->join, join->head


def test_sequential_is_a_chain_and_plot_model_writes_the_file(tmp_path) -> None:
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="d1"), keras.layers.Dense(1, name="d2")])
    dot = keras.utils.model_to_dot(model, show_shapes=True, rankdir="LR")
    assert len(_labels(dot)) == 2 and len(dot.get_edges()) == 1  # the layers, no input node (as Keras)
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed (apt-get install graphviz)")
    keras.utils.plot_model(model, to_file=str(tmp_path / "model.png"), show_shapes=True)
    assert (tmp_path / "model.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keras.utils.plot_model(model, to_file=str(tmp_path / "model.svg"))
    assert b"<svg" in (tmp_path / "model.svg").read_bytes()


def test_missing_graphviz_names_the_debian_package(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    with pytest.raises(ImportError, match="apt-get install graphviz"):
        keras.utils.plot_model(model, to_file=str(tmp_path / "m.png"))


def test_missing_pydot_names_the_package(monkeypatch) -> None:
    real_import = builtins.__import__

    def no_pydot(name, *args, **kwargs):
        if name == "pydot":
            raise ImportError("No module named 'pydot'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pydot)
    with pytest.raises(ImportError, match=r"pip install pydot"):
        keras.utils.model_to_dot(keras.Sequential([keras.layers.Dense(1)]))


def test_bad_rankdir() -> None:
    with pytest.raises(ValueError, match="rankdir must be one of"):
        keras.utils.model_to_dot(_functional(), rankdir="UP")
