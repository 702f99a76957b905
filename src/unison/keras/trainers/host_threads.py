"""One compute thread while ``fit``/``evaluate``/``predict`` run on a host that is already busy.

torch's CPU kernels split work over OpenMP threads that meet at a barrier after every parallel
region. When other processes keep the host's cores busy (a shared machine, CI), one of those
threads is often descheduled, and every region waits for it: on the project's 2-core VM under a
load average of ~18, a small model's step took 200-480 ms with torch's default 2 threads and
20-35 ms with one (benchmarks/small_models.py). TensorFlow's work-stealing pool does not wait like
that, so its programs do not see the cliff.

So while a Keras loop runs on a host whose load average already exceeds the cores this process may
use, unison runs torch with one intra-op thread, and restores the count afterwards. It leaves the
count alone when the user chose one (``OMP_NUM_THREADS``, ``torch.set_num_threads``,
``tf.config.threading``; a multi-replica launch sets it too), on a quiet host, or when
``UNISON_BUSY_HOST_THREADS=0``.

Example:
    >>> with busy_host_threads():
    ...     pass
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import torch

__all__ = ["busy_host_threads"]

# torch's own choice, read when unison is imported: a different count later was someone's choice.
_DEFAULT_THREADS = torch.get_num_threads()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _busy() -> bool:
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        return False
    return load > _cores()


@contextlib.contextmanager
def busy_host_threads() -> Iterator[None]:
    """Run the block with one torch thread when the host is oversubscribed (see the module notes)."""
    threads = torch.get_num_threads()
    chosen = "OMP_NUM_THREADS" in os.environ or threads != _DEFAULT_THREADS
    if threads <= 1 or chosen or os.environ.get("UNISON_BUSY_HOST_THREADS", "1") == "0" or not _busy():
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        if torch.get_num_threads() == 1:  # unless the block itself chose a count
            torch.set_num_threads(threads)
