"""Verified weights files (issue 12, item 5): checksum on save, every load error names the file,
what the model expected and what was found."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import unison as tf
from unison.keras.saving.weights_file import WeightsFileError


def _model(width: int = 16) -> tf.keras.Sequential:
    torch.manual_seed(0)
    model = tf.keras.Sequential(
        [tf.keras.Input(shape=(6,)), tf.keras.layers.Dense(width, activation="relu"), tf.keras.layers.Dense(2)]
    )
    return model


@pytest.fixture
def saved(tmp_path) -> tuple[str, tf.keras.Sequential]:
    model = _model()
    path = str(tmp_path / "w.weights.pt")
    model.save_weights(path)
    return path, model


def test_roundtrip_and_header(saved) -> None:
    path, model = saved
    with open(path, "rb") as fh:
        assert fh.read(16) == b"UNISON-VERIFIED\n"
    other = _model()
    other.set_weights([w * 0 for w in other.get_weights()])
    other.load_weights(path)
    for a, b in zip(model.get_weights(), other.get_weights()):
        assert np.array_equal(a, b)


def test_flipped_data_bytes_are_refused_naming_the_file(saved) -> None:
    path, _ = saved
    with open(path, "rb") as fh:
        data = bytearray(fh.read())
    for i in range(32):  # 32 bytes inside the tensor data (the end of the file)
        data[-200 - i] ^= 0x5A
    with open(path, "wb") as fh:
        fh.write(data)
    other = _model()
    before = other.get_weights()
    with pytest.raises(WeightsFileError, match="checksum") as info:
        other.load_weights(path)
    assert path in str(info.value) and "Expected the weights of this model" in str(info.value)
    for a, b in zip(before, other.get_weights()):
        assert np.array_equal(a, b)  # nothing was loaded


def test_empty_file_names_file_and_expected_structure(tmp_path) -> None:
    path = tmp_path / "empty.pt"
    path.write_bytes(b"")
    with pytest.raises(WeightsFileError) as info:
        _model().load_weights(path)
    text = str(info.value)
    assert str(path) in text and "empty (0 bytes)" in text
    assert "4 tensors: stack.0.kernel: (6, 16), stack.0.bias: (16,)" in text


def test_truncated_file_names_file(saved) -> None:
    path, _ = saved
    with open(path, "r+b") as fh:
        fh.truncate(os.path.getsize(path) // 2)
    with pytest.raises(WeightsFileError, match="truncated or changed on disk") as info:
        _model().load_weights(path)
    assert path in str(info.value)


def test_wrong_shape_names_file_expected_and_found(saved) -> None:
    path, _ = saved
    with pytest.raises(WeightsFileError) as info:
        _model(width=8).load_weights(path)
    text = str(info.value)
    assert path in text and "shapes differ" in text
    assert "file (6, 16) vs model (6, 8)" in text


def test_file_of_other_model_lists_missing_and_unexpected(saved, tmp_path) -> None:
    path, _ = saved
    torch.manual_seed(0)
    other = tf.keras.Sequential([tf.keras.Input(shape=(6,)), tf.keras.layers.Dense(2)])
    with pytest.raises(WeightsFileError, match="missing here: .*not in this model: ") as info:
        other.load_weights(path)
    assert path in str(info.value)


def test_not_a_weights_file_names_file(tmp_path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    with pytest.raises(WeightsFileError, match=r"a file of unknown format.*not a Keras file") as info:
        _model().load_weights(path)
    assert str(path) in str(info.value)


def test_previous_format_without_checksum_still_loads(tmp_path) -> None:
    model = _model()
    path = tmp_path / "old.weights.pt"
    torch.save({"format": "unison.weights/1", "state_dict": model.state_dict()}, path)
    other = _model(16)
    other.set_weights([w * 0 for w in other.get_weights()])
    other.load_weights(path)
    for a, b in zip(model.get_weights(), other.get_weights()):
        assert np.array_equal(a, b)


def test_model_save_file_is_verified_and_loads_as_weights(tmp_path) -> None:
    model = _model()
    model.compile(optimizer="adam", loss="mse")
    path = tmp_path / "m.pt"
    model.save(path)
    other = _model()
    other.set_weights([w * 0 for w in other.get_weights()])
    other.load_weights(path)
    for a, b in zip(model.get_weights(), other.get_weights()):
        assert np.array_equal(a, b)
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".tmp-")]


def _write_old_layout(path: str, state: dict, extra: dict | None = None) -> None:
    """A file as unison wrote it before Dense/Conv2D kept Keras's layout: torch-layout kernels, no
    "layout" entry (written by hand here: today's writer always marks its files)."""
    import io

    from unison.core.atomic_io import write_verified
    from unison.keras.saving.weights_file import WEIGHTS_KIND

    old = {}
    for key, value in state.items():
        if key.endswith("kernel") and value.dim() == 2:
            value = value.t().contiguous()  # (in, units) -> torch's (units, in)
        elif key.endswith("kernel") and value.dim() == 4:
            value = value.permute(3, 2, 0, 1).contiguous()  # (kh, kw, in, filters) -> (filters, in, kh, kw)
        old[key] = value
    buffer = io.BytesIO()
    torch.save({"format": WEIGHTS_KIND, "state_dict": old, **(extra or {})}, buffer)
    write_verified(path, buffer.getvalue(), kind=WEIGHTS_KIND)


def test_files_of_the_torch_kernel_layout_load_into_keras_layout_kernels(tmp_path) -> None:
    torch.manual_seed(0)
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(8, 8, 3)),
            tf.keras.layers.Conv2D(4, 3),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(5),
        ]
    )
    assert tuple(model.layers[0].kernel.shape) == (3, 3, 3, 4) and tuple(model.layers[2].kernel.shape) == (144, 5)
    path = str(tmp_path / "old.weights.pt")
    _write_old_layout(path, {k: v.detach().clone() for k, v in model.state_dict().items()})
    x = torch.randn(2, 8, 8, 3)
    want = model(x).detach()
    for p in model.parameters():
        torch.nn.init.zeros_(p)
    model.load_weights(path)
    torch.testing.assert_close(model(x).detach(), want)
    # a file of today's writer is never turned around, even where a transpose would fit
    square = tf.keras.Sequential([tf.keras.Input(shape=(3,)), tf.keras.layers.Dense(3)])
    kernel = square.layers[0].kernel.detach().clone()
    square.save_weights(str(tmp_path / "new.weights.pt"))
    square.load_weights(str(tmp_path / "new.weights.pt"))
    assert torch.equal(square.layers[0].kernel.detach(), kernel)


def test_old_optimizer_slots_turn_into_keras_layout_and_new_ones_stay(tmp_path) -> None:
    model = _model()
    model.compile(tf.keras.optimizers.Adam(0.01), loss="mse")
    model.fit(np.ones((8, 6), "float32"), np.ones((8, 2), "float32"), epochs=1, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    from unison.keras.saving.weights_file import optimizer_slots_from_torch_layout

    opt = model.optimizer.torch_optimizer
    kernel = model.layers[0].kernel
    want = opt.state[kernel]["exp_avg"].clone()
    opt.state[kernel]["exp_avg"] = want.t().contiguous()  # as an old file's slot would load
    optimizer_slots_from_torch_layout({"format": "old"}, opt)
    assert torch.equal(opt.state[kernel]["exp_avg"], want)
    opt.state[kernel]["exp_avg"] = want.t().contiguous()
    optimizer_slots_from_torch_layout({"layout": "keras-kernels"}, opt)  # today's files: untouched
    assert opt.state[kernel]["exp_avg"].shape == want.t().shape
    again = tf.keras.models.load_model(path)
    assert again.layers[0].kernel.shape == (6, 16)
