"""Keras's own files written by unison: layout, integrity, permissions and load errors (issue 37).

The round trips against real Keras are in tests/conformance/test_keras_files_roundtrip.py; these
check the files themselves with h5py and zipfile, in this process.
"""

from __future__ import annotations

import json
import os
import pickle
import zipfile
from collections.abc import Iterator
from typing import Any

import h5py
import numpy as np
import pytest
import torch

import unison as tf
from unison import keras
from unison.errors import CorruptModelFileError, UnsafeModelFileError, WeightsFileError

pytestmark = pytest.mark.timeout(120)


def _model(units: int = 3) -> Any:
    model = keras.Sequential(
        [
            keras.Input((6, 6, 2)),
            keras.layers.Conv2D(4, 3, activation="relu"),
            keras.layers.Flatten(),
            keras.layers.Dense(units, activation="softmax"),
        ]
    )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(np.random.rand(8, 6, 6, 2).astype("float32"), np.arange(8) % units, epochs=1, verbose=0)
    return model


def _functional() -> Any:
    a, b = keras.Input((4,), name="a"), keras.Input((3,), name="b")
    x = keras.layers.Concatenate()([keras.layers.Dense(5)(a), b])
    return keras.Model([a, b], keras.layers.Dense(2)(x))


@pytest.fixture(scope="module")
def model() -> Any:
    return _model()


# --- layout ---------------------------------------------------------------------------------------
def test_keras_file_is_keras3_zip_with_config_metadata_and_weights(model: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "m.keras")
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        assert archive.namelist() == ["metadata.json", "config.json", "model.weights.h5"]
        config = json.loads(archive.read("config.json"))
        metadata = json.loads(archive.read("metadata.json"))
        weights = archive.read("model.weights.h5")
    assert {"module", "class_name", "config", "registered_name", "build_config", "compile_config"} <= set(config)
    assert config["class_name"] == "Sequential" and config["module"] == "keras"
    layers = config["config"]["layers"]
    assert [entry["class_name"] for entry in layers] == ["InputLayer", "Conv2D", "Flatten", "Dense"]
    assert layers[0]["config"]["batch_shape"] == [None, 6, 6, 2]
    assert config["compile_config"]["optimizer"]["class_name"] == "Adam"
    assert metadata["keras_version"].startswith("3.")
    assert set(metadata["unison"]["sha256"]) == {"config.json", "model.weights.h5"}
    path_h5 = str(tmp_path / "inner.h5")
    with open(path_h5, "wb") as fh:
        fh.write(weights)
    with h5py.File(path_h5, "r") as root:
        assert root["layers/conv2d/vars/0"].shape == (3, 3, 2, 4)  # Keras's kernel layout
        assert root["layers/dense/vars/0"].shape == (64, 3)
        # Adam as Keras 3 stores it: iterations, learning rate, then (m, v) per trainable weight
        assert len(root["optimizer/vars"]) == 2 + 2 * 4
        assert int(np.asarray(root["optimizer/vars/0"])) == 1


def test_h5_model_file_is_keras2_layout(model: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "m.h5")
    model.save(path)
    with h5py.File(path, "r") as root:
        config = json.loads(root.attrs["model_config"])
        assert config["class_name"] == "Sequential"
        group = root["model_weights"]
        names = [n.decode() for n in group.attrs["layer_names"]]
        assert names == ["conv2d", "flatten", "dense"] or names[-1].startswith("dense")
        dense = names[-1]
        weight_names = [n.decode() for n in group[dense].attrs["weight_names"]]
        assert weight_names == [f"{dense}/kernel", f"{dense}/bias"]
        assert group[dense][weight_names[0]].shape == (64, 3)
        assert "training_config" in root.attrs


def test_weights_h5_files_have_keras3_and_keras2_layouts(model: Any, tmp_path: Any) -> None:
    model.save_weights(str(tmp_path / "w.weights.h5"))
    model.save_weights(str(tmp_path / "w.h5"))
    with h5py.File(tmp_path / "w.weights.h5", "r") as root:
        assert "layers" in root and root["layers/conv2d/vars/1"].shape == (4,)
    with h5py.File(tmp_path / "w.h5", "r") as root:
        assert "layer_names" in root.attrs


