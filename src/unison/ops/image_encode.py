"""``tf.io.encode_png`` and ``tf.io.encode_jpeg`` over Pillow (libpng/zlib and libjpeg-turbo, as TF).

The bytes may differ from TF's (encoder settings such as zlib's); the pixels they decode to are
the same for PNG, and for JPEG the same quantisation tables and chroma subsampling are used.

Example:
    >>> import unison as tf
    >>> image = tf.cast(tf.reshape(tf.range(12), [2, 2, 3]), tf.uint8)
    >>> tf.io.decode_png(tf.io.encode_png(image)).tolist() == image.tolist()
    True
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import torch

from unison.errors import InternalError, InvalidArgumentError
from unison.ops.determinism import require_seed
from unison.ops.dtypes import to_tensor
from unison.ops.image_codecs import _pil, _scalar_string, decode_jpeg
from unison.ops.image_core import convert_image_dtype, stateless_generator
from unison.ops.string_tensor import StringTensor

__all__ = [
    "adjust_jpeg_quality",
    "encode_jpeg",
    "encode_png",
    "random_jpeg_quality",
    "stateless_random_jpeg_quality",
]


def _image_for_encoding(image: Any, op: str, dtypes: tuple[torch.dtype, ...], channels: tuple[int, ...]) -> np.ndarray:
    t = to_tensor(image)
    if t.dtype not in dtypes:
        allowed = ", ".join(str(d).replace("torch.", "") for d in dtypes)
        raise InvalidArgumentError(
            None,
            None,
            f"{op}: the image dtype must be one of {allowed}. Received {t.dtype}; convert with "
            "tf.image.convert_image_dtype(image, tf.uint8).",
        )
    if t.dim() != 3 or t.shape[-1] not in channels:
        raise InvalidArgumentError(
            None,
            None,
            f"{op}: image must be [height, width, channels] with {' or '.join(map(str, channels))} channels, "
            f"got {list(t.shape)}.",
        )
    if t.shape[0] == 0 or t.shape[1] == 0:
        raise InternalError(None, None, f"{op}: encoding failed: the image {list(t.shape)} is empty.")
    return t.detach().cpu().to(torch.int32).numpy().astype(np.uint16 if t.dtype == torch.uint16 else np.uint8)


def encode_png(image: Any, compression: int = -1, name: str | None = None) -> Any:
    """``tf.io.encode_png``: a ``uint8``/``uint16`` ``[height, width, 1-4]`` image as PNG bytes (a scalar string).

    A batch ``[..., height, width, channels]`` gives one PNG per image. The bytes may differ from
    TF's (zlib's settings); the pixels they decode to are the same.
    """
    op = "tf.io.encode_png"
    t = to_tensor(image)
    if t.dim() < 3:
        raise InvalidArgumentError(None, None, f"{op}: images must be at least rank 3, got shape {list(t.shape)}.")
    if t.dim() > 3:
        flat = t.reshape(-1, *t.shape[-3:])
        out = np.empty(flat.shape[0], dtype=object)
        for index in range(flat.shape[0]):
            out[index] = encode_png(flat[index], compression).item()
        return StringTensor(out.reshape(tuple(t.shape[:-3])))
    array = _image_for_encoding(t, op, (torch.uint8, torch.uint16), (1, 2, 3, 4))
    level = 6 if int(compression) == -1 else int(compression)
    buffer = io.BytesIO()
    if array.dtype == np.uint16:
        if array.shape[-1] != 1:
            raise InvalidArgumentError(None, None, f"{op}: unison encodes uint16 PNGs with 1 channel only (Pillow).")
        _pil().fromarray(array[..., 0].astype(np.uint16), mode="I;16").save(buffer, "PNG", compress_level=level)
    else:
        _pil().fromarray(array[..., 0] if array.shape[-1] == 1 else array).save(buffer, "PNG", compress_level=level)
    return _scalar_string(buffer.getvalue())


def encode_jpeg(
    image: Any,
    format: str = "",
    quality: int = 95,
    progressive: bool = False,
    optimize_size: bool = False,
    chroma_downsampling: bool = True,
    density_unit: str = "in",
    x_density: int = 300,
    y_density: int = 300,
    xmp_metadata: str = "",
    name: str | None = None,
) -> Any:
    """``tf.io.encode_jpeg``: a ``uint8`` ``[height, width, 1 or 3]`` image as JPEG bytes (libjpeg-turbo, as TF)."""
    op = "tf.io.encode_jpeg"
    array = _image_for_encoding(image, op, (torch.uint8,), (1, 3))
    if format not in ("", "grayscale", "rgb"):
        raise InvalidArgumentError(None, None, f"{op}: format must be '', 'grayscale' or 'rgb'. Received {format!r}.")
    pil = _pil().fromarray(array[..., 0] if array.shape[-1] == 1 else array)
    if format == "grayscale":
        pil = pil.convert("L")
    elif format == "rgb":
        pil = pil.convert("RGB")
    if not 0 <= int(quality) <= 100:
        raise InvalidArgumentError(None, None, f"{op}: quality must be in [0, 100]. Received {quality}.")
    buffer = io.BytesIO()
    options: dict[str, Any] = {
        "quality": int(quality),
        "progressive": bool(progressive),
        "optimize": bool(optimize_size),
        "subsampling": 2 if chroma_downsampling else 0,
    }
    if density_unit == "in":
        options["dpi"] = (int(x_density), int(y_density))
    if xmp_metadata:
        options["xmp"] = xmp_metadata.encode()
    pil.save(buffer, "JPEG", **options)
    return _scalar_string(buffer.getvalue())


def adjust_jpeg_quality(image: Any, jpeg_quality: Any, dct_method: str = "", name: str | None = None) -> torch.Tensor:
    """``tf.image.adjust_jpeg_quality``: the image after a JPEG round trip at ``jpeg_quality`` (0-100).

    As in TF: converted to ``uint8`` (saturating), encoded, decoded with ``dct_method`` and
    converted back to the input's dtype.
    """
    t = to_tensor(image)
    quality = int(to_tensor(jpeg_quality))
    if not 0 <= quality <= 100:
        raise InvalidArgumentError(
            None, None, f"tf.image.adjust_jpeg_quality: jpeg_quality must be in [0, 100]. Received {quality}."
        )
    channels = int(t.shape[-1]) if t.dim() else 0
    as_uint8 = convert_image_dtype(t, torch.uint8, saturate=True)
    decoded = decode_jpeg(encode_jpeg(as_uint8, quality=quality), channels=channels, dct_method=dct_method)
    return convert_image_dtype(decoded, t.dtype, saturate=True)


def _quality_range(low: int, high: int, op: str) -> None:
    if not 0 <= int(low) < int(high) <= 100:
        raise ValueError(
            f"tf.image.{op}: need 0 <= min_jpeg_quality < max_jpeg_quality <= 100. Received min_jpeg_quality={low}, "
            f"max_jpeg_quality={high}."
        )


def random_jpeg_quality(
    image: Any, min_jpeg_quality: int, max_jpeg_quality: int, seed: int | None = None
) -> torch.Tensor:
    """``tf.image.random_jpeg_quality``: :func:`adjust_jpeg_quality` at a quality uniform in ``[min, max)``."""
    _quality_range(min_jpeg_quality, max_jpeg_quality, "random_jpeg_quality")
    require_seed(seed)
    quality = int(torch.randint(int(min_jpeg_quality), int(max_jpeg_quality), ()))
    return adjust_jpeg_quality(image, quality)


def stateless_random_jpeg_quality(image: Any, min_jpeg_quality: int, max_jpeg_quality: int, seed: Any) -> torch.Tensor:
    """``tf.image.stateless_random_jpeg_quality``: :func:`adjust_jpeg_quality` at a quality the ``seed`` determines."""
    op = "stateless_random_jpeg_quality"
    _quality_range(min_jpeg_quality, max_jpeg_quality, op)
    generator = stateless_generator(seed, f"tf.image.{op}")
    quality = int(torch.randint(int(min_jpeg_quality), int(max_jpeg_quality), (), generator=generator))
    return adjust_jpeg_quality(image, quality)
