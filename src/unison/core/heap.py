"""glibc's heap tuned for training steps: the step's multi-MB buffers reused, not re-faulted.

A training step on CPU allocates and frees the same large activation and gradient buffers every
step (the TF tutorial CNN's first max-pool gradient is 5.5 MB at batch 64). glibc's ``malloc``
serves a request above ``M_MMAP_THRESHOLD`` (dynamic, 128 KiB rising to at most 32 MiB) with a
fresh ``mmap`` and gives heap-top memory above ``M_TRIM_THRESHOLD`` back to the kernel, so such
buffers come back every step as new pages: a page fault and a kernel zero-fill per 4 KiB before
torch writes them (the step's ``aten::fill_`` and max-pool backward doubled). Keeping requests up
to 32 MiB on the heap and trimming only above 1 GiB of free heap top measured the tutorial CNN's
custom-loop step at 1 thread 25.5 -> 17 ms (BENCHMARKS.md, issue 28); TF's and jemalloc's
allocators cache the same way. The cost is resident memory: up to 1 GiB of freed heap stays
mapped to the process until it is reused.

Applied when this module is imported, which ``import unison`` does (any ``unison`` import, the
Horovod-style ``unison.horovod.torch`` included), on glibc only; skipped where the user chose already
(``MALLOC_MMAP_THRESHOLD_``/``MALLOC_TRIM_THRESHOLD_`` set, or another allocator preloaded) and
switched off with ``UNISON_MALLOC_TUNING=0``.

Example:
    >>> from unison.core import heap
    >>> heap.tune_heap() in (True, False)
    True
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "tune_heap", "tuning_state"]

# mallopt's parameter numbers (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's ceiling for M_MMAP_THRESHOLD on 64-bit (HEAP_MAX_SIZE / 2)
TRIM_THRESHOLD = 1024 * 1024 * 1024
_PRELOADED_ALLOCATORS = ("jemalloc", "tcmalloc", "mimalloc")

_state: str | None = None


def _skip_reason(environ: os._Environ[str] | dict[str, str]) -> str | None:
    """Why the heap is left as it is, or None to tune it (pure: tested without a process)."""
    if environ.get("UNISON_MALLOC_TUNING", "1").strip().lower() in ("0", "false", "no", "off"):
        return "UNISON_MALLOC_TUNING=0"
    for name in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
        if name in environ:
            return f"{name} set by the user"
    preload = environ.get("LD_PRELOAD", "")
    for allocator in _PRELOADED_ALLOCATORS:
        if allocator in preload:
            return f"{allocator} preloaded"
    return None


def tune_heap() -> bool:
    """Set glibc's mmap and trim thresholds once for this process; True if they are set now.

    Returns False (and changes nothing) off glibc, when switched off or when the user's own
    allocator settings are present; the reason is kept in :func:`tuning_state`.
    """
    global _state
    if _state is not None:
        return _state == "tuned"
    reason = _skip_reason(os.environ)
    if reason is None:
        try:
            libc = ctypes.CDLL(None)
            libc.gnu_get_libc_version  # noqa: B018  (AttributeError off glibc: musl, macOS)
            mallopt = libc.mallopt
        except (OSError, AttributeError):
            reason = "not glibc"
        else:
            mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
            mallopt.restype = ctypes.c_int
            # mallopt returns 1 on success; setting the mmap threshold also stops glibc's
            # dynamic adjustment, which would otherwise lower the trim threshold again
            ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
            reason = None if ok else "mallopt refused"
    _state = "tuned" if reason is None else f"left as is: {reason}"
    return reason is None


def tuning_state() -> str:
    """``"tuned"``, ``"left as is: <why>"``, or ``"not applied"`` before :func:`tune_heap` ran."""
    return _state or "not applied"


tune_heap()  # on import: the tuning must precede the first training step, whatever the entry point