@pytest.mark.parametrize("name", ["m.keras", "m.h5"])
def test_models_round_trip_with_architecture_and_optimizer(model: Any, tmp_path: Any, name: str) -> None:
    path = str(tmp_path / name)
    model.save(path)
    again = keras.models.load_model(path)
    x = np.random.rand(3, 6, 6, 2).astype("float32")
    np.testing.assert_allclose(again.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    assert type(again.optimizer).__name__ == "Adam"
    if name.endswith(".keras"):
        assert int(again.optimizer.iterations) == int(model.optimizer.iterations)


def test_functional_multi_input_round_trips(tmp_path: Any) -> None:
    model = _functional()
    path = str(tmp_path / "f.keras")
    model.save(path)
    again = keras.models.load_model(path)
    x = [np.random.rand(2, 4).astype("float32"), np.random.rand(2, 3).astype("float32")]
    np.testing.assert_allclose(again.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)


# --- integrity ------------------------------------------------------------------------------------
def _flip(path: str, offset: int) -> None:
    with open(path, "r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([byte[0] ^ 0xFF]))


def _offset_of_data(path: str, member: str) -> int:
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    return info.header_offset + 30 + len(info.filename) + len(info.extra) + info.file_size // 2


def test_flipped_byte_in_keras_weights_is_refused_by_name(model: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "m.keras")
    model.save(path)
    _flip(path, _offset_of_data(path, "model.weights.h5"))
    with pytest.raises(CorruptModelFileError, match=r"m\.keras.*damaged"):
        keras.models.load_model(path)
    with pytest.raises(CorruptModelFileError):
        _model().load_weights(path)


def test_weights_changed_inside_a_valid_zip_fail_the_checksum(model: Any, tmp_path: Any) -> None:
    path, changed = str(tmp_path / "m.keras"), str(tmp_path / "changed.keras")
    model.save(path)
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(changed, "w") as dst:
        for name in src.namelist():
            data = bytearray(src.read(name))
            if name == "model.weights.h5":
                data[len(data) // 2] ^= 0xFF  # a valid zip (its CRC recomputed), other bytes
            dst.writestr(name, bytes(data))
    with pytest.raises(CorruptModelFileError, match=r"changed\.keras.*SHA-256 of model\.weights\.h5 differs"):
        keras.models.load_model(changed)


def test_truncated_keras_file_is_refused_by_name(model: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "m.keras")
    model.save(path)
    with open(path, "rb") as fh:
        data = fh.read()
    with open(path, "wb") as fh:
        fh.write(data[: len(data) // 2])
    with pytest.raises((CorruptModelFileError, WeightsFileError), match=r"m\.keras"):
        keras.models.load_model(path)


def test_pickle_planted_in_keras_zip_is_refused_and_never_run(model: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "m.keras")
    model.save(path)
    marker = tmp_path / "ran"

    class Boom:
        def __reduce__(self) -> Any:
            return (open, (str(marker), "w"))

    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("data.pkl", pickle.dumps(Boom()))
    with pytest.raises(UnsafeModelFileError, match=r"m\.keras.*'data\.pkl'.*pickle.*never unpickles"):
        keras.models.load_model(path)
    assert not marker.exists()


def test_flipped_byte_in_weights_h5_is_refused(model: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "w.weights.h5")
    model.save_weights(path)
    with h5py.File(path, "r") as root:
        offset = root["layers/dense/vars/0"].id.get_offset()
    _flip(path, offset + 17)
    with pytest.raises(CorruptModelFileError, match=r"w\.weights\.h5.*SHA-256"):
        _model().load_weights(path)


def test_truncated_h5_is_refused_by_name(model: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "m.h5")
    model.save(path)
    with open(path, "r+b") as fh:
        fh.truncate(os.path.getsize(path) // 2)
    with pytest.raises(CorruptModelFileError, match=r"m\.h5 \(an HDF5 file.*truncated or damaged"):
        keras.models.load_model(path)


def test_file_of_another_model_is_refused(model: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "w.weights.h5")
    _model(units=5).save_weights(path)
    with pytest.raises(WeightsFileError, match=r"w\.weights\.h5"):
        model.load_weights(path)


# --- load errors ----------------------------------------------------------------------------------
def test_a_pickle_is_refused_without_torch_advice(tmp_path: Any) -> None:
    path = str(tmp_path / "model.keras")
    with open(path, "wb") as fh:
        pickle.dump({"w": 1}, fh)
    for load in (keras.models.load_model, _model().load_weights):
        with pytest.raises(UnsafeModelFileError, match=r"model\.keras.*Python pickle.*never unpickles") as info:
            load(path)
        assert "weights_only" not in str(info.value)


def test_torch_save_of_objects_is_refused_without_torch_advice(tmp_path: Any) -> None:
    path = str(tmp_path / "w.pt")
    torch.save({"state_dict": {"w": torch.ones(2)}, "extra": _Thing()}, path)
    with pytest.raises(UnsafeModelFileError, match=r"w\.pt.*torch\.save zip.*refuses") as info:
        _model().load_weights(path)
    assert "weights_only" not in str(info.value) and "arbitrary code execution" not in str(info.value)


class _Thing:
    pass


def test_a_zip_that_is_no_model_names_what_it_is(tmp_path: Any) -> None:
    path = str(tmp_path / "w.ckpt")
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "hello")
    with pytest.raises(WeightsFileError, match=r"w\.ckpt.*zip archive holding \['notes\.txt'\]") as info:
        _model().load_weights(path)
    assert "enforce fail" not in str(info.value)


def test_weights_only_h5_given_to_load_model_says_what_to_do(model: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "w.h5")
    model.save_weights(path)
    with pytest.raises(ValueError, match=r"w\.h5.*weights only.*load_weights"):
        keras.models.load_model(path)


def test_unison_checkpoint_files_still_load(model: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "ckpt")  # unison's own format: any name that is not a Keras file's
    model.save_weights(path)
    with open(path, "rb") as fh:
        assert fh.read(16) == b"UNISON-VERIFIED\n"
    other = _model()
    other.load_weights(path)
    x = np.random.rand(2, 6, 6, 2).astype("float32")
    np.testing.assert_allclose(other.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)


# --- permissions --------------------------------------------------------------------------------
@pytest.fixture(params=[0o022, 0o027])
def umask(request: Any) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def test_every_file_unison_writes_has_the_umask_mode(model: Any, tmp_path: Any, umask: int) -> None:
    expected = 0o666 & ~umask
    model.save(str(tmp_path / "m.keras"))
    model.save(str(tmp_path / "m.h5"))
    model.save_weights(str(tmp_path / "w.weights.h5"))
    model.save_weights(str(tmp_path / "w.h5"))
    model.save_weights(str(tmp_path / "own.ckpt"))
    tf.train.Checkpoint(step=tf.Variable(3)).save(str(tmp_path / "tfckpt" / "ckpt"))
    x, y = np.random.rand(8, 6, 6, 2).astype("float32"), np.arange(8) % 3
    callbacks = [
        keras.callbacks.ModelCheckpoint(str(tmp_path / "mc.h5")),
        keras.callbacks.ModelCheckpoint(str(tmp_path / "mc.weights.h5"), save_weights_only=True),
        keras.callbacks.BackupAndRestore(str(tmp_path / "backup"), delete_checkpoint=False),
    ]
    model.fit(x, y, epochs=1, verbose=0, callbacks=callbacks)
    modes = {}
    for root, _, files in os.walk(tmp_path):
        for name in files:
            full = os.path.join(root, name)
            modes[os.path.relpath(full, tmp_path)] = os.stat(full).st_mode & 0o777
    assert {"m.keras", "m.h5", "w.weights.h5", "w.h5", "own.ckpt", "mc.h5", "mc.weights.h5"} <= set(modes)
    assert any(k.startswith("tfckpt") for k in modes) and any(k.startswith("backup") for k in modes)
    wrong = {k: oct(v) for k, v in modes.items() if v != expected}
    assert not wrong, f"expected {oct(expected)}: {wrong}"


@pytest.mark.parametrize("optimizer", ["rmsprop", "adagrad", "adam"])
def test_any_optimizers_slots_resume_from_a_keras_file(tmp_path: Any, optimizer: str) -> None:
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    model.compile(optimizer=optimizer, loss="mse")
    x, y = np.random.rand(16, 4).astype("float32"), np.random.rand(16, 3).astype("float32")
    model.fit(x, y, epochs=2, batch_size=4, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    again = keras.models.load_model(path)
    assert int(again.optimizer.iterations) == int(model.optimizer.iterations) == 8
    # one more identical step on both: equal weights only if the slots came back exactly
    model.fit(x[:4], y[:4], epochs=1, batch_size=4, verbose=0, shuffle=False)
    again.fit(x[:4], y[:4], epochs=1, batch_size=4, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), again.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
