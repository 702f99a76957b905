"""Keras 3-format progress bar.

The output matches Keras 3 (``keras.utils.Progbar``) character for character where it
matters to people reading logs:

- ``verbose=1`` on a terminal: one line rewritten in place with ``\\r``, e.g.
  ``1875/1875 ━━━━━━━━━━━━━━━━━━━━ 3s 2ms/step - accuracy: 0.8788 - loss: 0.4247``,
  redrawn at most every ``interval`` seconds; while running the time is the ETA, on the
  final line it is the elapsed time.
- ``verbose=1`` when the stream is not a terminal (a log file, a pipe, CI): nothing while the
  epoch runs and one plain line, bar included, when it finishes; rewriting a line in a file
  only produces garbage, and no ANSI colour codes are written there either.
- ``verbose=2``: one line when the bar finishes,
  ``1875/1875 - 3s - 2ms/step - accuracy: 0.9242 - loss: 0.2653``.
- ``verbose=0``: silent.

Example:
    >>> import io
    >>> out = io.StringIO()
    >>> bar = Progbar(2, verbose=2, stream=out)
    >>> bar.update(1, [("loss", 0.5)])
    >>> bar.update(2, [("loss", 0.25)])
    >>> out.getvalue().split(" - ")[0], out.getvalue().split(" - ")[-1]
    ('2/2', 'loss: 0.2500\\n')
"""

from __future__ import annotations

import numbers
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from unison.core.interactive import in_jupyter_kernel
from unison.keras.utils import io_utils

__all__ = ["Progbar"]

_BAR_CHAR = "━"
# ANSI styles Keras 3 uses on terminals: bold counts and times, green done, white to do.
_BOLD = "\x1b[1m"
_GREEN = "\x1b[32m"
_WHITE = "\x1b[37m"
_RESET = "\x1b[0m"


def format_step_time(seconds: float, unit_name: str = "step") -> str:
    """Format a per-unit duration as Keras does: ``2s/step``, ``15ms/step`` or ``830us/step``.

    Example:
        >>> format_step_time(0.0021)
        '2ms/step'
    """
    if seconds >= 1 or seconds == 0:
        return f"{seconds:.0f}s/{unit_name}"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/{unit_name}"
    return f"{seconds * 1e6:.0f}us/{unit_name}"


def format_value(value: Any) -> str:
    """Format a metric value as Keras does: 4 decimals, scientific notation when tiny.

    Example:
        >>> format_value(0.42468), format_value(0.0)
        ('0.4247', '0.0000e+00')
    """
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if abs(number) > 1e-3:
        return f"{number:.4f}"
    return f"{number:.4e}"


def _format_eta(seconds: float) -> str:
    if seconds > 3600:
        return f"{int(seconds // 3600)}:{int(seconds % 3600 // 60):02d}:{int(seconds % 60):02d}"
    if seconds > 60:
        return f"{int(seconds // 60)}:{int(seconds % 60):02d}"
    return f"{int(seconds)}s"


def _stream_is_dynamic(stream: TextIO) -> bool:
    # Notebooks and PyCharm's console understand '\r' although they are not TTYs.
    isatty = getattr(stream, "isatty", None)
    return bool((isatty is not None and isatty()) or in_jupyter_kernel() or "PYCHARM_HOSTED" in os.environ)


