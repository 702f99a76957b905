"""``tf.train.ClusterDef``, ``JobDef``, ``ServerDef`` and ``CheckpointState`` as real protobuf messages.

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


def _server_file() -> descriptor_pb2.FileDescriptorProto:
    """``device_filters.proto`` and ``tensorflow_server.proto``'s ``ServerDef``.

    ``default_session_config`` is a ``ConfigProto`` whose fields are not declared here (TF's has
    dozens of graph-runtime options unison has no use for): its bytes are kept as unknown fields,
    so a ``ServerDef`` read from TF's bytes writes the same bytes back.
    """
    f = descriptor_pb2.FileDescriptorProto(
        name="tensorflow/core/protobuf/tensorflow_server.proto", package="tensorflow"
    )
    f.syntax = "proto3"
    f.dependency.append("tensorflow/core/protobuf/cluster.proto")
    task = f.message_type.add(name="TaskDeviceFilters")
    _add(task, "device_filters", 1, _F.TYPE_STRING, _F.LABEL_REPEATED)
    job = f.message_type.add(name="JobDeviceFilters")
    _add(job, "name", 1, _F.TYPE_STRING)
    entry = job.nested_type.add(name="TasksEntry")  # map<int32, TaskDeviceFilters> tasks = 2;
    entry.options.map_entry = True
    _add(entry, "key", 1, _F.TYPE_INT32)
    _add(entry, "value", 2, _F.TYPE_MESSAGE, type_name=".tensorflow.TaskDeviceFilters")
    _add(job, "tasks", 2, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, ".tensorflow.JobDeviceFilters.TasksEntry")
    filters = f.message_type.add(name="ClusterDeviceFilters")
    _add(filters, "jobs", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, ".tensorflow.JobDeviceFilters")
    f.message_type.add(name="ConfigProto")
    server = f.message_type.add(name="ServerDef")
    _add(server, "cluster", 1, _F.TYPE_MESSAGE, type_name=".tensorflow.ClusterDef")
    _add(server, "job_name", 2, _F.TYPE_STRING)
    _add(server, "task_index", 3, _F.TYPE_INT32)
    _add(server, "default_session_config", 4, _F.TYPE_MESSAGE, type_name=".tensorflow.ConfigProto")
    _add(server, "protocol", 5, _F.TYPE_STRING)
    _add(server, "port", 6, _F.TYPE_INT32)
    _add(server, "cluster_device_filters", 7, _F.TYPE_MESSAGE, type_name=".tensorflow.ClusterDeviceFilters")
    _add(server, "replica", 8, _F.TYPE_INT32)
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
for _file in (_cluster_file(), _server_file(), _checkpoint_state_file()):
    _POOL.Add(_file)


def _message(name: str) -> Any:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"tensorflow.{name}"))


JobDef = _message("JobDef")
ClusterDef = _message("ClusterDef")
CheckpointState = _message("CheckpointState")
ServerDef = _message("ServerDef")

__all__ = ["CheckpointState", "ClusterDef", "JobDef", "ServerDef"]
