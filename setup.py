"""Build of unison's one compiled module; everything else is in pyproject.toml.

``unison.ops._wirescan`` reads ``tf.train.Example`` records without the GIL (``tf.io.parse_example``
and ``parse_single_example``). It is optional: without a C compiler pip installs unison without it,
and the same parsing runs in Python (several times slower; a warning says so once).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "unison.ops._wirescan",
            ["src/unison/ops/_wirescan.c"],
            extra_compile_args=["-O2"],
            optional=True,  # no compiler: install anyway, parse in Python
        )
    ]
)