class Progbar:
    """A progress bar that prints in Keras 3's formats.

    Args:
        target: total number of steps expected, or ``None`` if unknown.
        width: width of the bar in characters.
        verbose: 0 (silent), 1 (bar) or 2 (one line at the end).
        interval: minimum seconds between two redraws of the ``verbose=1`` bar.
        stateful_metrics: names of metrics displayed as given; all other metrics are
            averaged over the steps seen, as Keras does.
        unit_name: name of one step in the time per unit (``"step"``, ``"sample"``).
        stream: where to write; ``None`` means ``sys.stdout`` at construction time.
        clock: a function returning seconds (monotonic); replaceable for tests.

    Example:
        >>> import io
        >>> out = io.StringIO()
        >>> bar = Progbar(3, verbose=1, stream=out)
        >>> for step in (1, 2, 3):
        ...     bar.update(step, [("loss", 1.0 / step)])
        >>> out.getvalue().startswith("3/3 ━━━━━━━━━━━━━━━━━━━━")
        True
    """

    def __init__(
        self,
        target: int | None,
        width: int = 20,
        verbose: int = 1,
        interval: float = 0.05,
        stateful_metrics: Iterable[str] | None = None,
        unit_name: str = "step",
        stream: TextIO | None = None,
        *,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if verbose not in (0, 1, 2):
            raise ValueError(
                f"Progbar verbose must be 0 (silent), 1 (progress bar) or 2 (one line per "
                f"epoch). Received: verbose={verbose!r}"
            )
        if target is not None and target < 0:
            raise ValueError(
                f"Progbar target must be a non-negative number of steps or None (unknown). Received: target={target!r}"
            )
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.stateful_metrics: set[str] = set(stateful_metrics or ())
        self.unit_name = unit_name
        self.stream: TextIO = stream if stream is not None else sys.stdout
        self._clock = clock if clock is not None else time.monotonic
        self._dynamic = _stream_is_dynamic(self.stream)
        # name -> [weighted sum, weight]; a dict keeps first-seen order for display.
        self._values: dict[str, list[Any]] = {}
        self._seen_so_far = 0
        self._start = self._clock()
        self._last_update = float("-inf")
        self._time_after_first_step: float | None = None
        self._prev_width = 0

    def update(
        self,
        current: int,
        values: Sequence[tuple[str, Any]] | None = None,
        finalize: bool | None = None,
    ) -> None:
        """Advance the bar to step ``current`` and record metric values.

        Args:
            current: index (1-based count) of the step just completed.
            values: ``(name, value)`` pairs for this step; stateful metrics are shown as
                given, the others averaged over the steps since the last update.
            finalize: whether this is the last update; defaults to ``current >= target``.
        """
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        self._record(current, values or (), finalize)
        now = self._clock()
        per_unit = self._estimate_step_duration(current, now)

        if self.verbose == 1:
            if not finalize and (not self._dynamic or now - self._last_update < self.interval):
                return
            self._write_bar(current, now, per_unit, finalize)
        elif self.verbose == 2 and finalize and self.target:
            count = f"{current:>{len(str(self.target))}d}/{self.target}"
            step_time = format_step_time(per_unit, self.unit_name)
            line = f"{count} - {now - self._start:.0f}s - {step_time}{self._metrics_text()}"
            self._write(line + "\n")
        self._last_update = now

    def add(self, n: int, values: Sequence[tuple[str, Any]] | None = None) -> None:
        """Advance the bar by ``n`` steps (see ``update``)."""
        self.update(self._seen_so_far + n, values)

    def _record(self, current: int, values: Iterable[tuple[str, Any]], finalize: bool) -> None:
        for name, value in values:
            averaged = name not in self.stateful_metrics and not finalize
            if averaged and isinstance(value, numbers.Real):
                # Weighted by the steps since the last update, so a bar updated every few
                # steps still shows the per-step average.
                weight = max(current - self._seen_so_far, 1)
                total, count = self._values.get(name, [0.0, 0])
                self._values[name] = [total + value * weight, count + weight]
            else:
                # Stateful metrics, non-numbers, and the final update (the epoch's own
                # numbers) are shown exactly as given.
                self._values[name] = [value, 1]
        self._seen_so_far = current

    def _metrics_text(self) -> str:
        parts = []
        for name, (total, count) in self._values.items():
            try:
                shown: Any = float(total) / max(1, count)
            except (TypeError, ValueError):
                shown = total
            parts.append(f" - {name}: {format_value(shown)}")
        return "".join(parts)

    def _write_bar(self, current: int, now: float, per_unit: float, finalize: bool) -> None:
        # Styles only on a terminal: in a log file escape codes are noise.
        bold, reset = (_BOLD, _RESET) if self._dynamic else ("", "")
        if self.target:
            count = f"{current:>{len(str(self.target))}d}/{self.target}"
            done = min(int(self.width * current / self.target), self.width)
            if self._dynamic:
                bar = f"{_GREEN}{_BAR_CHAR * done}{_RESET}" if done > 0 else ""
                bar += f"{_WHITE}{_BAR_CHAR * (self.width - done)}{_RESET}"
            else:
                bar = _BAR_CHAR * self.width
            head, plain_head = f"{bold}{count}{reset} {bar}", f"{count} {_BAR_CHAR * self.width}"
        else:
            head = plain_head = f"{current:7d}/Unknown"
        if self.target and not finalize:
            when = _format_eta(per_unit * (self.target - current))
        else:
            when = f"{now - self._start:.0f}s"
        tail = f" {format_step_time(per_unit, self.unit_name)}{self._metrics_text()}"
        visible = len(plain_head) + 1 + len(when) + len(tail)

        message = ("\r" if self._dynamic else "") + f"{head} {bold}{when}{reset}{tail}"
        if self._dynamic and self._prev_width > visible:
            # Blank out the tail of a longer previous line that '\r' does not erase.
            message += " " * (self._prev_width - visible)
        if finalize:
            message += "\n"
        self._write(message)
        self._prev_width = visible

    def _estimate_step_duration(self, current: int, now: float) -> float:
        # The first step includes compilation and warm-up; once a later step exists, time
        # per step is measured from the end of the first one, as Keras does.
        if not current:
            return 0.0
        if self._time_after_first_step is not None and current > 1:
            per_unit = (now - self._time_after_first_step) / (current - 1)
        else:
            per_unit = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return per_unit

    def _write(self, message: str) -> None:
        if self.stream is sys.stdout and not io_utils.is_interactive_logging_enabled():
            # keras.config.disable_interactive_logging(): Keras's bar then goes to the logger
            io_utils.print_msg(message, line_break=False)
            return
        try:
            self.stream.write(message)
        except UnicodeEncodeError:
            # A stream with a legacy encoding cannot show the bar glyph: use '=' as Keras does.
            encoding = getattr(self.stream, "encoding", None) or "ascii"
            fallback = message.replace(_BAR_CHAR, "=")
            self.stream.write(fallback.encode(encoding, errors="replace").decode(encoding))
        self.stream.flush()
