"""``keras.ops.numpy``: the numpy-like functions of ``keras.ops`` (all also at ``keras.ops.<name>``).

Example:
    >>> from unison.keras.ops import numpy as knp
    >>> knp.sum(knp.ones((2, 3)), axis=1).tolist()
    [3.0, 3.0]
"""

from unison.keras.ops._numpy_array import *  # noqa: F403
from unison.keras.ops._numpy_array import __all__ as _array_names
from unison.keras.ops._numpy_math import *  # noqa: F403
from unison.keras.ops._numpy_math import __all__ as _math_names
from unison.keras.ops._numpy_more import *  # noqa: F403
from unison.keras.ops._numpy_more import __all__ as _more_names
from unison.keras.ops.linalg import norm, slogdet  # noqa: F401

__all__ = sorted([*_array_names, *_math_names, *_more_names, "norm", "slogdet"])
