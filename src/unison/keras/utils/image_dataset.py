"""``keras.utils.image_dataset_from_directory``: a folder of images (one subfolder per class) as a
``tf.data`` dataset of ``(images, labels)`` batches.

Images are decoded with Pillow (``pip install pillow``), converted to ``color_mode``, resized to
``image_size`` like Keras (``crop_to_aspect_ratio`` / ``pad_to_aspect_ratio`` keep the aspect
ratio) and returned as float32 values 0-255, shaped ``(batch, height, width, channels)``
(``channels_first``: ``(batch, channels, height, width)``). The dataset has ``class_names`` and
``file_paths``.

Example:
    >>> import os, tempfile
    >>> import numpy as np
    >>> from unison.keras.preprocessing.image import save_img
    >>> root = tempfile.mkdtemp()
    >>> for cls in ("cat", "dog"):
    ...     os.makedirs(os.path.join(root, cls))
    ...     save_img(os.path.join(root, cls, "a.png"), np.zeros((5, 4, 3)), scale=False)
    >>> ds = image_dataset_from_directory(root, image_size=(8, 8), batch_size=2, shuffle=False)
    Found 2 files belonging to 2 classes.
    >>> images, labels = next(iter(ds))
    >>> ds.class_names, tuple(images.shape), labels.tolist()
    (['cat', 'dog'], (2, 8, 8, 3), [0, 1])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from unison.data import AUTOTUNE, Dataset
from unison.keras.utils import dataset_utils as du

ALLOWLIST_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_CHANNELS = {"grayscale": 1, "rgb": 3, "rgba": 4}
_INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area")


def image_dataset_from_directory(
    directory: str,
    labels: Any = "inferred",
    label_mode: str | None = "int",
    class_names: Sequence[str] | None = None,
    color_mode: str = "rgb",
    batch_size: int | None = 32,
    image_size: tuple[int, int] = (256, 256),
    shuffle: bool = True,
    seed: int | None = None,
    validation_split: float | None = None,
    subset: str | None = None,
    interpolation: str = "bilinear",
    follow_links: bool = False,
    crop_to_aspect_ratio: bool = False,
    pad_to_aspect_ratio: bool = False,
    data_format: str | None = None,
    verbose: bool = True,
) -> Any:
    """A ``tf.data.Dataset`` of the images under ``directory`` (Keras 3's arguments and rules).

    Args:
        directory: with ``labels="inferred"`` one subfolder per class (sorted names = class ids),
            searched recursively; otherwise the images anywhere below it, in sorted path order.
        labels: ``"inferred"``, ``None`` (images only) or a list of int labels, one per file in
            sorted path order.
        label_mode: ``"int"`` (int32 ids), ``"categorical"`` (one-hot float32), ``"binary"``
            (float32 ``(batch, 1)``, exactly 2 classes) or ``None`` (images only).
        class_names: the order of the class subfolders (``labels="inferred"`` only).
        color_mode: ``"grayscale"``, ``"rgb"`` or ``"rgba"`` (1, 3 or 4 channels).
        batch_size: images per batch; ``None`` gives single images.
        image_size: ``(height, width)`` every image is resized to.
        shuffle: shuffle the files (and the batches' order with a buffer of ``8 * batch_size``).
        seed: shuffling seed; required with ``validation_split`` and ``shuffle``.
        validation_split: fraction of the files kept for validation (the last ones after shuffling).
        subset: ``"training"``, ``"validation"`` or ``"both"`` (returns ``[train, validation]``).
        interpolation: ``"bilinear"``, ``"nearest"``, ``"bicubic"`` or ``"area"``.
        follow_links: follow symbolic links to folders.
        crop_to_aspect_ratio: centre-crop to the target aspect ratio before resizing.
        pad_to_aspect_ratio: pad (with zeros) to the target aspect ratio before resizing.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        verbose: print how many files were found.

    Returns:
        A ``Dataset`` of ``(images, labels)`` (or ``images``) with ``class_names`` and
        ``file_paths``; a list ``[train, validation]`` for ``subset="both"``.
    """
    from unison.keras.ops._config import standardize_data_format
    from unison.keras.utils.image_utils import _pil

    du.check_label_mode(labels, label_mode, class_names)
    if color_mode not in _CHANNELS:
        raise ValueError(f'`color_mode` must be one of "rgb", "rgba", "grayscale". Received: color_mode={color_mode!r}')
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"`interpolation` must be one of {list(_INTERPOLATIONS)}. Received: {interpolation!r}")
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError(
            "Only one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio` can be True; set the other to False."
        )
    size = tuple(image_size)
    if len(size) != 2 or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in size):
        raise ValueError(f"`image_size` must be (height, width), two positive ints. Received: {image_size!r}")
    du.check_batch_size(batch_size)
    data_format = standardize_data_format(data_format)
    du.check_validation_split_arg(validation_split, subset, shuffle, seed)
    _pil()  # a clear error now when Pillow is missing, not inside the first batch
    if labels is None or label_mode is None:
        labels, label_mode = None, None  # Keras: the images only, every file below directory
    if seed is None:
        seed = int(np.random.randint(1_000_000))
    paths, label_ids, names = du.index_directory(
        directory, labels, ALLOWLIST_FORMATS, class_names, shuffle, seed, follow_links, verbose
    )
    du.check_binary(label_mode, names)
    options = (color_mode, (int(size[0]), int(size[1])), interpolation, crop_to_aspect_ratio, pad_to_aspect_ratio)
    if subset == "both":
        parts = []
        for which in ("training", "validation"):
            p, y = du.training_or_validation_split(paths, label_ids, validation_split, which)
            if not p:
                raise ValueError(
                    f"No {which} images found in directory {directory}. Allowed formats: {ALLOWLIST_FORMATS}"
                )
            # Keras 3 shuffles the training part only (both parts come from the seeded shuffled file list)
            part_shuffle = shuffle and which == "training"
            parts.append(_dataset(p, y, label_mode, names, options, data_format, batch_size, part_shuffle, seed))
        return parts
    paths, label_ids = du.training_or_validation_split(paths, label_ids, validation_split, subset)
    if not paths:
        raise ValueError(f"No images found in directory {directory}. Allowed formats: {ALLOWLIST_FORMATS}")
    return _dataset(paths, label_ids, label_mode, names, options, data_format, batch_size, shuffle, seed)


def _dataset(
    paths: list[str],
    label_ids: np.ndarray | None,
    label_mode: str | None,
    class_names: list[str],
    options: tuple[Any, ...],
    data_format: str,
    batch_size: int | None,
    shuffle: bool,
    seed: int,
) -> Any:
    color_mode, size, interpolation, crop, pad = options

    def load(path: Any) -> torch.Tensor:
        image = load_image(str(np.asarray(path)), color_mode, size, interpolation, crop, pad)
        return image.permute(2, 0, 1).contiguous() if data_format == "channels_first" else image

    # Keras 3's order: the file names (and labels) are shuffled, then decoded in parallel threads
    # (the decode and resize ops release the GIL), then batched; a map right before batch has its
    # workers copy each image into its batch (unison.data.map_batch), and the shuffle buffer holds
    # names, not decoded images
    dataset = Dataset.from_tensor_slices(np.asarray(paths))
    labelled = label_mode is not None and label_ids is not None
    if label_mode is not None and label_ids is not None:
        dataset = Dataset.zip((dataset, du.labels_to_dataset(label_ids, label_mode, len(class_names))))
    if shuffle:
        dataset = dataset.shuffle(buffer_size=batch_size * 8 if batch_size is not None else 1024, seed=seed)
    if labelled:
        dataset = dataset.map(lambda path, label: (load(path), label), num_parallel_calls=AUTOTUNE)
    else:
        dataset = dataset.map(load, num_parallel_calls=AUTOTUNE)
    if batch_size is not None:
        dataset = dataset.batch(batch_size)
    dataset = dataset.prefetch(-1)
    # Keras's attributes on the returned dataset
    setattr(dataset, "class_names", class_names)  # noqa: B010
    setattr(dataset, "file_paths", list(paths))  # noqa: B010
    return dataset


def load_image(
    path: str,
    color_mode: str,
    size: tuple[int, int],
    interpolation: str = "bilinear",
    crop_to_aspect_ratio: bool = False,
    pad_to_aspect_ratio: bool = False,
) -> torch.Tensor:
    """One image file as float32 ``(height, width, channels)``, values 0-255, resized like Keras.

    Example:
        >>> import os, tempfile
        >>> from unison.keras.preprocessing.image import save_img
        >>> path = os.path.join(tempfile.mkdtemp(), "x.png")
        >>> save_img(path, np.full((2, 2, 3), 200.0), scale=False)
        >>> load_image(path, "grayscale", (4, 4)).shape
        torch.Size([4, 4, 1])
    """
    from unison.keras.utils.image_utils import _COLOR_MODES, _pil, crop_to_aspect
    from unison.ops.image import resize

    x = _decode_like_tf(path, _CHANNELS[color_mode])
    if x is None:
        try:
            with _pil().open(path) as img:
                img = img.convert(_COLOR_MODES[color_mode])  # GIF: its first frame
                array = np.asarray(img, dtype=np.float32)
        except OSError as exc:
            raise ValueError(f"Could not decode the image {path!r}: {exc}. Remove the file or fix it.") from None
        if array.ndim == 2:
            array = array[:, :, None]
        x = torch.from_numpy(np.ascontiguousarray(array))
    x = x[None]  # (1, h, w, c)
    height, width = size
    if crop_to_aspect_ratio:
        x = crop_to_aspect(x, height, width)
    elif pad_to_aspect_ratio:  # zeros around the image, evenly (Keras's pad_to_aspect_ratio)
        in_h, in_w = x.shape[1], x.shape[2]
        pad_h, pad_w = max(in_h, int(in_w * height / width)), max(in_w, int(in_h * width / height))
        top, left = (pad_h - in_h) // 2, (pad_w - in_w) // 2
        x = torch.nn.functional.pad(x, (0, 0, left, pad_w - in_w - left, top, pad_h - in_h - top))
    if (x.shape[1], x.shape[2]) != (height, width):
        # integer pixels go to the resize as they are: it reads them as float32 (without a fresh copy)
        x = resize(x, [height, width], method=interpolation)
    return x[0].to(torch.float32)


def _decode_like_tf(path: str, channels: int) -> torch.Tensor | None:
    """A JPEG or PNG as uint8 ``(h, w, channels)`` through TF's own decoder arithmetic
    (``tf.io.decode_image(channels=...)``, as Keras reads it on TensorFlow: libjpeg-turbo's
    grayscale plane, libpng's fixed-point RGB -> gray); None for other files (Pillow reads them)."""
    from unison.errors import InvalidArgumentError
    from unison.ops.image_codecs import decode_jpeg, decode_png

    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ValueError(f"Could not read the image {path!r}: {exc}. Remove the file or fix it.") from None
    if data.startswith(b"\xff\xd8\xff") and channels in (1, 3):
        decode: Callable[..., torch.Tensor] = decode_jpeg
    elif data.startswith(b"\x89PNG\r\n\x1a\n"):
        decode = decode_png
    else:
        return None
    try:
        return decode(data, channels=channels)  # uint8: float32 after the resize
    except InvalidArgumentError as exc:
        raise ValueError(f"Could not decode the image {path!r}: {exc}. Remove the file or fix it.") from None


__all__ = ["image_dataset_from_directory", "load_image"]
