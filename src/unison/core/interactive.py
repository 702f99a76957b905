"""Whether this program runs inside an interactive shell: a Jupyter kernel or IPython.

Asked by the progress bar (a kernel's output cell redraws ``\\r`` lines) and by the launcher
(a kernel has no command line to re-run). Keras tests ``"ipykernel" in sys.modules``; that
is also true in a test process or library that merely imported ipykernel, and there the
bar then wrote terminal escapes into a pipe. So the running kernel application is asked.
It imports nothing of unison, so every room may use it.

Example:
    >>> from unison.core.interactive import in_jupyter_kernel
    >>> in_jupyter_kernel()
    False
"""

from __future__ import annotations

import sys

__all__ = ["in_ipython", "in_jupyter_kernel"]


def in_jupyter_kernel() -> bool:
    """Whether a Jupyter kernel runs this program (a program that merely imported ipykernel is not one)."""
    app = getattr(sys.modules.get("ipykernel.kernelapp"), "IPKernelApp", None)
    initialized = getattr(app, "initialized", None)
    return bool(initialized is not None and initialized())


def in_ipython() -> bool:
    """Whether an IPython shell runs this program (a program that merely imported IPython is not one)."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    return bool(get is not None and get() is not None)
