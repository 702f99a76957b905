"""unison: TensorFlow's distribution strategies and a distributed optimizer on PyTorch.

``import unison as tf`` runs a ``tf.distribute`` + ``tf.keras`` program on PyTorch.

Example:
    >>> import unison as tf
    >>> strategy = tf.distribute.MirroredStrategy()
    >>> strategy.num_replicas_in_sync
    1
"""

# --- TF core names (tf.GradientTape, tf.Variable, tf.function, tensor functions) ------------------
# unison.__version__ stays unison's own version (what pip and bug reports need); TF programs that
# print tf.__version__ print it. Every name below is listed in docs/tf_core_names.md (generated); docs/tf_api.md is the coverage report.
# First: OpenMP reads its wait policy once, when torch loads it (core/threads.py says why).
from unison.core import threads as _threads  # noqa: F401, I001
from unison import data, distribute, errors, keras, saved_model, train
from unison._faces import api_types as types
from unison._faces import dtypes as dtypes
from unison._faces import experimental as experimental
from unison._faces import io as io
from unison._faces import keras_saving as _keras_saving
from unison._faces import nn
from unison._faces import strings as strings
from unison._faces.type_specs import NoneTensorSpec, OptionalSpec, TypeSpec, type_spec_from_value
from unison.core import autodiff as autodiff
from unison.core import heap as _heap  # noqa: F401  importing it tunes glibc's heap for training steps
from unison.core import profiler
from unison.core import summary as summary  # tf.summary (TensorBoard event files)
from unison.core.function import Function, function
from unison.core.module import Module
from unison.core.tape import GradientTape, UnconnectedGradients
from unison.core.variable_creators import variable_creator_scope
from unison.core.variables import Variable
from unison.data.specs import TensorSpec

# --- Horovod's API beyond the basics (hvd.allreduce, DistributedGradientTape, callbacks, elastic) --
from unison.horovod import (
    DistributedGradientTape,
    SyncBatchNorm,
    allgather,
    allgather_object,
    allreduce,
    allreduce_,
    allreduce_async,
    allreduce_async_,
    alltoall,
    broadcast,
    broadcast_,
    broadcast_object,
    broadcast_variables,
    callbacks,
    elastic,
    global_process_set,
    grouped_allreduce,
    grouped_allreduce_,
    join,
    poll,
    reducescatter,
    synchronize,
)
from unison.horovod.basics import (
    barrier,
    broadcast_optimizer_state,
    broadcast_parameters,
    cross_rank,
    cross_size,
    gloo_built,
    init,
    is_initialized,
    local_rank,
    local_size,
    mpi_built,
    nccl_built,
    shutdown,
)
from unison.horovod.rank_size import rank, size
from unison.keras import initializers, losses, metrics, optimizers  # TF 2's aliases: tf.metrics is tf.keras.metrics

# More of TF's top level (each compared with TensorFlow in tests/conformance/test_vs_tf_array.py)
from unison.keras.initializers import Constant as constant_initializer  # TF 2's initializers are Keras's
from unison.keras.initializers import Ones as ones_initializer
from unison.keras.initializers import RandomNormal as random_normal_initializer
from unison.keras.initializers import RandomUniform as random_uniform_initializer
from unison.keras.initializers import Zeros as zeros_initializer
from unison.ops import audio as audio
from unison.ops import autograph as autograph
from unison.ops import bitwise as bitwise
from unison.ops import compat as compat
from unison.ops import config, debugging
from unison.ops import image as image
from unison.ops import linalg as linalg
from unison.ops import lookup as lookup
from unison.ops import math as math
from unison.ops import nest as nest
from unison.ops import queues as queue
from unison.ops import ragged as ragged
from unison.ops import random as random
from unison.ops import sets as sets
from unison.ops import signal as signal
from unison.ops import sparse as sparse
from unison.ops import tools as tools
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
from unison.ops.array_aliases import guarantee_const, parallel_stack
from unison.ops.array_more import (
    bitcast,
    broadcast_dynamic_shape,
    broadcast_static_shape,
    complex,
    dynamic_partition,
    dynamic_stitch,
    ensure_shape,
    get_static_value,
    histogram_fixed_width,
    histogram_fixed_width_bins,
    identity_n,
    realdiv,
    repeat,
    reverse_sequence,
    saturate_cast,
    sequence_mask,
    shape_n,
    slice,
    strided_slice,
    tensor_scatter_nd_max,
    tensor_scatter_nd_min,
    tensor_scatter_nd_sub,
    truncatediv,
    truncatemod,
    unique_with_counts,
    unravel_index,
)
from unison.ops.composite_specs import IndexedSlicesSpec, RaggedTensorSpec, SparseTensorSpec, TensorArraySpec
from unison.ops.control_flow import (
    TensorShape,
    cond,
    control_dependencies,
    device,
    executing_eagerly,
    get_logger,
    map_fn,
    while_loop,
)
from unison.ops.control_more import (
    AggregationMethod,
    VariableAggregation,
    VariableSynchronization,
    case,
    foldl,
    foldr,
    get_current_name_scope,
    gradients,
    group,
    hessians,
    init_scope,
    inside_function,
    is_symbolic_tensor,
    name_scope,
    no_op,
    scan,
    switch_case,
    timestamp,
    tuple,
)
from unison.ops.debugging import Assert, assert_equal, assert_greater, assert_less, assert_rank
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
    register_tensor_conversion_function,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from unison.ops.graph_era import CriticalSection, DeviceSpec, RegisterGradient, no_gradient, vectorized_map
