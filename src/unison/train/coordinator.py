"""``tf.train.Coordinator``: stop a group of Python threads together, and re-raise what stopped them.

TF's contract: any thread calls ``request_stop()`` (optionally with an exception); every thread
polls ``should_stop()``; the main thread's ``join()`` waits for the threads, gives stragglers
``stop_grace_period_secs``, then re-raises the first exception reported (the exception types in
``clean_stop_exception_types``, by default ``tf.errors.OutOfRangeError``, count as a clean stop) or
raises ``RuntimeError`` naming the threads still running.

Example:
    >>> import threading
    >>> coord = Coordinator()
    >>> def work():
    ...     with coord.stop_on_exception():
    ...         while not coord.should_stop():
    ...             coord.request_stop()
    >>> threads = [threading.Thread(target=work) for _ in range(2)]
    >>> for t in threads:
    ...     t.start()
    >>> coord.join(threads)
    >>> coord.should_stop()
    True
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Any

from unison.errors import OutOfRangeError

_ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class Coordinator:
    """A coordinator for threads (TF's ``tf.train.Coordinator``).

    Args:
        clean_stop_exception_types: exception types that stop the threads without being
            re-raised by ``join`` (default: ``(tf.errors.OutOfRangeError,)``).
    """

    def __init__(self, clean_stop_exception_types: Iterable[type[BaseException]] | None = None) -> None:
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise: _ExcInfo | None = None
        self._joined = False
        self._registered_threads: set[threading.Thread] = set()

    def _filter_exception(self, ex: Any) -> Any:
        instance = ex[1] if isinstance(ex, tuple) else ex
        return None if isinstance(instance, self._clean_stop_exception_types) else ex

    def request_stop(self, ex: BaseException | _ExcInfo | None = None) -> None:
        """Ask every thread to stop; ``ex`` (an exception or ``sys.exc_info()``) is re-raised by ``join``.

        Only the first exception is kept; after ``join`` has run, exceptions are ignored (as in TF).
        """
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                ex = None
            if ex is not None and self._exc_info_to_raise is None:
                if isinstance(ex, tuple):
                    info: Any = ex
                else:
                    current = sys.exc_info()
                    info = current if current[1] is ex else (type(ex), ex, ex.__traceback__)
                if len(info) != 3 or not info[0] or not info[1]:
                    bad = ValueError(
                        f"ex must be an exception or a (type, value, traceback) tuple from sys.exc_info(). Received: ex={ex!r}"
                    )
                    info = (ValueError, bad, None)
                self._exc_info_to_raise = info
            self._stop_event.set()

    def clear_stop(self) -> None:
        """Forget a stop request, so the coordinator can be used again after ``join``."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        """True once a stop has been requested."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        """A block whose exception (any, ``SystemExit`` included) becomes ``request_stop(ex)``."""
        try:
            yield
        except BaseException:  # noqa: B036 - TF's contract: every exception stops the group
            self.request_stop(ex=sys.exc_info())  # type: ignore[arg-type]

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        """Wait until a stop is requested (or ``timeout`` seconds); True if it was."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        """Have ``join()`` wait for ``thread`` as well."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(
        self,
        threads: Iterable[threading.Thread] | None = None,
        stop_grace_period_secs: float = 120,
        ignore_live_threads: bool = False,
    ) -> None:
        """Wait for the threads (given and registered) to finish, then re-raise a reported exception.

        Raises:
            RuntimeError: threads still alive ``stop_grace_period_secs`` after the stop request,
                naming them (unless ``ignore_live_threads``).
            Exception: the exception given to ``request_stop``.
        """
        with self._lock:
            chosen = list(self._registered_threads if threads is None else self._registered_threads.union(threads))
        while any(t.is_alive() for t in chosen) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for thread in chosen:  # the grace period: joins with a deadline, no polling
            thread.join(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in chosen if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise is not None:
                raise self._exc_info_to_raise[1]
            if stragglers:
                message = f"Coordinator stopped with threads still running: {' '.join(stragglers)}"
                if not ignore_live_threads:
                    raise RuntimeError(message)
                warnings.warn(message, stacklevel=2)

    @property
    def joined(self) -> bool:
        """Whether ``join`` has run (and not been undone by ``clear_stop``)."""
        return self._joined

    def raise_requested_exception(self) -> None:
        """Raise the exception given to ``request_stop`` now, if there is one."""
        with self._lock:
            if self._exc_info_to_raise is not None:
                raise self._exc_info_to_raise[1]

    def loop(
        self,
        timer_interval_secs: float,
        target: Callable[..., Any],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> threading.Thread:
        """Start a thread that calls ``target(*args, **kwargs)`` every ``timer_interval_secs`` until a stop."""

        def run() -> None:
            with self.stop_on_exception():
                while not self.should_stop():
                    target(*(args or ()), **(kwargs or {}))
                    if self.wait_for_stop(timer_interval_secs):
                        break

        thread = threading.Thread(target=run, daemon=True)
        self.register_thread(thread)
        thread.start()
        return thread


__all__ = ["Coordinator"]
