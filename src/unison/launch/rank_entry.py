"""One process of ``unison launch``: its stderr also goes to a log file the launcher can quote.

torchrun starts ``python -m unison.launch.rank_entry script.py args...`` once per process. This
module copies everything the process writes to stderr (tracebacks, warnings) into
``$UNISON_LAUNCH_LOG_DIR/rank<RANK>.log`` while still writing it to the terminal, then runs the
user's script as ``__main__``. When a process fails, the launcher's summary quotes the last lines
of that file and names it. stdout is left alone, so a progress bar still sees its terminal.

Example::

    UNISON_LAUNCH_LOG_DIR=/tmp/logs RANK=1 python -m unison.launch.rank_entry train.py --epochs 2
"""

from __future__ import annotations

import os
import runpy
import select
import signal
import sys
from collections.abc import Sequence

ENV_LOG_DIR = "UNISON_LAUNCH_LOG_DIR"
_JOIN_S = 2.0


def log_path(log_dir: str, rank: int | str) -> str:
    """Where the stderr of process ``rank`` is copied."""
    return os.path.join(log_dir, f"rank{rank}.log")


def _copy(read_fd: int, terminal_fd: int, log_fd: int) -> None:
    while True:
        try:
            chunk = os.read(read_fd, 65536)
        except InterruptedError:
            continue
        except OSError:
            return
        if not chunk:
            return
        for fd in (terminal_fd, log_fd):
            try:
                os.write(fd, chunk)
            except OSError:
                pass  # the terminal went away: the log still gets it (and the other way round)


def _tee_stderr(path: str) -> tuple[int, int]:
    """Point fd 2 at a pipe whose reader, a forked copier process, writes to the old stderr and ``path``.

    A process, not a thread: when the program is killed (SIGKILL, or torchrun's SIGTERM after another
    rank failed) the copier still drains what it wrote last, which is what the summary quotes.
    """
    attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
    log_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    os.write(log_fd, f"--- attempt {attempt}, pid {os.getpid()} ---\n".encode())
    read_fd, write_fd = os.pipe()
    sys.stderr.flush()
    pid = os.fork()  # only the standard library is loaded yet: one thread, safe to fork
    if pid == 0:
        try:
            os.close(write_fd)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # ends at EOF, when the program's fd 2 closes
            _copy(read_fd, 2, log_fd)
        finally:
            os._exit(0)
    os.close(read_fd)
    os.close(log_fd)
    terminal_fd = os.dup(2)
    os.dup2(write_fd, 2)
    os.close(write_fd)
    return terminal_fd, pid


def _wait(pid: int) -> None:
    """Reap the copier; a forked child of the program may still hold the pipe, so not for long."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return  # reaped at exit by whoever adopts it
    try:
        select.select([pidfd], [], [], _JOIN_S)  # readable once the copier has exited
    finally:
        os.close(pidfd)
    os.waitpid(pid, os.WNOHANG)


def _run_program(args: list[str]) -> None:
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(args)
        sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
        runpy.run_path(args[0], run_name="__main__")


def _print_user_traceback(exc: BaseException) -> None:
    """The traceback from the user's program down, without this module's and runpy's frames."""
    import traceback

    tb = exc.__traceback__
    while tb is not None and (
        tb.tb_frame.f_code.co_filename in (__file__, runpy.__file__) or "runpy" in tb.tb_frame.f_code.co_filename
    ):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)
    sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> None:
    """Copy stderr to this rank's log (when the launcher gave a folder) and run the program."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        raise SystemExit("usage: python -m unison.launch.rank_entry [-m module | script.py] args...")
    log_dir = os.environ.get(ENV_LOG_DIR)
    if not log_dir:
        _run_program(args)
        return
    terminal_fd, copier = _tee_stderr(log_path(log_dir, os.environ.get("RANK", "0")))
    try:
        _run_program(args)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            raise
        print(exc.code, file=sys.stderr)  # what the interpreter would print, but while the log listens
        raise SystemExit(1) from None
    except BaseException as exc:
        # printed here, while fd 2 still feeds the log, instead of by the interpreter after we restore it
        _print_user_traceback(exc)
        raise SystemExit(1) from None
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(terminal_fd, 2)  # closes the pipe's last writer in this process: the copier sees EOF
        _wait(copier)


if __name__ == "__main__":
    main()
