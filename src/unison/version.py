"""unison's own version, in a leaf module every room may read (``unison.__version__`` re-exports it).

Example:
    >>> from unison.version import __version__
    >>> __version__.count(".") >= 1
    True
"""

__version__ = "0.1.0"  # keep equal to pyproject.toml's [project] version

VERSION = __version__
"""``tf.version.VERSION``: unison's version (a TF program printing it learns what it runs on)."""