from unison.ops.indexed_slices import IndexedSlices
from unison.ops.indexing import (
    argsort,
    boolean_mask,
    broadcast_to,
    eye,
    gather_nd,
    linspace,
    meshgrid,
    pad,
    reverse,
    roll,
    scatter_nd,
    searchsorted,
    sort,
    tensor_scatter_nd_add,
    tensor_scatter_nd_update,
    unique,
)
from unison.ops.linalg import eig, eigvals
from unison.ops.linalg import sqrtm as matrix_square_root
from unison.ops.math import (
    abs,
    acos,
    acosh,
    add,
    add_n,
    argmax,
    argmin,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    clip_by_global_norm,
    clip_by_norm,
    clip_by_value,
    cos,
    cosh,
    cumsum,
    divide,
    einsum,
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
    norm,
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
    scalar_mul,
    sigmoid,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    tensordot,
    truediv,
)
from unison.ops.hashing import fingerprint
from unison.ops.nn_extras import approx_top_k, conv, extract_volume_patches
from unison.ops.tensor_protos import make_ndarray, make_tensor_proto
from unison.ops.nn_spatial import batch_to_space, required_space_to_batch_paddings, space_to_batch, space_to_batch_nd
from unison.ops.printing import tf_print as print
from unison.ops.py_function import (
    custom_gradient,
    grad_pass_through,
    nondifferentiable_batch_function,
    numpy_function,
    py_function,
    recompute_grad,
)
from unison.ops.ragged import RaggedTensor, ragged_fill_empty_rows, ragged_fill_empty_rows_grad
from unison.ops.random_sampling import random_index_shuffle
from unison.ops.sparse import SparseTensor
from unison.ops.sparse_features import edit_distance
from unison.ops.strings import as_string
from unison.ops.tensor_array import TensorArray
from unison.optim import Adasum, Average, Compression, DistributedOptimizer, Sum
from unison.version import __version__

# tf.saved_model saves Keras models through Keras's own functions; it may not import Keras (Keras
# imports it), so the face, which imports both, connects them.
_keras_saving.connect()


def __getattr__(name: str) -> object:
    """``tf.<name>`` that unison does not implement: an error naming the torch equivalent.

    Submodules not imported yet (``unison.testing``, ...) are imported on first access.
    """
    import importlib
    import importlib.util

    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    from unison.ops._unsupported import unsupported

    raise unsupported("tf", name)


# --- end of TF core names ----------------------------------------------------------------------------

