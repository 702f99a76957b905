"""``keras.ops`` (Keras 3) on torch tensors: the numpy-like namespace, ``nn``, ``core``, ``math``,
``linalg`` and ``image``.

Every function takes torch tensors, numpy arrays, Python numbers and variables (``unison.Variable``,
layer weights) and returns torch tensors, with Keras's argument names, default axes and dtype rules
(int / int gives a float, Python ints are int32, ``zeros`` is floatx). Called on a symbolic
``keras.Input`` (the functional API), a function becomes a node of the model's graph. Names are
available at ``keras.ops.<name>`` and in their submodule (``keras.ops.nn.relu``,
``keras.ops.image.resize``; image functions only there, as in Keras).

Example:
    >>> from unison.keras import ops
    >>> x = ops.convert_to_tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> ops.sum(ops.softmax(x), axis=-1).tolist(), ops.matmul(x, ops.eye(2)).tolist()
    ([1.0, 1.0], [[1.0, 2.0], [3.0, 4.0]])
"""

from unison.keras.ops import core, image, linalg, math, nn, numpy  # noqa: F401
from unison.keras.ops.core import *  # noqa: F403
from unison.keras.ops.linalg import *  # noqa: F403
from unison.keras.ops.math import *  # noqa: F403
from unison.keras.ops.nn import *  # noqa: F403
from unison.keras.ops.numpy import *  # noqa: F403

__all__ = sorted(
    {*core.__all__, *linalg.__all__, *math.__all__, *nn.__all__, *numpy.__all__}
    | {"core", "image", "linalg", "math", "nn", "numpy"}
)


def __getattr__(name: str) -> object:
    from unison.ops._unsupported import unsupported

    raise unsupported("keras.ops", name)
