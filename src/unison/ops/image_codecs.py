"""``tf.io``'s image decoders (JPEG, PNG, GIF, BMP, WebP), returning torch ``uint8`` tensors.

JPEGs go through libjpeg-turbo's own API when ``simplejpeg`` is installed (the ``tf`` extra):
it releases the GIL while decoding (a thread-parallel ``map`` decodes on every core), decodes
about twice as fast as Pillow (2.8 vs 5.4 ms for a 400x400 JPEG, one thread) and takes TF's
DCT choice, so every ``dct_method`` decodes to TF's bytes exactly (the default is libjpeg's fast
integer DCT, ``"INTEGER_ACCURATE"`` its accurate one). Everything else (``ratio`` > 1, CMYK
JPEGs, the other formats, or no simplejpeg) is Pillow's: it wraps the same libjpeg-turbo,
libpng and zlib TF links; Pillow exposes only the accurate DCT, so without simplejpeg the
default JPEG decode may differ from TF's by a few levels (at most 7 of 255 measured).
torchvision.io was measured too, but its wheels for this torch are CUDA builds that do not
load on a CPU-only torch. The lossless formats (PNG, BMP, GIF) decode to TF's bytes exactly.
As in TF, ``decode_jpeg``, ``decode_png`` and ``decode_gif`` read any of the formats (``decode_bmp``
only BMP), ``decode_image`` picks the decoder from the first bytes, and a WebP comes back with a
frames axis (``[frames, h, w, c]``) from every decoder but ``decode_image(expand_animations=False)``.
BMP is read by a small reader of TF's own rules (an 8-bit file's palette indices are gray values).

Example:
    >>> import unison as tf
    >>> image = tf.cast(tf.reshape(tf.range(12), [2, 2, 3]), tf.uint8)
    >>> tf.io.decode_png(tf.io.encode_png(image)).tolist() == image.tolist()
    True
"""

from __future__ import annotations

import functools
import io
import struct
from typing import Any

import numpy as np
import torch

from unison.errors import InvalidArgumentError
from unison.ops.dtypes import as_dtype, to_tensor
from unison.ops.image_core import convert_image_dtype
from unison.ops.string_tensor import StringTensor

__all__ = [
    "decode_and_crop_jpeg",
    "decode_bmp",
    "decode_gif",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "decode_webp",
    "extract_jpeg_shape",
    "is_jpeg",
]


def _pil() -> Any:
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow ships with the `tf` extra
        raise ImportError(
            "tf.io's image codecs need Pillow: pip install pillow (or pip install 'unison[tf]')."
        ) from exc
    return Image


def _scalar_bytes(contents: Any, op: str) -> bytes:
    """The bytes of a scalar string (``bytes``, ``str`` or a 0-d string tensor)."""
    if isinstance(contents, (bytes, bytearray)):
        return bytes(contents)
    if isinstance(contents, str):
        return contents.encode("latin-1")
    array = np.asarray(contents, dtype=object)
    if array.ndim != 0:
        raise InvalidArgumentError(
            None,
            None,
            f"{op}: `contents` must be scalar but got shape{list(array.shape)}. Decode one image per call "
            "(Dataset.map over the files).",
        )
    item = array.item()
    if isinstance(item, str):
        return item.encode("latin-1")
    if not isinstance(item, (bytes, bytearray)):
        raise TypeError(
            f"{op}: `contents` must be a tf.string scalar (the file's bytes). Received {type(item).__name__}."
        )
    return bytes(item)


def _source(contents: Any) -> str:
    """`` (the contents of 'path')`` when ``contents`` came from ``tf.io.read_file(path)``: every
    error of a decoder then names the file (a pipeline over thousands of files needs it)."""
    path = getattr(contents, "source_file", None)
    return f" (the contents of {path!r})" if path else ""


def _scalar_string(data: bytes) -> StringTensor:
    out = np.empty((), dtype=object)
    out[()] = data
    return StringTensor(out)


_SIGNATURES = ((b"\xff\xd8\xff", "JPEG"), (b"\x89PNG\r\n\x1a\n", "PNG"), (b"GIF8", "GIF"), (b"BM", "BMP"))


def _is_webp(data: bytes) -> bool:
    return data[:4] == b"RIFF" and data[8:12] == b"WEBP"


