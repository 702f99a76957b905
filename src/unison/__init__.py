"""unison: TensorFlow's distribution strategies and a distributed optimizer on PyTorch.

``import unison as tf`` runs a ``tf.distribute`` + ``tf.keras`` program on PyTorch.

Example:
    >>> import unison as tf
    >>> strategy = tf.distribute.MirroredStrategy()
    >>> strategy.num_replicas_in_sync
    1
"""

from unison import data, distribute, errors, keras, nn
from unison import summary as summary  # tf.summary (TensorBoard event files)
from unison.api import (
    allgather,
    allreduce,
    barrier,
    broadcast,
    broadcast_optimizer_state,
    broadcast_parameters,
    gloo_built,
    init,
    local_rank,
    local_size,
    mpi_built,
    nccl_built,
)
from unison.data.specs import TensorSpec
from unison.optim import Adasum, Average, Compression, DistributedOptimizer, Sum

__version__ = "0.1.0"

# --- TF core names (tf.GradientTape, tf.Variable, tf.function, tensor functions) ------------------
# unison.__version__ stays unison's own version (what pip and bug reports need); TF programs that
# print tf.__version__ print it. Every name below is listed in docs/tf_api.md (generated).
from unison import train
from unison._dual import rank, size
from unison.autodiff import GradientTape, UnconnectedGradients
from unison.function import Function, function
from unison.ops import config, dtypes
from unison.ops import math as math
from unison.ops import random as random
from unison.ops.array import (
    Tensor,
    cast,
    concat,
    constant,
    convert_to_tensor,
    expand_dims,
    fill,
    gather,
    identity,
    is_tensor,
    newaxis,
    one_hot,
    ones,
    ones_like,
    range,
    reshape,
    shape,
    split,
    squeeze,
    stack,
    stop_gradient,
    tile,
    transpose,
    unstack,
    where,
    zeros,
    zeros_like,
)
from unison.ops.dtypes import (
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
)
from unison.ops.math import (
    abs,
    add,
    add_n,
    argmax,
    argmin,
    clip_by_value,
    cos,
    cumsum,
    divide,
    equal,
    exp,
    floor,
    floordiv,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    logical_and,
    logical_not,
    logical_or,
    matmul,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    pow,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_std,
    reduce_sum,
    reduce_variance,
    round,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    tanh,
    truediv,
)
from unison.ops.printing import tf_print as print
from unison.variables import Variable


def __getattr__(name: str) -> object:
    """``tf.<name>`` that unison does not implement: an error naming the torch equivalent.

    Submodules not imported yet (``unison.testing``, ...) are imported on first access.
    """
    import importlib
    import importlib.util

    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    from unison._unsupported import unsupported

    raise unsupported("tf", name)


# --- end of TF core names ----------------------------------------------------------------------------

__all__ = [
    "Adasum",
    "Average",
    "Compression",
    "DType",
    "DistributedOptimizer",
    "Function",
    "GradientTape",
    "Sum",
    "TensorSpec",
    "Tensor",
    "UnconnectedGradients",
    "Variable",
    "__version__",
    "abs",
    "add",
    "add_n",
    "allgather",
    "allreduce",
    "argmax",
    "argmin",
    "as_dtype",
    "barrier",
    "bfloat16",
    "bool",
    "broadcast",
    "broadcast_optimizer_state",
    "broadcast_parameters",
    "cast",
    "clip_by_value",
    "complex64",
    "complex128",
    "concat",
    "config",
    "constant",
    "convert_to_tensor",
    "cos",
    "cumsum",
    "data",
    "distribute",
    "divide",
    "double",
    "dtypes",
    "equal",
    "errors",
    "exp",
    "expand_dims",
    "fill",
    "float16",
    "float32",
    "float64",
    "floor",
    "floordiv",
    "function",
    "gather",
    "gloo_built",
    "greater",
    "greater_equal",
    "half",
    "identity",
    "init",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_tensor",
    "keras",
    "less",
    "less_equal",
    "local_rank",
    "local_size",
    "log",
    "logical_and",
    "logical_not",
    "logical_or",
    "math",
    "matmul",
    "maximum",
    "minimum",
    "mpi_built",
    "multiply",
    "nccl_built",
    "negative",
    "newaxis",
    "nn",
    "not_equal",
    "one_hot",
    "ones",
    "ones_like",
    "pow",
    "print",
    "random",
    "range",
    "rank",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_std",
    "reduce_sum",
    "reduce_variance",
    "reshape",
    "round",
    "shape",
    "sigmoid",
    "sign",
    "sin",
    "size",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "stop_gradient",
    "string",
    "subtract",
    "summary",
    "tanh",
    "tile",
    "train",
    "transpose",
    "truediv",
    "uint8",
    "unstack",
    "where",
    "zeros",
    "zeros_like",
]
