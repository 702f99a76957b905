"""``keras.applications.imagenet_utils``: ImageNet input preprocessing and prediction decoding.

``preprocess_input`` follows Keras's three modes: ``"caffe"`` (RGB to BGR, minus the ImageNet
channel means, no scaling: ResNet, VGG), ``"tf"`` (scaled to ``[-1, 1]``: ResNetV2, MobileNetV2,
InceptionV3, Xception) and ``"torch"`` (scaled to ``[0, 1]``, then standardised per channel:
DenseNet). As in Keras, a float NumPy array is changed in place and returned; an integer one is
first converted to float32; a tensor gives a new tensor.

``decode_predictions`` needs ImageNet's class index (``imagenet_class_index.json``, the file
Keras downloads). unison downloads nothing: it reads the file from ``path=``, from
``$UNISON_IMAGENET_CLASS_INDEX``, or from Keras's cache ``~/.keras/models/`` (``$KERAS_HOME``).
As in Keras, the index found there is read once and kept in the module global ``CLASS_INDEX``
(``{"0": [wordnet_id, name], ...}``): a program may read it, or set it to its own labels (set it
back to ``None`` to read the file again).

Example:
    >>> import numpy as np
    >>> preprocess_input(np.array([[[[255.0, 0.0, 127.5]]]]), mode="tf").tolist()
    [[[[1.0, -1.0, 0.0]]]]
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any

import numpy as np
import torch

CLASS_INDEX_FILE = "imagenet_class_index.json"
CLASS_INDEX_ENV = "UNISON_IMAGENET_CLASS_INDEX"
_MODES = ("caffe", "tf", "torch")
_CAFFE_MEAN = (103.939, 116.779, 123.68)  # BGR
_TORCH_MEAN = (0.485, 0.456, 0.406)
_TORCH_STD = (0.229, 0.224, 0.225)
# Keras's module global (keras.src.applications.imagenet_utils.CLASS_INDEX): the default index once
# read, or labels a program put there; decode_predictions without path= uses it when set
CLASS_INDEX: dict[str, list[str]] | None = None
_CLASS_INDEX: dict[str, dict[str, list[str]]] = {}  # path= file -> parsed file (read once per path)


def _check_data_format(data_format: str | None) -> str:
    if data_format is None:
        return "channels_last"
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(
            "data_format must be 'channels_last' or 'channels_first' (or None for channels_last). "
            f"Received: data_format={data_format!r}"
        )
    return data_format


def preprocess_input(x: Any, data_format: str | None = None, mode: str = "caffe") -> Any:
    """Preprocess a batch of images (or one image) as ImageNet models expect, Keras's way.

    Args:
        x: images with values in ``[0, 255]``: a NumPy array or a tensor, 3-D or 4-D.
        data_format: ``"channels_last"`` (default) or ``"channels_first"``.
        mode: ``"caffe"``, ``"tf"`` or ``"torch"`` (see the module's description).

    Returns:
        The preprocessed images (float32 unless ``x`` was another float type).

    Raises:
        ValueError: for an unknown ``mode`` or ``data_format``.

    Example:
        >>> import numpy as np
        >>> preprocess_input(np.zeros((1, 1, 1, 3)), mode="caffe").round(3).tolist()
        [[[[-103.939, -116.779, -123.68]]]]
    """
    if mode not in _MODES:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode!r}")
    data_format = _check_data_format(data_format)
    if isinstance(x, torch.Tensor):
        return _preprocess_tensor(x, data_format, mode)
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    if not issubclass(x.dtype.type, np.floating):
        x = x.astype("float32")
    elif not x.flags.writeable:
        x = x.copy()  # Keras works in place; a read-only array gets a copy instead of an error
    return _preprocess_array(x, data_format, mode)


def _channel_view(shape_len: int, data_format: str) -> tuple[int, ...]:
    """The shape a 3-value per-channel constant takes to broadcast over the images."""
    if data_format == "channels_last":
        return (1,) * (shape_len - 1) + (3,)
    return (3, 1, 1) if shape_len == 3 else (1, 3) + (1,) * (shape_len - 2)


def _constants(mode: str) -> tuple[tuple[float, ...], tuple[float, ...] | None]:
    return (_TORCH_MEAN, _TORCH_STD) if mode == "torch" else (_CAFFE_MEAN, None)


def _preprocess_array(x: np.ndarray, data_format: str, mode: str) -> np.ndarray:
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    if mode == "torch":
        x /= 255.0
    else:  # caffe: RGB -> BGR on the channel axis
        axis = -1 if data_format == "channels_last" else (0 if x.ndim == 3 else 1)
        x = np.flip(x, axis=axis)
    mean, std = _constants(mode)
    view = _channel_view(x.ndim, data_format)
    x -= np.asarray(mean, dtype=x.dtype).reshape(view)
    if std is not None:
        x /= np.asarray(std, dtype=x.dtype).reshape(view)
    return x


def _preprocess_tensor(x: torch.Tensor, data_format: str, mode: str) -> torch.Tensor:
    if not x.is_floating_point():
        x = x.to(torch.float32)
    if mode == "tf":
        return x / 127.5 - 1.0
    if mode == "torch":
        x = x / 255.0
    else:
        axis = -1 if data_format == "channels_last" else (0 if x.dim() == 3 else 1)
        x = x.flip(axis)
    mean, std = _constants(mode)
    view = _channel_view(x.dim(), data_format)
    x = x - torch.tensor(mean, dtype=x.dtype, device=x.device).reshape(view)
    if std is not None:
        x = x / torch.tensor(std, dtype=x.dtype, device=x.device).reshape(view)
    return x


def class_index_candidates(path: str | os.PathLike[str] | None = None) -> list[pathlib.Path]:
    """Where ``decode_predictions`` looks for ``imagenet_class_index.json``, in order."""
    if path is not None:
        return [pathlib.Path(path)]
    found = []
    env = os.environ.get(CLASS_INDEX_ENV)
    if env:
        found.append(pathlib.Path(env))
    keras_home = os.environ.get("KERAS_HOME")
    if keras_home:
        found.append(pathlib.Path(keras_home) / "models" / CLASS_INDEX_FILE)
    found.append(pathlib.Path.home() / ".keras" / "models" / CLASS_INDEX_FILE)
    return found


def load_class_index(path: str | os.PathLike[str] | None = None) -> dict[str, list[str]]:
    """ImageNet's class index (``{"0": ["n01440764", "tench"], ...}``) from a local file.

    Without ``path``, the module's ``CLASS_INDEX`` when set; else the first file found (which then
    becomes ``CLASS_INDEX``, as Keras keeps it).

    Raises:
        FileNotFoundError: when no candidate file exists (the message lists where unison looked).
        ValueError: when the file is not a 1000-class index.
    """
    global CLASS_INDEX
    if path is None and CLASS_INDEX is not None:
        return CLASS_INDEX
    candidates = class_index_candidates(path)
    for candidate in candidates:
        if candidate.is_file():
            stat = candidate.stat()
            key = f"{candidate.resolve()}:{stat.st_mtime_ns}:{stat.st_size}"  # a rewritten file is read again
            if key not in _CLASS_INDEX:
                try:
                    index = json.loads(candidate.read_text(encoding="utf-8"))
                except (OSError, ValueError) as exc:
                    raise ValueError(f"{candidate} is not a readable ImageNet class index (JSON): {exc}") from exc
                if not isinstance(index, dict) or any(str(i) not in index for i in range(1000)):
                    raise ValueError(
                        f"{candidate} is not ImageNet's class index: expected a JSON object with keys "
                        '"0".."999", each [wordnet_id, name] (the imagenet_class_index.json Keras uses).'
                    )
                _CLASS_INDEX[key] = index
            if path is None:
                CLASS_INDEX = _CLASS_INDEX[key]
            return _CLASS_INDEX[key]
    looked = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(
        f"decode_predictions needs ImageNet's class index ({CLASS_INDEX_FILE}) and unison downloads nothing. "
        f"Looked in: {looked}. Copy the file Keras uses (it is at "
        "https://storage.googleapis.com/download.tensorflow.org/data/imagenet_class_index.json, and in "
        "~/.keras/models/ on any machine where Keras ran decode_predictions) to ~/.keras/models/, "
        f"or set ${CLASS_INDEX_ENV} to its path, or pass path=."
    )


def decode_predictions(
    preds: Any, top: int = 5, path: str | os.PathLike[str] | None = None
) -> list[list[tuple[Any, ...]]]:
    """The ``top`` ImageNet classes of each prediction: ``(wordnet_id, name, score)`` tuples.

    Args:
        preds: predictions of shape ``(samples, 1000)`` (an array or a tensor).
        top: how many classes per sample, best first.
        path: the class index file (default: the module's ``CLASS_INDEX`` once read or set, else
            ``$UNISON_IMAGENET_CLASS_INDEX``, then Keras's cache ``~/.keras/models/imagenet_class_index.json``).

    Raises:
        ValueError: when ``preds`` is not of shape ``(samples, 1000)``.
        FileNotFoundError: when the class index is not on this machine.

    Example:
        >>> import numpy as np
        >>> from unison.keras.applications import imagenet_utils as utils
        >>> saved, utils.CLASS_INDEX = utils.CLASS_INDEX, {str(i): [f"n{i:08d}", f"c{i}"] for i in range(1000)}
        >>> preds = np.zeros((1, 1000), "float32")
        >>> preds[0, 7] = 0.9
        >>> utils.decode_predictions(preds, top=1)[0][0][:2]
        ('n00000007', 'c7')
        >>> utils.CLASS_INDEX = saved
    """
    if isinstance(preds, torch.Tensor):
        preds = preds.detach().cpu().numpy()
    preds = np.asarray(preds)
    if preds.ndim != 2 or preds.shape[1] != 1000:
        raise ValueError(
            "`decode_predictions` expects a batch of predictions (i.e. a 2D array of shape (samples, 1000)). "
            f"Received array with shape: {preds.shape}"
        )
    index = load_class_index(path)
    results = []
    for pred in preds:
        best = pred.argsort()[-top:][::-1]
        row = [(*index[str(i)], pred[i]) for i in best]
        row.sort(key=lambda item: item[2], reverse=True)
        results.append(row)
    return results


def obtain_input_shape(
    input_shape: Any,
    default_size: int,
    min_size: int,
    require_flatten: bool,
    weights: Any = None,
) -> tuple[int | None, ...]:
    """Check ``input_shape`` (channels last) as Keras's applications do; the shape to build with."""
    if input_shape is not None:
        if not isinstance(input_shape, (tuple, list)) or len(input_shape) != 3:
            raise ValueError(f"`input_shape` must be a tuple of three integers. Received: input_shape={input_shape!r}")
        input_shape = tuple(input_shape)
    if weights != "imagenet" and input_shape is not None:
        default_shape: tuple[int | None, ...] = (default_size, default_size, input_shape[-1])
    else:
        default_shape = (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and input_shape != default_shape:
            raise ValueError(
                "When setting `include_top=True` and loading `imagenet` weights, "
                f"`input_shape` should be {default_shape}.  Received: input_shape={input_shape}"
            )
        return default_shape
    if input_shape:
        if input_shape[-1] != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; Received `input_shape={input_shape}`")
        if (input_shape[0] is not None and input_shape[0] < min_size) or (
            input_shape[1] is not None and input_shape[1] < min_size
        ):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: input_shape={input_shape}")
    else:
        input_shape = default_shape if require_flatten else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError(
            f"If `include_top` is True, you should specify a static `input_shape`. Received: input_shape={input_shape}"
        )
    return tuple(input_shape)


def correct_pad(inputs: Any, kernel_size: int | tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """Zero padding before a stride-2 'valid' convolution that matches TF's 'same' (Keras's helper)."""
    size = tuple(inputs.shape[1:3])
    kernel = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    correct = (kernel[0] // 2, kernel[1] // 2)
    return ((correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1]))


__all__ = ["correct_pad", "decode_predictions", "obtain_input_shape", "preprocess_input"]