def _format(data: bytes, op: str) -> str:
    for magic, kind in _SIGNATURES:
        if data.startswith(magic):
            return kind
    if _is_webp(data):
        return "WEBP"
    raise InvalidArgumentError(
        None,
        None,
        f"{op}: Unknown image file format. One of JPEG, PNG, GIF, BMP, WebP required (the first bytes are "
        f"{data[:4]!r}). Check that `contents` is an image file's bytes (tf.io.read_file(path)).",
    )


def _check_channels(channels: Any, allowed: tuple[int, ...], op: str) -> int:
    value = 0 if channels is None else int(channels)
    if value not in allowed:
        raise InvalidArgumentError(
            None,
            None,
            f"{op}: `channels` must be {', '.join(map(str, allowed[:-1]))} or {allowed[-1]} but got {value}.",
        )
    return value


_MODE_FOR_CHANNELS = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _native_channels(image: Any) -> int:
    mode = image.mode
    if mode in ("1", "L", "I", "I;16", "I;16B", "F"):
        return 1
    if mode in ("LA", "PA"):
        return 2
    if mode == "RGBA" or (mode == "P" and "transparency" in image.info and image.format == "PNG"):
        return 4  # a PNG palette with a tRNS chunk decodes to RGBA in libpng, as in TF
    return 3


def _open(data: bytes, op: str) -> Any:
    try:
        image = _pil().open(io.BytesIO(data))
        image.load()
    except Exception as exc:
        raise InvalidArgumentError(None, None, f"{op}: the image data is invalid or truncated ({exc}).") from None
    return image


def _to_array(image: Any, channels: int) -> np.ndarray:
    wanted = channels or _native_channels(image)
    if image.mode in ("I;16", "I;16B", "I") and wanted == 1:
        return np.array(image).astype(np.uint16)[..., None]  # 16-bit grayscale keeps its 16 bits
    if image.mode == "LA" and wanted == 1:
        return np.array(image)[..., :1]
    if wanted == 1 and image.mode not in ("L", "1"):
        return _libpng_gray(np.array(image.convert("RGB")))
    converted = image if image.mode == _MODE_FOR_CHANNELS[wanted] else image.convert(_MODE_FOR_CHANNELS[wanted])
    array = np.array(converted)  # a writable copy (torch.from_numpy needs one)
    return array[..., None] if array.ndim == 2 else array


def _libpng_gray(rgb: np.ndarray) -> np.ndarray:
    """libpng's RGB -> gray as TF asks for it (0.299, 0.587 in 1/32768 fixed point, truncated)."""
    r, g, b = (rgb[..., i].astype(np.int32) for i in range(3))
    gray = (9797 * r + 19234 * g + 3737 * b) >> 15
    return np.where((r == g) & (r == b), r, gray).astype(np.uint8)[..., None]


def _frames(image: Any, channels: int) -> np.ndarray:
    """Every frame of an animation, composited as TF's GIF decoder does, ``[frames, h, w, 3]``."""
    frames = []
    for index in range(getattr(image, "n_frames", 1)):
        image.seek(index)
        frames.append(_to_array(image, channels or 3))
    return np.stack(frames)


def _webp_frames(image: Any, channels: int, op: str) -> np.ndarray:
    """A WebP's frames ``[frames, h, w, c]``: ``c`` is the file's (3, or 4 with alpha); TF refuses others."""
    native = 4 if image.mode == "RGBA" or image.info.get("transparency") is not None else 3
    if channels not in (0, native):
        raise InvalidArgumentError(
            None,
            None,
            f"{op}: Number of channels requested does not match input: the WebP has {native} channels, "
            f"channels={channels} was asked for (pass 0 or {native}).",
        )
    return _frames(image, native)


@functools.lru_cache(maxsize=1)
def _simplejpeg() -> Any:
    """The ``simplejpeg`` module (libjpeg-turbo, the GIL released while decoding), or None."""
    try:
        import simplejpeg
    except ImportError:
        return None
    return simplejpeg


_TURBO_COLORSPACES = {0: None, 1: "GRAY", 3: "RGB", 4: "RGBX"}  # RGBX: libjpeg-turbo fills X with 255


