"""Bilinear ``tf.image.resize`` of CPU images through OpenCV, when it is installed.

Why: in an image-file pipeline (read -> decode -> resize -> batch) the resize was a quarter of
the CPU an image costs. torch's ``upsample_bilinear2d`` on a channels-last 3-channel image
vectorises over the channels, 3 lanes of 8; OpenCV's ``INTER_LINEAR`` kernel vectorises along
the row. A decoded photo (375x500x3, float32) to 224x224, one thread: 0.30 ms in torch, 0.05 ms
in OpenCV (the float copy before either, 0.05 ms, is the same).

Same semantics: both compute TF 2's half-pixel-centre bilinear (``in = (out + 0.5) * scale - 0.5``,
clamped at the edges, no antialiasing). The arithmetic differs in the last bits (OpenCV's
coordinates are computed in double, TF's in float32): on [0, 1] pixels the largest difference
from TF is ~5e-5 on 600-pixel sides (torch's: ~3e-5), ~1e-7 on small images.

OpenCV parallelises one resize over its own thread pool; a pipeline's worker, whose intra-op
threads are bounded to 1 (``unison.data.intraop``), asks for a serial resize instead. OpenCV's
thread count is process-wide, so it is set to 1 while any such call runs and put back after the
last (a concurrent OpenCV call elsewhere runs serially meanwhile; nothing else changes).

Example:
    >>> import torch
    >>> out = bilinear(torch.zeros(8, 6, 3), (4, 3))
    >>> out is None or tuple(out.shape) == (4, 3, 3)
    True
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

# Images: 1-4 channels. OpenCV keeps a channel count in a Mat's type (at most 128 in OpenCV 5, 512
# in 4), and torch's channels-last kernel vectorises well over many channels anyway
_MAX_CHANNELS = 4
_SIDE_LIMIT = 1 << 15


@functools.lru_cache(maxsize=1)
def _cv2() -> Any:
    try:
        import cv2
    except Exception:  # not installed, or an OpenCV build that cannot load here: torch's kernel does it
        return None
    return cv2


# Integer pixels are converted to float32 into a buffer of the calling thread's, kept between
# calls (see image_resize._as_float_input for why: a fresh 2 MB copy per photo is mostly page faults)
_SCRATCH_MAX = 8 * 1024 * 1024
_SCRATCH_DTYPES = (torch.uint8, torch.int8, torch.uint16, torch.int16, torch.int32)
_scratch = threading.local()


def _float_copy(x: np.ndarray) -> np.ndarray:
    """``x`` as float32 in this thread's scratch buffer (valid until this thread's next call)."""
    buffer = getattr(_scratch, "buffer", None)
    if buffer is None or buffer.size < x.size:
        buffer = np.empty(min(max(x.size + x.size // 4, 1 << 16), _SCRATCH_MAX), dtype=np.float32)
        _scratch.buffer = buffer
    out = buffer[: x.size].reshape(x.shape)
    np.copyto(out, x, casting="unsafe")
    return out


_serial_lock = threading.Lock()
_serial_calls = 0
_saved_threads = 0


def _serially(run: Callable[[], None]) -> None:
    """``run()`` with OpenCV's pool at one thread (process-wide, put back after the last such call)."""
    global _serial_calls, _saved_threads
    cv2 = _cv2()
    with _serial_lock:
        if _serial_calls == 0:
            _saved_threads = cv2.getNumThreads()
            cv2.setNumThreads(1)
        _serial_calls += 1
    try:
        run()
    finally:
        with _serial_lock:
            _serial_calls -= 1
            if _serial_calls == 0:
                cv2.setNumThreads(_saved_threads)


def usable(x: torch.Tensor) -> bool:
    """Whether :func:`bilinear` takes ``x``: a plain NHWC or HWC CPU tensor nobody differentiates or traces."""
    if type(x) is not torch.Tensor or x.device.type != "cpu" or x.dim() not in (3, 4) or _cv2() is None:
        return False
    if x.requires_grad and torch.is_grad_enabled():
        return False
    if torch.compiler.is_compiling() or torch.jit.is_tracing() or torch._C._are_functorch_transforms_active():
        return False
    h, w, c = x.shape[-3:]
    return (
        0 < h < _SIDE_LIMIT and 0 < w < _SIDE_LIMIT and 0 < c <= _MAX_CHANNELS and x.numel() > 0 and not x.is_complex()
    )


def bilinear(x: Any, size: Any, as_float: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor | None:
    """TF's bilinear resize of the images ``x`` (``[n, h, w, c]`` or ``[h, w, c]``) to
    ``size = (new_height, new_width)``, float32, the same rank as ``x``; None where
    :func:`usable` says no or ``size`` is not two ints in OpenCV's range (the caller's general
    path then checks the arguments and computes it).

    ``as_float`` converts a non-float32 ``x`` for reading (default: ``x.to(torch.float32)``).
    """
    if type(size) not in (list, tuple) or len(size) != 2 or not usable(x):
        return None
    new_height, new_width = size
    if type(new_height) is not int or type(new_width) is not int:
        return None
    if not (0 < new_height < _SIDE_LIMIT and 0 < new_width < _SIDE_LIMIT):
        return None
    cv2 = _cv2()
    if x.dtype == torch.float32:
        src_np = x.contiguous().numpy(force=False)
    elif x.dtype in _SCRATCH_DTYPES and x.is_contiguous() and x.numel() <= _SCRATCH_MAX:
        src_np = _float_copy(x.numpy(force=False))
    else:
        src_np = (as_float(x) if as_float is not None else x.to(torch.float32)).contiguous().numpy(force=False)
    c = src_np.shape[-1]
    out = torch.empty((*src_np.shape[:-3], new_height, new_width, c), dtype=torch.float32)
    out_np = out.numpy(force=False)
    if c == 1:  # a 1-channel Mat is 2-D to OpenCV
        src_np, out_np = src_np[..., 0], out_np[..., 0]
    pairs = [(src_np, out_np)] if x.dim() == 3 else list(zip(src_np, out_np))

    def run() -> None:
        for src, dst in pairs:
            cv2.resize(src, (new_width, new_height), dst=dst, interpolation=cv2.INTER_LINEAR)

    if torch.get_num_threads() == 1:
        _serially(run)
    else:
        run()
    return out


__all__ = ["bilinear", "usable"]
