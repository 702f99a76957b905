"""More of TF's top level against TensorFlow 2.21: tf.autograph, tf.autodiff, tf.tools.docs,
tf.dtypes' functions and float8 types, tf.experimental's eager names, the top-level aliases."""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf

DOC_MARKS = (
    "tools.docs.doc_controls.set_deprecated",
    "tools.docs.doc_controls.do_not_generate_docs",
    "tools.docs.doc_controls.do_not_doc_inheritable",
    "tools.docs.doc_controls.for_subclass_implementers",
    "tools.docs.doc_controls.do_not_doc_in_subclasses",
    "tools.docs.doc_controls.doc_private",
    "tools.docs.doc_controls.doc_in_current_and_subclasses",
)
DOC_HEADERS = (
    "tools.docs.doc_controls.header",
    "tools.docs.doc_controls.inheritable_header",
    "tools.docs.doc_controls.get_header",
    "tools.docs.doc_controls.get_inheritable_header",
)
DOC_TYPES = ("tools.docs.doc_controls.T", "tools.docs.doc_controls.TypeVar", "tools.docs.doc_controls.Optional")
FLOAT8 = ("float8_e4m3fn", "float8_e5m2")  # TF 2.21 has no CPU cast to the *fnuz types
FLOAT8_NAMES = (
    "dtypes.experimental.float8_e4m3fn",
    "dtypes.experimental.float8_e5m2",
    "experimental.float8_e4m3fn",
    "experimental.float8_e5m2",
)


def _marks(obj):
    return sorted(name for name in vars(obj) if name.startswith("_tf_docs"))


@pytest.mark.parametrize("mark", DOC_MARKS)
@same_as_tf(*DOC_MARKS)
def test_doc_marks_set_tfs_attribute_and_return_the_object(tf, mark):
    decorate = getattr(tf.tools.docs.doc_controls, mark.rsplit(".", 1)[1])

    def method(x):
        return x + 1

    class Layer:
        pass

    return decorate(method) is method, decorate(Layer) is Layer, _marks(method), _marks(Layer), method(1)


@same_as_tf(*DOC_MARKS, edge=True)
def test_doc_marks_are_not_inherited_as_own_attributes(tf):
    dc = tf.tools.docs.doc_controls

    @dc.do_not_doc_inheritable
    class Base:
        pass

    class Child(Base):
        pass

    marked = [getattr(dc, m.rsplit(".", 1)[1])(type(f"C{i}", (), {})) for i, m in enumerate(DOC_MARKS)]
    return _marks(Child), hasattr(Child, "_tf_docs_do_not_doc_inheritable"), [_marks(c) for c in marked]


@same_as_tf(*DOC_HEADERS)
def test_doc_headers(tf):
    dc = tf.tools.docs.doc_controls

    @dc.header("Experimental API")
    class Base:
        pass

    class Child(Base):
        pass

    @dc.inheritable_header("Other")
    class Third:
        pass

    return dc.get_header(Child), dc.get_inheritable_header(Base), dc.get_header(Third)


@same_as_tf(*DOC_HEADERS, edge=True)
def test_doc_header_of_an_unmarked_object_is_none(tf):
    dc = tf.tools.docs.doc_controls
    return dc.get_header(len), dc.get_inheritable_header(3)


@same_as_tf(*DOC_TYPES)
def test_doc_typing_names(tf):
    dc = tf.tools.docs.doc_controls
    return repr(dc.T), dc.TypeVar("U").__name__, repr(dc.Optional[int])


@same_as_tf(*DOC_TYPES, edge=True)
def test_doc_typing_names_are_typings(tf):
    import typing

    dc = tf.tools.docs.doc_controls
    return dc.TypeVar is typing.TypeVar, dc.Optional is typing.Optional, isinstance(dc.T, typing.TypeVar)


AUTOGRAPH = ("autograph.to_graph", "autograph.to_code")


def _relu(x):
    if x > 0:
        return x
    return 0.0 * x


@same_as_tf(*AUTOGRAPH)
def test_autograph_converted_function_computes_the_same(tf):
    converted = tf.autograph.to_graph(_relu)
    code = tf.autograph.to_code(_relu)
    compile(code, "<autograph>", "exec")  # valid Python, both sides
    return converted(tf.constant(3.0)), converted(tf.constant(-2.0)), isinstance(code, str), "def " in code


@same_as_tf(*AUTOGRAPH, edge=True)
def test_autograph_rejects_what_is_not_a_function(tf):
    try:
        tf.autograph.to_code(3)
    except Exception as error:  # TF: its ConversionError (an Exception), unison: TypeError
        return "raised", "3" in str(error)
    return "returned"


AUTOGRAPH_DIRECTIVES = (
    "autograph.set_verbosity",
    "autograph.trace",
    "autograph.experimental.do_not_convert",
    "autograph.experimental.set_loop_options",
    "autograph.experimental.Feature",
)


