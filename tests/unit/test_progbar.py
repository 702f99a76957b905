"""Progbar prints Keras 3's formats (verbose 1 on a TTY and not, verbose 2)."""

from __future__ import annotations

import io
import re

import pytest

from unison.keras.utils.progbar import Progbar, format_step_time, format_value

EPOCH_LOGS = [
    ("accuracy", 0.9242),
    ("loss", 0.2653),
    ("val_accuracy", 0.9579),
    ("val_loss", 0.1445),
]


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class TTYStream(io.StringIO):
    def isatty(self) -> bool:
        return True


def run_epoch(
    bar: Progbar, clock: FakeClock, steps: int, step_seconds: float, batch_logs: list[tuple[str, float]] | None = None
) -> None:
    for step in range(1, steps):
        clock.now += step_seconds
        bar.update(step, batch_logs, finalize=False)
    clock.now += step_seconds
    bar.update(steps, EPOCH_LOGS, finalize=True)


def test_verbose2_line_matches_keras_example() -> None:
    clock, out = FakeClock(), io.StringIO()
    bar = Progbar(1875, verbose=2, stream=out, clock=clock)
    run_epoch(bar, clock, 1875, 0.0016, [("accuracy", 0.5), ("loss", 1.0)])
    assert out.getvalue() == (
        "1875/1875 - 3s - 2ms/step - accuracy: 0.9242 - loss: 0.2653 - val_accuracy: 0.9579 - val_loss: 0.1445\n"
    )


def test_verbose2_prints_nothing_before_the_end() -> None:
    clock, out = FakeClock(), io.StringIO()
    bar = Progbar(10, verbose=2, stream=out, clock=clock)
    for step in range(1, 10):
        clock.now += 1.0
        bar.update(step, [("loss", 1.0)])
    assert out.getvalue() == ""


def test_verbose2_real_clock_line_shape() -> None:
    out = io.StringIO()
    bar = Progbar(3, verbose=2, stream=out)
    for step in (1, 2, 3):
        bar.update(step, [("accuracy", 0.5), ("loss", 0.5)] if step < 3 else EPOCH_LOGS)
    pattern = (
        r"^3/3 - \d+s - \d+(us|ms|s)/step - accuracy: 0\.9242 - loss: 0\.2653 "
        r"- val_accuracy: 0\.9579 - val_loss: 0\.1445\n$"
    )
    assert re.match(pattern, out.getvalue())


def test_verbose1_not_a_tty_prints_one_plain_line_at_the_end() -> None:
    clock, out = FakeClock(), io.StringIO()
    bar = Progbar(100, verbose=1, stream=out, clock=clock)
    for step in range(1, 100):
        clock.now += 1.0  # far more than the interval: a TTY would redraw every step
        bar.update(step, [("accuracy", 0.5), ("loss", 0.5)])
    assert out.getvalue() == ""
    clock.now += 1.0
    bar.update(100, EPOCH_LOGS)
    text = out.getvalue()
    assert text == (
        "100/100 ━━━━━━━━━━━━━━━━━━━━ 100s 1s/step - accuracy: 0.9242 - loss: 0.2653 "
        "- val_accuracy: 0.9579 - val_loss: 0.1445\n"
    )
    assert "\r" not in text and "\x1b" not in text


def test_verbose1_tty_rewrites_in_place_and_respects_interval() -> None:
    clock, out = FakeClock(), TTYStream()
    bar = Progbar(1875, verbose=1, interval=0.05, stream=out, clock=clock)
    run_epoch(bar, clock, 1875, 0.0016, [("accuracy", 0.8788), ("loss", 0.4247)])
    text = out.getvalue()
    redraws = text.count("\r")
    # 3 s of steps at one redraw per 0.05 s: about 60 redraws, not 1875.
    assert 50 <= redraws <= 70
    assert text.endswith("\n") and text.count("\n") == 1
    final = re.sub(r"\x1b\[\d+m", "", text.rsplit("\r", 1)[1])
    assert final == (
        "1875/1875 ━━━━━━━━━━━━━━━━━━━━ 3s 2ms/step - accuracy: 0.9242 - loss: 0.2653 "
        "- val_accuracy: 0.9579 - val_loss: 0.1445\n"
    )