__all__ = [
    "DistributedGradientTape",
    "SyncBatchNorm",
    "allgather_object",
    "allreduce_",
    "allreduce_async",
    "allreduce_async_",
    "alltoall",
    "broadcast_",
    "broadcast_object",
    "broadcast_variables",
    "callbacks",
    "cross_rank",
    "cross_size",
    "elastic",
    "global_process_set",
    "grouped_allreduce",
    "grouped_allreduce_",
    "is_initialized",
    "join",
    "poll",
    "reducescatter",
    "shutdown",
    "synchronize",
    "Adasum",
    "Average",
    "Compression",
    "DType",
    "DistributedOptimizer",
    "Function",
    "GradientTape",
    "Module",
    "RaggedTensor",
    "IndexedSlices",
    "IndexedSlicesSpec",
    "RaggedTensorSpec",
    "SparseTensorSpec",
    "TensorArraySpec",
    "SparseTensor",
    "TensorArray",
    "Sum",
    "TensorShape",
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
    "argsort",
    "as_dtype",
    "barrier",
    "bitwise",
    "bfloat16",
    "bool",
    "boolean_mask",
    "broadcast",
    "broadcast_optimizer_state",
    "broadcast_parameters",
    "broadcast_to",
    "cast",
    "clip_by_global_norm",
    "clip_by_norm",
    "clip_by_value",
    "complex64",
    "complex128",
    "concat",
    "cond",
    "config",
    "debugging",
    "constant",
    "control_dependencies",
    "convert_to_tensor",
    "cos",
    "cumsum",
    "custom_gradient",
    "data",
    "device",
    "distribute",
    "divide",
    "double",
    "dtypes",
    "edit_distance",
    "eig",
    "eigvals",
    "einsum",
    "equal",
    "errors",
    "executing_eagerly",
    "exp",
    "expand_dims",
    "eye",
    "fill",
    "float16",
    "float32",
    "float64",
    "floor",
    "floordiv",
    "function",
    "gather",
    "gather_nd",
    "get_logger",
    "gloo_built",
    "grad_pass_through",
    "greater",
    "greater_equal",
    "half",
    "identity",
    "image",
    "init",
    "initializers",
    "io",
    "compat",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_tensor",
    "keras",
    "less",
    "less_equal",
    "linalg",
    "linspace",
    "local_rank",
    "local_size",
    "log",
    "logical_and",
    "logical_not",
    "logical_or",
    "lookup",
    "losses",
    "map_fn",
    "math",
    "matmul",
    "matrix_square_root",
    "maximum",
    "meshgrid",
    "metrics",
    "minimum",
    "mpi_built",
    "multiply",
    "nccl_built",
    "negative",
    "nest",
    "newaxis",
    "nn",
    "norm",
    "not_equal",
    "numpy_function",
    "one_hot",
    "ones",
    "ones_like",
    "optimizers",
    "pad",
    "pow",
    "print",
    "profiler",
    "py_function",
    "ragged",
    "ragged_fill_empty_rows",
    "ragged_fill_empty_rows_grad",
    "random_index_shuffle",
    "random_index_shuffle",
    "random",
    "range",
    "rank",
    "recompute_grad",
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
    "reverse",
    "roll",
    "round",
    "saved_model",
    "scatter_nd",
    "searchsorted",
    "sets",
    "shape",
    "sigmoid",
    "sign",
    "signal",
    "sin",
    "size",
    "sort",
    "sparse",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "stop_gradient",
    "string",
    "strings",
    "subtract",
    "summary",
    "tanh",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_update",
    "tensordot",
    "tile",
    "train",
    "transpose",
    "truediv",
    "uint8",
    "unique",
    "unstack",
    "where",
    "while_loop",
    "zeros",
    "zeros_like",
]

__all__ += [  # more of TF's top level (see the block above the Keras connection)
    "approx_top_k",
    "conv",
    "extract_volume_patches",
    "fingerprint",
    "make_ndarray",
    "make_tensor_proto",
    "resource",
    "variable_creator_scope",
    "variant",
    "AggregationMethod", "VariableAggregation", "VariableSynchronization", "acos", "acosh", "asin", "asinh", "atan",
    "atan2", "atanh", "bitcast", "broadcast_dynamic_shape", "broadcast_static_shape", "case", "complex",
    "constant_initializer", "cosh", "dynamic_partition", "dynamic_stitch", "ensure_shape", "foldl", "foldr",
    "get_current_name_scope", "get_static_value", "gradients", "group", "hessians", "histogram_fixed_width",
    "histogram_fixed_width_bins", "identity_n", "init_scope", "inside_function", "is_symbolic_tensor",
    "name_scope", "no_op", "ones_initializer", "random_normal_initializer", "random_uniform_initializer",
    "realdiv", "repeat", "reverse_sequence", "saturate_cast", "scalar_mul", "scan", "sequence_mask", "shape_n",
    "sinh", "slice", "strided_slice", "switch_case", "tan", "tensor_scatter_nd_max", "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub", "timestamp", "truncatediv", "truncatemod", "tuple", "unique_with_counts",
    "unravel_index", "zeros_initializer", "Assert", "as_string", "assert_equal", "assert_greater", "assert_less",
    "assert_rank", "audio", "autodiff", "CriticalSection", "DeviceSpec", "RegisterGradient", "no_gradient", "vectorized_map",
    "NoneTensorSpec", "OptionalSpec", "TypeSpec", "type_spec_from_value", "uint16", "uint32", "uint64", "register_tensor_conversion_function", "batch_to_space", "required_space_to_batch_paddings", "space_to_batch",
    "space_to_batch_nd", "experimental", "queue", "types", "autograph", "guarantee_const", "parallel_stack", "tools",
    "nondifferentiable_batch_function",
]  # fmt: skip