def _decode_jpeg_turbo(data: bytes, channels: int, dct_method: str, ratio: int, op: str) -> np.ndarray | None:
    """A JPEG through libjpeg-turbo's own API: TF's arithmetic (fast integer DCT by default, the
    accurate one for "INTEGER_ACCURATE", fancy upsampling) and twice Pillow's speed; None where
    simplejpeg is missing or the case is Pillow's (DCT scaling, CMYK files)."""
    turbo = _simplejpeg()
    if turbo is None or ratio != 1:
        return None
    try:
        _, _, colorspace, _ = turbo.decode_jpeg_header(data)
    except ValueError:
        return None  # Pillow reads the header again and names the problem
    if colorspace not in ("YCbCr", "Gray", "RGB"):
        return None
    target = _TURBO_COLORSPACES[channels] or ("GRAY" if colorspace == "Gray" else "RGB")
    try:
        return turbo.decode_jpeg(data, colorspace=target, fastdct=dct_method in ("", "INTEGER_FAST"))
    except ValueError as exc:
        raise InvalidArgumentError(None, None, f"{op}: the image data is invalid or truncated ({exc}).") from None


def _decode(data: bytes, channels: int, op: str, *, animated: bool, dct_method: str = "", ratio: int = 1) -> np.ndarray:
    kind = _format(data, op)
    if kind == "JPEG":
        fast = _decode_jpeg_turbo(data, channels, dct_method, ratio, op)
        if fast is not None:
            return fast[None] if animated else fast
    if kind == "BMP":
        array = _bmp_pixels(data, channels, op)
        return array[None] if animated else array
    image = _pil().open(io.BytesIO(data)) if kind == "JPEG" and (ratio != 1 or channels == 1) else None
    if image is not None:
        # libjpeg's DCT scaling, as TF's `ratio`: the decoder produces ceil(size / ratio) pixels;
        # one channel is libjpeg's own grayscale output (the luma plane), as TF asks for it.
        image.draft("L" if channels == 1 else image.mode, (-(-image.size[0] // ratio), -(-image.size[1] // ratio)))
        try:
            image.load()
        except Exception as exc:
            raise InvalidArgumentError(None, None, f"{op}: the image data is invalid or truncated ({exc}).") from None
    else:
        image = _open(data, op)
    if kind == "GIF":
        frames = _frames(image, channels)
        return frames if animated else frames[0]
    if kind == "WEBP":
        return _webp_frames(image, channels, op) if animated else _webp_frames(image, channels, op)[0]
    array = _to_array(image, channels)
    return array[None] if animated else array


def decode_jpeg(
    contents: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
    name: str | None = None,
) -> torch.Tensor:
    """``tf.io.decode_jpeg``: a JPEG's bytes as a ``uint8`` ``[height, width, channels]`` tensor.

    ``channels`` is 0 (the file's), 1 (grayscale), 3 (RGB) or 4; ``ratio`` (1, 2, 4, 8) shrinks
    the image while decoding. Exact to TF with ``dct_method="INTEGER_ACCURATE"`` (see the module
    notes for the default).
    """
    op = "tf.io.decode_jpeg" + _source(contents)
    wanted = _check_channels(channels, (0, 1, 3, 4), op)
    if int(ratio) not in (1, 2, 4, 8):
        raise InvalidArgumentError(None, None, f"{op}: ratio must be 1, 2, 4, or 8, got {ratio}.")
    data = _scalar_bytes(contents, op)
    webp = _is_webp(data)  # TF's decoders hand a WebP back with its frames axis
    array = _decode(data, wanted, op, animated=webp, dct_method=dct_method, ratio=int(ratio))
    return torch.from_numpy(np.require(array, requirements=("C", "W")))  # copies only a view or a read-only array


def decode_png(contents: Any, channels: int = 0, dtype: Any = torch.uint8, name: str | None = None) -> torch.Tensor:
    """``tf.io.decode_png``: a PNG's bytes as a ``[height, width, channels]`` tensor (``uint8`` or ``uint16``).

    An 8-bit image read as ``uint16`` is scaled by 257 (``255 -> 65535``), as in TF.
    """
    op = "tf.io.decode_png" + _source(contents)
    wanted = _check_channels(channels, (0, 1, 3, 4), op)
    target = _image_dtype(dtype)
    if target not in (torch.uint8, torch.uint16):
        raise InvalidArgumentError(None, None, f"{op}: dtype must be tf.uint8 or tf.uint16. Received: dtype={dtype!r}")
    data = _scalar_bytes(contents, op)
    array = _decode(data, wanted, op, animated=_is_webp(data))  # TF hands a WebP back with its frames axis
    return _as_image_dtype(array, target)


def _image_dtype(dtype: Any) -> Any:
    # unison's dtype table stops at uint8; the codecs also speak uint16, as TF's do.
    if dtype is torch.uint16 or getattr(dtype, "name", dtype) == "uint16":
        return torch.uint16
    return as_dtype(dtype)


def _as_image_dtype(array: np.ndarray, target: Any) -> torch.Tensor:
    if target == torch.uint16:
        wide = array.astype(np.uint16) * np.uint16(257) if array.dtype == np.uint8 else array.astype(np.uint16)
        return torch.from_numpy(wide.astype(np.int32)).to(torch.uint16)
    if array.dtype == np.uint16:
        array = (array >> 8).astype(np.uint8)
    return torch.from_numpy(np.ascontiguousarray(array))


def decode_gif(contents: Any, name: str | None = None) -> torch.Tensor:
    """``tf.io.decode_gif``: every frame of a GIF as a ``uint8`` ``[frames, height, width, 3]`` tensor."""
    op = "tf.io.decode_gif" + _source(contents)
    return torch.from_numpy(np.ascontiguousarray(_decode(_scalar_bytes(contents, op), 3, op, animated=True)))


def decode_webp(contents: Any, channels: int = 0, dtype: Any = torch.uint8, name: str | None = None) -> torch.Tensor:
    """``tf.io.decode_webp``: a WebP (still or animated) as ``[frames, height, width, channels]``.

    ``channels`` is 0 or the file's own (3, or 4 with alpha), as TF requires; ``dtype`` is ``uint8``
    (the only one TF's op takes).
    """
    op = "tf.io.decode_webp" + _source(contents)
    wanted = _check_channels(channels, (0, 3, 4), op)
    if _image_dtype(dtype) != torch.uint8:
        raise InvalidArgumentError(None, None, f"{op}: dtype must be tf.uint8. Received: dtype={dtype!r}")
    data = _scalar_bytes(contents, op)
    if not _is_webp(data):
        raise InvalidArgumentError(None, None, f"{op}: the contents are not a WebP file (RIFF....WEBP expected).")
    return torch.from_numpy(np.ascontiguousarray(_webp_frames(_open(data, op), wanted, op)))


def decode_bmp(contents: Any, channels: int = 0, name: str | None = None) -> torch.Tensor:
    """``tf.io.decode_bmp``: a BMP's bytes as a ``uint8`` ``[height, width, channels]`` tensor (0, 3 or 4 channels)."""
    op = "tf.io.decode_bmp" + _source(contents)
    wanted = _check_channels(channels, (0, 3, 4), op)
    data = _scalar_bytes(contents, op)
    kind = _format(data, op)
    if kind != "BMP":
        raise InvalidArgumentError(
            None,
            None,
            f"{op}: Trying to decode {kind} format using DecodeBmp op. Use `decode_{kind.lower()}` or "
            "`decode_image` instead.",
        )
    return torch.from_numpy(_bmp_pixels(data, wanted, op))


def _bmp_pixels(data: bytes, channels: int, op: str) -> np.ndarray:
    """An uncompressed BMP read as TF's decoder reads it: ``bits / 8`` channels (BGR(A) -> RGB(A)),
    an 8-bit file's palette indices as gray values, rows bottom-up unless the height is negative."""
    try:
        (offset,) = struct.unpack_from("<I", data, 10)
        width, height, _, bits, compression = struct.unpack_from("<iiHHI", data, 18)
    except struct.error:
        raise InvalidArgumentError(None, None, f"{op}: the BMP header is truncated ({len(data)} bytes).") from None
    depth = bits // 8
    if compression not in (0, 3) or depth not in (1, 3, 4) or width <= 0 or height == 0:
        raise InvalidArgumentError(
            None,
            None,
            f"{op}: unsupported BMP: {bits} bits per pixel, compression {compression}, size "
            f"{width}x{height} (uncompressed 8-, 24- and 32-bit BMPs are read, as in TF).",
        )
    rows, stride = abs(height), (width * depth + 3) // 4 * 4
    if offset + rows * stride > len(data):
        raise InvalidArgumentError(None, None, f"{op}: the BMP's pixel data is truncated.")
    raw = np.frombuffer(data, np.uint8, rows * stride, offset).reshape(rows, stride)[:, : width * depth]
    pixels = raw.reshape(rows, width, depth)
    if height > 0:
        pixels = pixels[::-1]
    if depth >= 3:
        pixels = pixels[..., [2, 1, 0, 3][:depth]]
    wanted = channels or depth
    if wanted == depth:
        return np.ascontiguousarray(pixels)
    if depth == 1:
        gray = np.repeat(pixels, 3, axis=-1)
        return np.concatenate([gray, np.full_like(pixels, 255)], -1) if wanted == 4 else gray
    if wanted == 4:
        return np.concatenate([pixels, np.full_like(pixels[..., :1], 255)], -1)
    return np.ascontiguousarray(pixels[..., :3])


def decode_image(
    contents: Any,
    channels: int | None = None,
    dtype: Any = torch.uint8,
    name: str | None = None,
    expand_animations: bool = True,
) -> torch.Tensor:
    """``tf.io.decode_image``: any of JPEG, PNG, GIF and BMP, by the file's first bytes.

    Returns ``[height, width, channels]``, or ``[frames, height, width, 3]`` for a GIF when
    ``expand_animations`` (its first frame otherwise). A float ``dtype`` gives values in
    ``[0, 1]`` (``tf.image.convert_image_dtype``).
    """
    op = "tf.io.decode_image" + _source(contents)
    wanted = _check_channels(channels, (0, 1, 3, 4), op)
    target = _image_dtype(dtype)
    data = _scalar_bytes(contents, op)
    kind = _format(data, op)
    array = _decode(data, wanted, op, animated=expand_animations and kind in ("GIF", "WEBP"))
    if target in (torch.uint8, torch.uint16):
        return _as_image_dtype(array, target)
    return convert_image_dtype(torch.from_numpy(np.ascontiguousarray(array)), target)


def decode_and_crop_jpeg(
    contents: Any,
    crop_window: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
    name: str | None = None,
) -> torch.Tensor:
    """``tf.io.decode_and_crop_jpeg``: :func:`decode_jpeg` then the ``[y, x, height, width]`` window."""
    op = "tf.io.decode_and_crop_jpeg" + _source(contents)
    image = decode_jpeg(
        contents, channels, ratio, fancy_upscaling, try_recover_truncated, acceptable_fraction, dct_method
    )
    y, x, h, w = (int(v) for v in to_tensor(crop_window).reshape(-1).tolist())
    if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > image.shape[0] or x + w > image.shape[1]:
        raise InvalidArgumentError(
            None,
            None,
            f"{op}: Invalid JPEG data or crop window: crop_window=[{y}, {x}, {h}, {w}] must lie inside "
            f"the {image.shape[0]}x{image.shape[1]} image.",
        )
    return image[y : y + h, x : x + w].clone()


def extract_jpeg_shape(contents: Any, output_type: Any = torch.int32, name: str | None = None) -> torch.Tensor:
    """``tf.io.extract_jpeg_shape``: ``[height, width, channels]`` of a JPEG, read from its header only."""
    op = "tf.io.extract_jpeg_shape" + _source(contents)
    data = _scalar_bytes(contents, op)
    if not data.startswith(b"\xff\xd8\xff"):
        raise InvalidArgumentError(None, None, f"{op}: Invalid JPEG data, size {len(data)}.")
    image = _open(data, op)  # Pillow reads the header here; pixels are decoded on load only
    channels = {"L": 1, "CMYK": 4}.get(image.mode, 3)
    return torch.tensor([image.size[1], image.size[0], channels], dtype=as_dtype(output_type))


def is_jpeg(contents: Any, name: str | None = None) -> torch.Tensor:
    """``tf.io.is_jpeg``: whether the bytes start with JPEG's signature ``FF D8 FF``."""
    return torch.tensor(_scalar_bytes(contents, "tf.io.is_jpeg").startswith(b"\xff\xd8\xff"))
