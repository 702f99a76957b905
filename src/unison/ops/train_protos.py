"""``tf.train.ClusterDef``, ``tf.train.JobDef`` and ``CheckpointState`` as real protobuf messages.

Built like :mod:`unison.ops.example`: a ``FileDescriptorProto`` made in code mirrors TF's
``tensorflow/core/protobuf/cluster.proto`` and ``tensorflow/python/checkpoint/checkpoint_state.proto``
(package ``tensorflow``, proto3, TF's field numbers), in a private descriptor pool, so
``SerializeToString``/``FromString`` read and write TF's bytes and the classes never clash with
TensorFlow's own. ``CheckpointState`` is what ``tf.train.get_checkpoint_state`` returns, and
``text_format`` of it is the directory's ``checkpoint`` file.

Example:
    >>> job = JobDef(name="worker", tasks={0: "localhost:2222"})
    >>> ClusterDef(job=[job]).job[0].tasks[0]
    'localhost:2222'
"""

from __future__ import annotations

from typing import Any

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError:  # pragma: no cover - the extra is part of the test install
    raise ImportError(
        'tf.train.ClusterDef needs the protobuf package. Install it with `pip install "unison[tf]"` '
        "(or `pip install protobuf`)."
    ) from None

_F = descriptor_pb2.FieldDescriptorProto


def _add(message: Any, name: str, number: int, kind: int, label: int = _F.LABEL_OPTIONAL, type_name: str = "") -> None:
    field = message.field.add(name=name, number=number, type=kind, label=label)
    if type_name:
        field.type_name = type_name


def _cluster_file() -> descriptor_pb2.FileDescriptorProto:
    f = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/protobuf/cluster.proto", package="tensorflow")
    f.syntax = "proto3"
    job = f.message_type.add(name="JobDef")
    _add(job, "name", 1, _F.TYPE_STRING)
    entry = job.nested_type.add(name="TasksEntry")  # map<int32, string> tasks = 2;
    entry.options.map_entry = True
    _add(entry, "key", 1, _F.TYPE_INT32)
    _add(entry, "value", 2, _F.TYPE_STRING)
    _add(job, "tasks", 2, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, ".tensorflow.JobDef.TasksEntry")
    cluster = f.message_type.add(name="ClusterDef")
    _add(cluster, "job", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, ".tensorflow.JobDef")
    return f


def _checkpoint_state_file() -> descriptor_pb2.FileDescriptorProto:
    f = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/python/checkpoint/checkpoint_state.proto", package="tensorflow"
    )
    f.syntax = "proto3"
    state = f.message_type.add(name="CheckpointState")
    _add(state, "model_checkpoint_path", 1, _F.TYPE_STRING)
    _add(state, "all_model_checkpoint_paths", 2, _F.TYPE_STRING, _F.LABEL_REPEATED)
    _add(state, "all_model_checkpoint_timestamps", 3, _F.TYPE_DOUBLE, _F.LABEL_REPEATED)
    _add(state, "last_preserved_timestamp", 4, _F.TYPE_DOUBLE)
    return f


_POOL = descriptor_pool.DescriptorPool()
for _file in (_cluster_file(), _checkpoint_state_file()):
    _POOL.Add(_file)


def _message(name: str) -> Any:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"tensorflow.{name}"))


JobDef = _message("JobDef")
ClusterDef = _message("ClusterDef")
CheckpointState = _message("CheckpointState")

__all__ = ["CheckpointState", "ClusterDef", "JobDef"]
