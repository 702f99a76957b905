"""Keras 2's (``tf_keras``) threads that run beside training: ``TimedThread`` and ``StepsPerExecutionTuner``.

``TimedThread`` calls ``on_interval()`` every ``interval`` seconds on a daemon thread until
``stop()`` (or the end of its ``with`` block). ``StepsPerExecutionTuner`` is Keras 2's tuner of
a ``steps_per_execution`` variable: it measures steps per second from ``optimizer.iterations``
every ``interval`` seconds and, every ``change_spe_interval`` measurements, multiplies the value
by 1.5 or 0.5 when the throughput moved by more than ``change_threshold`` (Keras 2's rule).

Example:
    >>> import threading
    >>> class Tick(TimedThread):
    ...     def __init__(self):
    ...         super().__init__(interval=0.01)
    ...         self.ticked = threading.Event()
    ...     def on_interval(self):
    ...         self.ticked.set()
    >>> with Tick() as tick:
    ...     tick.ticked.wait(5)
    True
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import numpy as np

__all__ = ["StepsPerExecutionTuner", "TimedThread"]

_LOG = logging.getLogger(__name__)


class TimedThread:
    """Runs ``on_interval()`` every ``interval`` seconds on a thread (Keras 2's ``TimedThread``).

    Args:
        interval: seconds between calls of ``on_interval``.
        **kwargs: passed to ``threading.Thread`` (``daemon`` defaults to ``True``).

    An exception in ``on_interval`` ends the thread (and is printed by Python's thread hook),
    as in Keras 2: catch what may fail inside it.
    """

    def __init__(self, interval: float, **kwargs: Any) -> None:
        self.interval = interval
        self.daemon = kwargs.pop("daemon", True)
        self.thread_kwargs = kwargs
        self.thread: threading.Thread | None = None
        self.thread_stop_event: threading.Event | None = None

    def _call_on_interval(self) -> None:
        assert self.thread_stop_event is not None
        while not self.thread_stop_event.is_set():
            self.on_interval()
            self.thread_stop_event.wait(self.interval)

    def start(self) -> None:
        """Start the thread (a warning, and nothing else, when it already runs)."""
        if self.thread and self.thread.is_alive():
            _LOG.warning("Thread is already running.")
            return
        self.thread = threading.Thread(target=self._call_on_interval, daemon=self.daemon, **self.thread_kwargs)
        self.thread_stop_event = threading.Event()
        self.thread.start()

    def stop(self) -> None:
        """Ask the thread to end after its current call (it does not wait for it)."""
        if self.thread_stop_event:
            self.thread_stop_event.set()

    def is_alive(self) -> bool:
        """Whether the thread runs."""
        return bool(self.thread and self.thread.is_alive())

    def __enter__(self) -> TimedThread:
        self.start()
        return self

    def __exit__(self, *args: Any) -> None:
        self.stop()

    def on_interval(self) -> None:
        """What runs every interval (subclasses implement it)."""
        raise NotImplementedError(
            "Runs every x interval seconds. Needs to be implemented in subclasses of `TimedThread`"
        )


def _number(value: Any) -> Any:
    value = value.numpy() if hasattr(value, "numpy") else value
    return np.asarray(value).item()


class StepsPerExecutionTuner:
    """Tunes a ``steps_per_execution`` variable from the measured throughput (Keras 2's tuner).

    Args:
        optimizer: what counts the steps (its ``iterations``).
        spe_variable: the integer variable to tune (``assign`` and ``numpy`` are used).
        interval: seconds between measurements.
        change_spe_interval: measurements between two changes.
        change_threshold: the relative throughput change that makes a change.

    Example:
        >>> import unison as tf
        >>> from unison import keras
        >>> spe = tf.Variable(4, dtype=tf.int64)
        >>> tuner = StepsPerExecutionTuner(keras.optimizers.SGD(), spe)
        >>> tuner.steps_per_execution = 8
        >>> int(spe.numpy()), tuner.init_spe
        (8, 8)
    """

    def __init__(
        self,
        optimizer: Any,
        spe_variable: Any,
        interval: float = 5,
        change_spe_interval: int = 10,
        change_threshold: float = 0.1,
    ) -> None:
        self.optimizer = optimizer
        self._steps_per_execution = spe_variable
        self.interval = interval
        self.change_spe_interval = change_spe_interval
        self.spe_change_threshold = change_threshold
        self.steps_per_execution_stop_event = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self) -> threading.Thread:
        """Start measuring (and tuning) on a daemon thread; returns it (the running one if any)."""
        if self.thread and self.thread.is_alive():
            return self.thread
        self._begin_tuning()
        self.thread = threading.Thread(target=self._steps_per_execution_interval_call, daemon=True)
        self.thread.start()
        return self.thread

    @property
    def steps_per_execution(self) -> Any:
        """The tuned variable; setting it assigns the variable and makes the value the initial one."""
        return self._steps_per_execution

    @steps_per_execution.setter
    def steps_per_execution(self, value: int) -> None:
        self._steps_per_execution.assign(value)
        self.init_spe = value

    def _steps_per_execution_interval_call(self) -> None:
        while not self.steps_per_execution_stop_event.is_set():
            self._measure_and_tune()
            self.steps_per_execution_stop_event.wait(self.interval)

    def _begin_tuning(self) -> None:
        self.start_time = time.time()
        self.init_iterations = _number(self.optimizer.iterations)
        self.init_spe = _number(self._steps_per_execution)
        self.spe_last_logged = {"iteration": self.init_iterations, "time_secs": self.start_time}
        self.rgsps: list[float] = []  # recent global steps per second
        self.avg_rgsps = 0.0
        self.prev_avg_rgsps = 0.0
        self.spe_tune_last_action_add = True
        self.spe_measurement_count = 0

    def stop(self) -> None:
        """Stop the thread after its current measurement."""
        self.steps_per_execution_stop_event.set()

    def _should_tune(self) -> bool:
        epoch_boundary = bool(self.rgsps) and self.rgsps[-1] == 0
        return self.spe_measurement_count % self.change_spe_interval == 0 and bool(self.rgsps) and not epoch_boundary

    def _tune(self) -> None:
        """Repeat the last change when throughput rose by the threshold, reverse it when it fell."""
        self.avg_rgsps = sum(self.rgsps) / len(self.rgsps)
        fast = (1 + self.spe_change_threshold) * self.prev_avg_rgsps
        slow = (1 - self.spe_change_threshold) * self.prev_avg_rgsps
        repeat, opposite = (1.5, 0.5) if self.spe_tune_last_action_add else (0.5, 1.5)
        current = _number(self._steps_per_execution)
        dtype = getattr(self._steps_per_execution, "dtype", None)
        limit = np.iinfo(str(dtype).removeprefix("torch.") if dtype is not None else "int64").max / 1.5
        if self.avg_rgsps > fast:
            new = current * repeat
        elif self.avg_rgsps < slow:
            new = current * opposite
            self.spe_tune_last_action_add = not self.spe_tune_last_action_add
        else:
            new = current
        if current >= limit:
            new = current
        elif current <= 0:
            new = self.init_spe
        self._steps_per_execution.assign(int(np.round(new)))
        self.prev_avg_rgsps = self.avg_rgsps

    def _measure_and_tune(self) -> None:
        self.spe_measurement_count += 1
        iteration = _number(self.optimizer.iterations)
        now = time.time()
        self.rgsps.append((iteration - self.spe_last_logged["iteration"]) / (now - self.spe_last_logged["time_secs"]))
        if len(self.rgsps) > self.change_spe_interval:
            self.rgsps.pop(0)
        if iteration == 0:  # nothing measured yet
            self.start_time = now
            return
        self.spe_last_logged = {"iteration": iteration, "time_secs": now}
        if self._should_tune():
            self._tune()
