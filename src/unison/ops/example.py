"""``tf.train.Example`` and its parts as real protobuf messages, wire-compatible with TF's.

The message classes are built at import from a ``FileDescriptorProto`` made in code that mirrors
TF's ``tensorflow/core/example/feature.proto`` and ``example.proto`` (package ``tensorflow``,
proto3, the same field numbers and types), so ``SerializeToString``/``FromString`` produce and
read exactly TF's bytes. They live in a private descriptor pool, so they do not clash with
TensorFlow's own classes when both are imported in one process. ``TensorProto`` (for
``tf.io.serialize_tensor``) mirrors ``tensor.proto``/``tensor_shape.proto`` the same way.

Needs the ``protobuf`` package (``pip install "unison[tf]"``).

Example:
    >>> import unison as tf
    >>> ex = tf.train.Example(features=tf.train.Features(feature={
    ...     "x": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 2.0]))}))
    >>> tf.train.Example.FromString(ex.SerializeToString()).features.feature["x"].float_list.value[:]
    [1.0, 2.0]
"""

from __future__ import annotations

from typing import Any

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError:  # pragma: no cover - the extra is part of the test install
    raise ImportError(
        'tf.train.Example needs the protobuf package. Install it with `pip install "unison[tf]"` '
        "(or `pip install protobuf`)."
    ) from None

_F = descriptor_pb2.FieldDescriptorProto


def _field(
    message: Any, name: str, number: int, kind: int, label: int = _F.LABEL_OPTIONAL, type_name: str = "", **opts: Any
) -> Any:
    field = message.field.add(name=name, number=number, type=kind, label=label)
    if type_name:
        field.type_name = type_name
    for key, value in opts.items():
        setattr(field, key, value)
    return field


def _map_field(message: Any, name: str, number: int, value_type: str) -> None:
    """A proto3 ``map<string, value_type>``: a nested ``<Name>Entry`` message with map_entry set."""
    entry = message.nested_type.add(name="".join(p.capitalize() for p in name.split("_")) + "Entry")
    entry.options.map_entry = True
    _field(entry, "key", 1, _F.TYPE_STRING)
    _field(entry, "value", 2, _F.TYPE_MESSAGE, type_name=value_type)
    _field(message, name, number, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, f".tensorflow.{message.name}.{entry.name}")


def _feature_file() -> descriptor_pb2.FileDescriptorProto:
    f = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/example/feature.proto", package="tensorflow")
    f.syntax = "proto3"
    _field(f.message_type.add(name="BytesList"), "value", 1, _F.TYPE_BYTES, _F.LABEL_REPEATED)
    floats = _field(f.message_type.add(name="FloatList"), "value", 1, _F.TYPE_FLOAT, _F.LABEL_REPEATED)
    floats.options.packed = True
    ints = _field(f.message_type.add(name="Int64List"), "value", 1, _F.TYPE_INT64, _F.LABEL_REPEATED)
    ints.options.packed = True
    feature = f.message_type.add(name="Feature")
    feature.oneof_decl.add(name="kind")
    for number, (name, kind) in enumerate(
        (("bytes_list", "BytesList"), ("float_list", "FloatList"), ("int64_list", "Int64List")), start=1
    ):
        _field(feature, name, number, _F.TYPE_MESSAGE, type_name=f".tensorflow.{kind}", oneof_index=0)
    _map_field(f.message_type.add(name="Features"), "feature", 1, ".tensorflow.Feature")
    feature_list = f.message_type.add(name="FeatureList")
    _field(feature_list, "feature", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, ".tensorflow.Feature")
    _map_field(f.message_type.add(name="FeatureLists"), "feature_list", 1, ".tensorflow.FeatureList")
    return f


def _example_file() -> descriptor_pb2.FileDescriptorProto:
    f = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/example/example.proto", package="tensorflow")
    f.syntax = "proto3"
    f.dependency.append("tensorflow/core/example/feature.proto")
    _field(f.message_type.add(name="Example"), "features", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.Features")
    seq = f.message_type.add(name="SequenceExample")
    _field(seq, "context", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.Features")
    _field(seq, "feature_lists", 2, _F.TYPE_MESSAGE, type_name=".tensorflow.FeatureLists")
    return f


def _tensor_file() -> descriptor_pb2.FileDescriptorProto:
    """``TensorShapeProto`` and ``TensorProto`` (the fields ``serialize_tensor`` writes; dtype as its enum's number)."""
    f = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/framework/tensor.proto", package="tensorflow")
    f.syntax = "proto3"
    shape = f.message_type.add(name="TensorShapeProto")
    dim = shape.nested_type.add(name="Dim")
    _field(dim, "size", 1, _F.TYPE_INT64)
    _field(dim, "name", 2, _F.TYPE_STRING)
    _field(shape, "dim", 2, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, ".tensorflow.TensorShapeProto.Dim")
    _field(shape, "unknown_rank", 3, _F.TYPE_BOOL)
    tensor = f.message_type.add(name="TensorProto")
    _field(tensor, "dtype", 1, _F.TYPE_INT32)  # TF's DataType enum: same varint on the wire
    _field(tensor, "tensor_shape", 2, _F.TYPE_MESSAGE, type_name=".tensorflow.TensorShapeProto")
    _field(tensor, "version_number", 3, _F.TYPE_INT32)
    _field(tensor, "tensor_content", 4, _F.TYPE_BYTES)
    for name, number, kind in (
        ("float_val", 5, _F.TYPE_FLOAT),
        ("double_val", 6, _F.TYPE_DOUBLE),
        ("int_val", 7, _F.TYPE_INT32),
        ("int64_val", 10, _F.TYPE_INT64),
        ("bool_val", 11, _F.TYPE_BOOL),
        ("half_val", 13, _F.TYPE_INT32),
        ("scomplex_val", 9, _F.TYPE_FLOAT),
        ("dcomplex_val", 12, _F.TYPE_DOUBLE),
        ("uint32_val", 16, _F.TYPE_UINT32),
        ("uint64_val", 17, _F.TYPE_UINT64),
    ):
        _field(tensor, name, number, kind, _F.LABEL_REPEATED).options.packed = True
    _field(tensor, "string_val", 8, _F.TYPE_BYTES, _F.LABEL_REPEATED)
    return f


_POOL = descriptor_pool.DescriptorPool()
for _file in (_feature_file(), _example_file(), _tensor_file()):
    _POOL.Add(_file)


def _message(name: str) -> Any:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"tensorflow.{name}"))


BytesList = _message("BytesList")
FloatList = _message("FloatList")
Int64List = _message("Int64List")
Feature = _message("Feature")
Features = _message("Features")
FeatureList = _message("FeatureList")
FeatureLists = _message("FeatureLists")
Example = _message("Example")
SequenceExample = _message("SequenceExample")
TensorProto = _message("TensorProto")
TensorShapeProto = _message("TensorShapeProto")

EXAMPLE_NAMES = (
    "BytesList",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
)

__all__ = [*EXAMPLE_NAMES, "TensorProto", "TensorShapeProto"]
