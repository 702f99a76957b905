"""Build of unison's two compiled modules; everything else is in pyproject.toml.

``unison.ops._wirescan`` reads ``tf.train.Example`` records without the GIL (``tf.io.parse_example``
and ``parse_single_example``). It is optional: without a C compiler pip installs unison without it,
and the same parsing runs in Python (several times slower; a warning says so once).
``unison.ops._dropmask`` draws Dropout's keep mask on CPU (Philox in C, 3-4x faster than torch's
generator and the passes around it); without it Dropout draws with ``torch.rand``.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "unison.ops._wirescan",
            ["src/unison/ops/_wirescan.c"],
            extra_compile_args=["-O2"],
            optional=True,  # no compiler: install anyway, parse in Python
        ),
        Extension(
            "unison.ops._dropmask",
            ["src/unison/ops/_dropmask.c"],
            extra_compile_args=["-O2"],  # its AVX2 path is written with intrinsics (chosen at run time)
            optional=True,  # no compiler: Dropout draws its mask with torch.rand
        ),
    ]
)