@same_as_tf(*AUTOGRAPH_DIRECTIVES)
def test_autograph_directives_in_eager_code(tf):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tf.autograph.trace("x is", 3)
    tf.autograph.set_verbosity(0)

    @tf.autograph.experimental.do_not_convert
    def double(x):
        return 2 * x

    @tf.autograph.experimental.do_not_convert()
    def triple(x):
        return 3 * x

    total = tf.constant(0)
    for i in range(4):
        tf.autograph.experimental.set_loop_options(maximum_iterations=10, parallel_iterations=2)
        total += i
    feature = tf.autograph.experimental.Feature
    return (
        out.getvalue(),
        double(tf.constant(2)),
        triple(2),
        double.__name__,
        total,
        sorted(f.value for f in feature),
        feature("LISTS").name,
    )


@same_as_tf(*AUTOGRAPH_DIRECTIVES, edge=True)
def test_autograph_directive_edge_cases(tf):
    out = []
    try:
        tf.autograph.experimental.Feature("NOT_A_FEATURE")
    except ValueError:
        out.append("bad feature")
    tf.autograph.trace()  # prints an empty line on both sides
    out.append(tf.autograph.experimental.do_not_convert(lambda: "kept")())
    return out


@same_as_tf("autodiff.GradientTape", "autodiff.ForwardAccumulator")
def test_forward_accumulator_jvps(tf):
    x = tf.constant([1.0, 2.0, 3.0])
    v = tf.Variable([[0.5, -1.0], [2.0, 0.25]])
    with tf.autodiff.ForwardAccumulator(
        primals=[x, v], tangents=[tf.constant([1.0, 0.0, 2.0]), tf.ones([2, 2])]
    ) as acc:
        y = tf.sin(x) * x
        z = tf.reduce_sum(tf.matmul(v, v))
    with tf.autodiff.GradientTape() as tape:
        tape.watch(x)
        w = tf.reduce_sum(x**3)
    return acc.jvp(y), acc.jvp(z), acc.jvp({"both": [y, z]}), tape.gradient(w, x)


@same_as_tf("autodiff.GradientTape", "autodiff.ForwardAccumulator", edge=True)
def test_forward_accumulator_unconnected_and_mismatched(tf):
    x = tf.constant(2.0)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        unrelated = tf.constant([1.0, 2.0]) * 3.0
    out = [acc.jvp(unrelated), acc.jvp(unrelated, unconnected_gradients=tf.UnconnectedGradients.ZERO)]
    with tf.autodiff.GradientTape() as tape:
        y = tf.constant(3.0) * 2.0
    out.append(tape.gradient(y, x))
    return out


DTYPE_FUNCTIONS = ("dtypes.cast", "dtypes.complex", "dtypes.saturate_cast")


@same_as_tf(*DTYPE_FUNCTIONS)
def test_dtypes_namespace_functions(tf):
    x = tf.constant([1.7, -2.5, 300.0])
    return (
        tf.dtypes.cast(x, tf.int32),
        tf.dtypes.complex(x, tf.constant([1.0, 0.0, -1.0])),
        tf.dtypes.saturate_cast(x, tf.uint8),
    )


@same_as_tf(*DTYPE_FUNCTIONS, edge=True)
def test_dtypes_namespace_functions_edge(tf):
    empty = tf.zeros([0, 2])
    out = [tf.dtypes.cast(empty, tf.int64), tf.dtypes.saturate_cast(tf.constant([-1e10, 1e10]), tf.int8)]
    try:
        tf.dtypes.complex(tf.constant([1.0]), tf.constant([1.0], dtype=tf.float64))
    except (TypeError, ValueError, tf.errors.InvalidArgumentError) as error:
        out.append(type(error).__name__ in ("TypeError", "ValueError", "InvalidArgumentError"))
    return out


@pytest.mark.parametrize("kind", FLOAT8)
@same_as_tf(*FLOAT8_NAMES)
def test_float8_casts_round_trip(tf, kind):
    x = tf.constant([0.1, 1.5, -2.0, 3.3, 0.0, 17.0])
    a = tf.cast(x, getattr(tf.dtypes.experimental, kind))
    b = tf.cast(x, getattr(tf.experimental, kind))
    return (
        tf.cast(a, tf.float32),
        tf.cast(b, tf.float32),
        getattr(tf.experimental, kind) == getattr(tf.dtypes.experimental, kind),
    )


@pytest.mark.parametrize("kind", FLOAT8)
@same_as_tf(*FLOAT8_NAMES, edge=True)
def test_float8_tiny_and_nan(tf, kind):
    x = tf.constant([1e-9, float("nan"), -0.0, 1e-3])
    return tf.cast(tf.cast(x, getattr(tf.experimental, kind)), tf.float32)