def test_verbose1_tty_shows_eta_while_running() -> None:
    clock, out = FakeClock(), TTYStream()
    bar = Progbar(100, verbose=1, stream=out, clock=clock)
    clock.now = 1.0
    bar.update(1, [("loss", 0.5)])
    clock.now = 2.0
    bar.update(2, [("loss", 0.5)])
    line = re.sub(r"\x1b\[\d+m", "", out.getvalue().rsplit("\r", 1)[1])
    assert line.startswith("  2/100 ━━━━━━━━━━━━━━━━━━━━ 1:38 1s/step - loss: 0.5000")


def test_verbose0_is_silent() -> None:
    out = io.StringIO()
    bar = Progbar(2, verbose=0, stream=out)
    bar.update(1, [("loss", 1.0)])
    bar.update(2, [("loss", 1.0)])
    assert out.getvalue() == ""


def test_unknown_target_counts_steps() -> None:
    out = TTYStream()
    bar = Progbar(None, verbose=1, interval=0.0, stream=out)
    bar.update(5, finalize=True)
    assert re.sub(r"\x1b\[\d+m", "", out.getvalue()).startswith("\r      5/Unknown ")


def test_stateless_metrics_are_averaged_and_stateful_shown_as_is() -> None:
    out = io.StringIO()
    bar = Progbar(3, verbose=1, stream=out, stateful_metrics=["acc"])
    bar.update(1, [("loss", 1.0), ("acc", 0.1)])
    bar.update(2, [("loss", 3.0), ("acc", 0.2)])
    bar.update(3, finalize=True)
    assert "loss: 2.0000" in out.getvalue()
    assert "acc: 0.2000" in out.getvalue()


def test_add_advances_by_n() -> None:
    out = io.StringIO()
    bar = Progbar(4, verbose=2, stream=out)
    bar.add(2)
    bar.add(2, [("loss", 0.25)])
    assert out.getvalue().startswith("4/4 - ")


@pytest.mark.parametrize(
    "seconds, expected",
    [(2.4, "2s/step"), (0.0021, "2ms/step"), (0.00083, "830us/step"), (0.0, "0s/step")],
)
def test_format_step_time(seconds: float, expected: str) -> None:
    assert format_step_time(seconds) == expected


def test_format_value_uses_scientific_notation_when_tiny() -> None:
    assert format_value(0.42468) == "0.4247"
    assert format_value(0.0001234) == "1.2340e-04"
    assert format_value("n/a") == "n/a"


def test_stream_that_cannot_encode_the_bar_gets_ascii_fallback() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    bar = Progbar(2, verbose=1, stream=stream)
    bar.update(2, [("loss", 0.5)])
    stream.flush()
    assert raw.getvalue().decode("ascii").startswith("2/2 ====================")


def test_invalid_verbose_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"verbose=3"):
        Progbar(10, verbose=3)


def test_a_process_that_imported_ipykernel_still_prints_plain_lines_to_a_pipe() -> None:
    # The full test run imports ipykernel (the notebook tests) before these tests; Keras's
    # `"ipykernel" in sys.modules` would then redraw with '\r' and escapes into a pipe.
    pytest.importorskip("ipykernel.kernelapp")
    clock, out = FakeClock(), io.StringIO()
    bar = Progbar(2, verbose=1, stream=out, clock=clock)
    clock.now += 1.0
    bar.update(1, [("loss", 0.5)])
    clock.now += 1.0
    bar.update(2, [("loss", 0.5)])
    assert out.getvalue().startswith("2/2 ━") and "\r" not in out.getvalue() and "\x1b" not in out.getvalue()
