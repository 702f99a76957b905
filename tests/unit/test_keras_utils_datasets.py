"""keras.utils.image_dataset_from_directory / text_dataset_from_directory: Keras's listing, split and labels."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from PIL import Image

from unison import keras

pytestmark = pytest.mark.timeout(120)

# (class, file, colour): solid colours, so a resized image keeps its exact values (PNG is lossless).
FILES = [
    ("cat", "b.png", 10),
    ("cat", "a.png", 20),
    ("cat", "sub/c.png", 30),
    ("dog", "x.jpg", 200),
    ("dog", "y.png", 90),
]


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "images"
    for cls, name, value in FILES:
        path = root / cls / name
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(np.full((6 + value % 7, 9, 3), value, np.uint8)).save(path)
    (root / "cat" / "readme.txt").write_text("not an image")
    (root / "bird").mkdir()  # an empty class folder is a class with no files
    return root


def _values(images: torch.Tensor) -> list[int]:
    return [round(float(img.mean())) for img in images]


def test_sorted_order_labels_and_counts(tmp_path: Path, capsys: Any) -> None:
    root = _folder(tmp_path)
    ds = keras.utils.image_dataset_from_directory(root, image_size=(4, 5), batch_size=3, shuffle=False)
    assert capsys.readouterr().out == "Found 5 files belonging to 3 classes.\n"
    assert ds.class_names == ["bird", "cat", "dog"]
    batches = list(ds)
    assert [tuple(x.shape) for x, _ in batches] == [(3, 4, 5, 3), (2, 4, 5, 3)]
    images = torch.cat([x for x, _ in batches])
    labels = torch.cat([y for _, y in batches])
    assert images.dtype == torch.float32 and labels.dtype == torch.int32
    assert labels.tolist() == [1, 1, 1, 2, 2]
    assert _values(images)[:3] == [20, 10, 30]  # a.png, b.png, then the subfolder's sub/c.png
    assert abs(_values(images)[3] - 200) <= 2  # JPEG is lossy
    assert [os.path.relpath(p, root) for p in ds.file_paths] == [
        "cat/a.png",
        "cat/b.png",
        "cat/sub/c.png",
        "dog/x.jpg",
        "dog/y.png",
    ]


def test_label_modes_class_names_and_color_modes(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    (root / "bird").rmdir()
    kw: dict[str, Any] = {"image_size": (3, 3), "shuffle": False, "verbose": False}
    _, y = next(iter(keras.utils.image_dataset_from_directory(root, label_mode="categorical", **kw)))
    assert y.dtype == torch.float32 and y.tolist() == [[1, 0]] * 3 + [[0, 1]] * 2
    _, y = next(iter(keras.utils.image_dataset_from_directory(root, label_mode="binary", **kw)))
    assert y.tolist() == [[0.0]] * 3 + [[1.0]] * 2
    ds = keras.utils.image_dataset_from_directory(root, class_names=["dog", "cat"], **kw)
    _, y = next(iter(ds))
    assert ds.class_names == ["dog", "cat"] and y.tolist() == [0, 0, 1, 1, 1]
    x = next(iter(keras.utils.image_dataset_from_directory(root, label_mode=None, color_mode="grayscale", **kw)))
    assert tuple(x.shape) == (5, 3, 3, 1)
    x, _ = next(iter(keras.utils.image_dataset_from_directory(root, data_format="channels_first", **kw)))
    assert tuple(x.shape) == (5, 3, 3, 3)
    x, _ = next(iter(keras.utils.image_dataset_from_directory(root, color_mode="rgba", batch_size=None, **kw)))
    assert tuple(x.shape) == (3, 3, 4) and float(x[..., 3].min()) == 255.0
    x, _ = next(iter(keras.preprocessing.image_dataset_from_directory(root, batch_size=None, **kw)))
    assert tuple(x.shape) == (3, 3, 3)


def test_bilinear_resize_matches_tf_half_pixel_resize(tmp_path: Path) -> None:
    root = tmp_path / "g" / "only"
    root.mkdir(parents=True)
    ramp = np.tile(np.arange(0, 240, 30, dtype=np.uint8)[None, :, None], (4, 1, 3))  # 4 x 8 horizontal ramp
    Image.fromarray(ramp).save(root / "r.png")
    x = next(iter(keras.utils.image_dataset_from_directory(tmp_path / "g", image_size=(2, 4), shuffle=False)))[0]
    # TF's resize (half-pixel centres, no antialias) is torch's bilinear with align_corners=False
    want = torch.nn.functional.interpolate(
        torch.from_numpy(ramp).float().permute(2, 0, 1)[None], size=(2, 4), mode="bilinear", align_corners=False
    )[0].permute(1, 2, 0)
    torch.testing.assert_close(x[0], want)
    assert x[0, 0, :, 0].tolist() == [15.0, 75.0, 135.0, 195.0]


def test_validation_split_follows_keras_shuffle_and_tail_rule(tmp_path: Path, capsys: Any) -> None:
    root = _folder(tmp_path)
    train, val = keras.utils.image_dataset_from_directory(
        root, validation_split=0.4, subset="both", seed=7, image_size=(2, 2)
    )
    out = capsys.readouterr().out
    assert "Found 5 files belonging to 3 classes.\nUsing 3 files for training.\nUsing 2 files for validation.\n" == out
    listed = sorted(str(root / c / n) for c, n, _ in FILES)  # cat/a, cat/b, cat/sub/c, dog/x, dog/y
    np.random.RandomState(7).shuffle(listed)  # Keras shuffles the file list with the seed, then cuts the tail
    assert train.file_paths == listed[:3] and val.file_paths == listed[3:]
    one = keras.utils.image_dataset_from_directory(
        root, validation_split=0.4, subset="validation", seed=7, image_size=(2, 2), verbose=False
    )
    assert one.file_paths == val.file_paths
    labels = {str(root / c / n): ["bird", "cat", "dog"].index(c) for c, n, _ in FILES}
    assert sorted(int(v) for _, y in val for v in y) == sorted(labels[p] for p in val.file_paths)


def test_shuffled_images_keep_their_labels_and_the_validation_part_keeps_its_order(tmp_path: Path) -> None:
    # Keras 3's order: (file, label) pairs shuffled, then decoded; the validation part is not reshuffled
    root = _folder(tmp_path)
    value_class = {value: ["bird", "cat", "dog"].index(c) for c, _, value in FILES}
    train, val = keras.utils.image_dataset_from_directory(
        root, validation_split=0.4, subset="both", seed=3, image_size=(2, 2), batch_size=2, verbose=False
    )

    def nearest(v: int) -> int:  # the file's value (JPEG is lossy)
        return min(value_class, key=lambda k: abs(k - v))

    for _ in range(3):  # every epoch reshuffles; each image keeps its own label
        pairs = [(v, int(label)) for x, y in train for v, label in zip(_values(x), y)]
        assert len(pairs) == 3 and all(label == value_class[nearest(v)] for v, label in pairs)
    orders = [[v for x, _ in val for v in _values(x)] for _ in range(3)]
    assert orders[0] == orders[1] == orders[2]
    in_file_order = [round(float(np.asarray(Image.open(p).convert("RGB")).mean())) for p in val.file_paths]
    assert [abs(a - b) <= 2 for a, b in zip(orders[0], in_file_order)] == [True, True]


def test_image_dataset_trains_a_model(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    ds = keras.utils.image_dataset_from_directory(root, image_size=(4, 4), batch_size=2, seed=1, verbose=False)
    model = keras.Sequential(
        [keras.Input((4, 4, 3)), keras.layers.Rescaling(1 / 255), keras.layers.Flatten(), keras.layers.Dense(3)]
    )
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(ds, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()


def test_mistakes_are_explained(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    make = keras.utils.image_dataset_from_directory
    with pytest.raises(ValueError, match="exactly 2 class_names"):
        make(root, label_mode="binary", verbose=False)
    with pytest.raises(ValueError, match="must provide a `seed`"):
        make(root, validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match="`validation_split` must be set"):
        make(root, subset="training", seed=1)
    with pytest.raises(ValueError, match="did not match the names of the subdirectories"):
        make(root, class_names=["cat", "cow"])
    with pytest.raises(ValueError, match="Only one of `crop_to_aspect_ratio`"):
        make(root, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)
    with pytest.raises(ValueError, match="does not exist"):
        make(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="No images found"):
        make(root / "bird", verbose=False)
    with pytest.raises(ValueError, match="lengths of `labels` to match"):
        make(root, labels=[0, 1], verbose=False)
    with pytest.raises(ValueError, match="label_mode"):
        make(root, label_mode="sparse")
    with pytest.raises(ValueError, match="color_mode"):
        make(root, color_mode="cmyk")


def test_explicit_labels_in_sorted_path_order(tmp_path: Path) -> None:
    root = _folder(tmp_path)
    ds = keras.utils.image_dataset_from_directory(
        root, labels=[4, 3, 2, 1, 0], image_size=(2, 2), shuffle=False, verbose=False
    )
    x, y = next(iter(ds))
    assert y.tolist() == [4, 3, 2, 1, 0] and _values(x)[0] == 20  # cat/a.png first


def test_text_dataset_bytes_labels_and_max_length(tmp_path: Path, capsys: Any) -> None:
    root = tmp_path / "texts"
    for cls, name, text in (("neg", "2.txt", "dull"), ("neg", "1.txt", "bad film"), ("pos", "1.txt", "great")):
        (root / cls).mkdir(parents=True, exist_ok=True)
        (root / cls / name).write_text(text)
    (root / "pos" / "skip.md").write_text("ignored")
    ds = keras.utils.text_dataset_from_directory(root, batch_size=2, shuffle=False, max_length=4)
    assert capsys.readouterr().out == "Found 3 files belonging to 2 classes.\n"
    batches = list(ds)
    assert [t.tolist() for t, _ in batches] == [[b"bad ", b"dull"], [b"grea"]]
    assert [y.tolist() for _, y in batches] == [[0, 0], [1]] and ds.class_names == ["neg", "pos"]
    train, val = keras.utils.text_dataset_from_directory(root, validation_split=0.34, subset="both", seed=3)
    assert len(train.file_paths) == 2 and len(val.file_paths) == 1
    assert set(train.file_paths) | set(val.file_paths) == {
        str(root / "neg/1.txt"),
        str(root / "neg/2.txt"),
        str(root / "pos/1.txt"),
    }
    vectorize = keras.layers.TextVectorization(max_tokens=10, output_mode="int", output_sequence_length=2)
    vectorize.adapt(ds.map(lambda t, y: t))
    assert tuple(np.asarray(vectorize(next(iter(ds))[0])).shape) == (2, 2)