EXPERIMENTAL = ("experimental.async_scope", "experimental.async_clear_error", "experimental.function_executor_type")


@same_as_tf(*EXPERIMENTAL)
def test_async_scope_and_executor_type(tf):
    with tf.experimental.async_scope():
        y = tf.constant([1.0, 2.0]) * 3.0
    tf.experimental.async_clear_error()
    with tf.experimental.function_executor_type(None):
        z = tf.function(lambda t: t + 1)(y)
    return y, z


@same_as_tf(*EXPERIMENTAL, edge=True)
def test_async_scope_raises_errors_by_its_end(tf):
    out = []
    try:
        with tf.experimental.async_scope():
            tf.debugging.assert_equal(tf.constant(1), tf.constant(2))
    except tf.errors.InvalidArgumentError:
        out.append("raised")
    tf.experimental.async_clear_error()
    out.append(tf.constant(1) + 1)
    return out


@same_as_tf("experimental.Optional")
def test_experimental_optional(tf):
    some = tf.experimental.Optional.from_value({"a": tf.constant([1, 2])})
    return some.has_value(), some.get_value()


@same_as_tf("experimental.Optional", edge=True)
def test_experimental_optional_empty(tf):
    none = tf.experimental.Optional.empty(tf.TensorSpec([], tf.int32))
    try:
        none.get_value()
    except tf.errors.InvalidArgumentError:
        return none.has_value(), "no value"
    return none.has_value(), "got a value"


ALIASES = ("assert_equal", "assert_greater", "assert_less", "assert_rank", "Assert")


@same_as_tf(*ALIASES)
def test_top_level_asserts_pass(tf):
    x = tf.constant([1, 2])
    return (
        tf.assert_equal(x, x),
        tf.assert_greater(x, 0),
        tf.assert_less(x, 3),
        tf.assert_rank(x, 1),
        tf.Assert(tf.constant(True), [x]),
    )


@pytest.mark.parametrize("which", ALIASES)
@same_as_tf(*ALIASES, edge=True)
def test_top_level_asserts_fail(tf, which):
    x = tf.constant([1, 2])
    calls = {
        "assert_equal": lambda: tf.assert_equal(x, tf.constant([1, 3])),
        "assert_greater": lambda: tf.assert_greater(x, 1),
        "assert_less": lambda: tf.assert_less(x, 2),
        "assert_rank": lambda: tf.assert_rank(x, 2),
        "Assert": lambda: tf.Assert(tf.constant(False), [x]),
    }
    try:
        calls[which]()
    except (tf.errors.InvalidArgumentError, ValueError) as error:
        return type(error).__name__
    return "passed"


@same_as_tf("guarantee_const", "as_string")
def test_guarantee_const_and_as_string(tf):
    return (
        tf.guarantee_const(tf.constant([1.5, 2.0])),
        tf.as_string(tf.constant([1.5, -2.25]), precision=2),
        tf.as_string(tf.constant([7, 42]), width=4, fill="0"),
    )


@same_as_tf("guarantee_const", "as_string", edge=True)
def test_guarantee_const_and_as_string_edge(tf):
    return tf.guarantee_const(tf.zeros([0])), tf.as_string(tf.constant([True, False])), tf.as_string(tf.constant([]))


TYPES = (
    "types.experimental.Callable",
    "types.experimental.GenericFunction",
    "types.experimental.PolymorphicFunction",
    "types.experimental.ConcreteFunction",
    "types.experimental.AtomicFunction",
    "types.experimental.FunctionType",
    "types.experimental.TraceType",
    "types.experimental.SupportsTracingProtocol",
    "types.experimental.TensorLike",
)


@same_as_tf(*TYPES)
def test_abstract_types_of_functions_and_specs(tf):
    T = tf.types.experimental
    poly = tf.function(lambda x: x * 2)
    concrete = poly.get_concrete_function(tf.TensorSpec([], tf.float32))

    class Traced:
        def __tf_tracing_type__(self, context):
            return None

    return (
        [
            isinstance(poly, t)
            for t in (T.Callable, T.GenericFunction, T.PolymorphicFunction, T.ConcreteFunction, T.AtomicFunction)
        ],
        [isinstance(concrete, t) for t in (T.Callable, T.ConcreteFunction, T.PolymorphicFunction, T.AtomicFunction)],
        concrete(tf.constant(3.0)),
        issubclass(T.FunctionType, __import__("inspect").Signature),
        [
            isinstance(s, T.TraceType)
            for s in (tf.TensorSpec([2], tf.int32), tf.RaggedTensorSpec([None, None], tf.int32), 3)
        ],
        isinstance(Traced(), T.SupportsTracingProtocol),
        [
            isinstance(v, T.TensorLike)
            for v in (tf.constant(1.0), 3, 2.5, "s", [1, 2], (1,), __import__("numpy").ones(2))
        ],
    )


