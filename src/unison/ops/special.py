"""``tf.math.special``: the Bessel functions of ``tf.math.special`` on ``torch.special``.

Example:
    >>> import unison as tf
    >>> round(float(tf.math.special.bessel_j0(tf.constant(0.0))), 6)
    1.0
"""

from __future__ import annotations

from unison.ops._dispatch import wrap_namespace
from unison.ops.math_scipy import dawsn, expint, fresnel_cos, fresnel_sin, spence
from unison.ops.math_special import (
    bessel_i0,
    bessel_i0e,
    bessel_i1,
    bessel_i1e,
    bessel_j0,
    bessel_j1,
    bessel_k0,
    bessel_k0e,
    bessel_k1,
    bessel_k1e,
    bessel_y0,
    bessel_y1,
)

__all__ = [
    "dawsn",
    "expint",
    "fresnel_cos",
    "fresnel_sin",
    "spence",
    "bessel_i0",
    "bessel_i0e",
    "bessel_i1",
    "bessel_i1e",
    "bessel_j0",
    "bessel_j1",
    "bessel_k0",
    "bessel_k0e",
    "bessel_k1",
    "bessel_k1e",
    "bessel_y0",
    "bessel_y1",
]
wrap_namespace(globals(), __all__)


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("tf.math.special", name)