@same_as_tf(*TYPES, edge=True)
def test_abstract_types_reject_other_values(tf):
    T = tf.types.experimental
    return (
        [isinstance(v, T.TensorLike) for v in (None, {"a": 1}, object())],
        isinstance(object(), T.SupportsTracingProtocol),
        [isinstance(f, T.Callable) for f in (len, lambda: 1)],
        isinstance(tf.SparseTensorSpec([2, 2], tf.float32), T.TraceType),
    )


AUDIO = ("audio.decode_wav", "audio.encode_wav")


@same_as_tf(*AUDIO)
def test_wav_round_trip(tf):
    audio = tf.constant([[0.0, 0.5], [-0.25, 1.0], [0.999, -1.0], [0.1234, -0.5678]])
    wav = tf.audio.encode_wav(audio, 22050)
    mono = tf.audio.encode_wav(audio[:, :1], tf.constant(8000))
    return (
        wav,
        tf.audio.decode_wav(wav),
        tf.audio.decode_wav(mono, desired_channels=2),
        tf.audio.decode_wav(wav, desired_channels=1, desired_samples=6),
        tf.audio.decode_wav(wav, desired_samples=2),
    )


@same_as_tf(*AUDIO, edge=True)
def test_wav_clipping_empty_and_bad_bytes(tf):
    out = [
        tf.audio.encode_wav(tf.constant([[1.5], [-2.0]]), 100),
        tf.audio.decode_wav(tf.audio.encode_wav(tf.zeros([0, 1]), 100)),
    ]
    try:
        tf.audio.decode_wav(tf.constant(b"not a wav file at all"))
    except tf.errors.InvalidArgumentError:
        out.append("not a wav")
    return out


DLPACK = ("experimental.dlpack.to_dlpack", "experimental.dlpack.from_dlpack")


@same_as_tf(*DLPACK)
def test_dlpack_round_trip(tf):
    x = tf.reshape(tf.range(6, dtype=tf.float32), [2, 3])
    ints = tf.constant([1, 2, 3], tf.int64)
    return (
        tf.experimental.dlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(x)),
        tf.experimental.dlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(ints)),
    )


@same_as_tf(*DLPACK, edge=True)
def test_dlpack_of_empty_and_scalar(tf):
    return (
        tf.experimental.dlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(tf.zeros([0, 4]))),
        tf.experimental.dlpack.from_dlpack(tf.experimental.dlpack.to_dlpack(tf.constant(2.5, tf.float64))),
    )


def _extension_types(tf):
    # explicit annotation dicts: this module's `from __future__ import annotations` would make them strings
    class Point(tf.experimental.ExtensionType):
        __annotations__ = {"x": int, "label": str}
        label = "p"

    class Masked(tf.experimental.ExtensionType):
        __annotations__ = {"values": tf.Tensor, "mask": tf.Tensor}

        def __validate__(self):
            self.values.shape.__len__()  # the fields are converted before __validate__ runs
            if self.values.shape != self.mask.shape:
                raise ValueError("values and mask shapes differ")

        def masked_sum(self):
            return tf.reduce_sum(tf.where(self.mask, self.values, tf.zeros_like(self.values)))

    class Scaled(tf.experimental.ExtensionType):
        __annotations__ = {"base": tf.Tensor, "shape": tf.TensorShape}

        def __init__(self, base, factor):
            self.base = tf.convert_to_tensor(base) * factor
            self.shape = self.base.shape

    return Point, Masked, Scaled


@same_as_tf("experimental.ExtensionType")
def test_extension_type_fields(tf):
    Point, Masked, Scaled = _extension_types(tf)
    m = Masked([1.0, 2.0, 3.0], [True, False, True])
    s = Scaled([1, 2], 3)
    return (
        repr(Point(3)),
        Point(x=4, label="q").label,
        m.values,
        m.mask.dtype == tf.bool,
        m.masked_sum(),
        m == Masked([1.0, 2.0, 3.0], [True, False, True]),
        m != Masked([1.0, 2.0, 4.0], [True, False, True]),
        s.base,
        list(s.shape),
        isinstance(m, tf.experimental.ExtensionType),
    )


@same_as_tf("experimental.ExtensionType", edge=True)
def test_extension_type_errors(tf):
    Point, Masked, _ = _extension_types(tf)
    out = []
    m = Masked([1, 2], [True, False])
    try:
        m.values = tf.constant([3, 4])
    except AttributeError as error:
        out.append(str(error))
    for make in (lambda: Point("s"), lambda: Point(), lambda: Masked([1, 2], [True])):
        try:
            make()
        except (TypeError, ValueError) as error:
            out.append(type(error).__name__)
    try:
        hash(Point(1))
    except TypeError:
        out.append("unhashable")
    return out
