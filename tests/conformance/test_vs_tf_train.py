"""``tf.train`` against TensorFlow 2.21 (see tf_oracle.py for the rules).

Checkpoint tests write into a fresh temporary directory on each side and return what a program
sees: values, names and file names relative to that directory.
"""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf


def _tmp():
    import tempfile

    return tempfile.mkdtemp()


def _base(path):
    import os

    return None if path is None else os.path.basename(path)


# --- ClusterSpec and its protos --------------------------------------------------------------------
@same_as_tf("train.ClusterSpec")
def test_cluster_spec_accessors(tf):
    spec = tf.train.ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"], "chief": {0: "c0:2222"}})
    return (
        spec.jobs,
        spec.as_dict(),
        spec.num_tasks("worker"),
        spec.task_indices("worker"),
        spec.task_address("worker", 1),
        spec.job_tasks("ps"),
        bool(spec),
        spec == tf.train.ClusterSpec(spec.as_dict()),
    )


@same_as_tf("train.ClusterSpec", edge=True)
def test_cluster_spec_sparse_job(tf):
    spec = tf.train.ClusterSpec({"worker": {1: "w1:2222", 3: "w3:2222"}})
    return spec.as_dict(), spec.job_tasks("worker"), spec.task_indices("worker"), bool(tf.train.ClusterSpec({}))


@same_as_tf("train.ClusterSpec", edge=True)
def test_cluster_spec_unknown_job(tf):
    return tf.train.ClusterSpec({"worker": ["w0:2222"]}).num_tasks("ps")


@same_as_tf("train.ClusterSpec", edge=True)
def test_cluster_spec_unknown_task(tf):
    return tf.train.ClusterSpec({"worker": ["w0:2222"]}).task_address("worker", 3)


@same_as_tf("train.ClusterSpec", edge=True)
def test_cluster_spec_of_a_number(tf):
    return tf.train.ClusterSpec(5)


@same_as_tf("train.ClusterSpec", edge=True)
def test_cluster_spec_tasks_not_a_list(tf):
    return tf.train.ClusterSpec({"worker": 5})


@same_as_tf("train.ClusterDef", "train.JobDef", "train.ClusterSpec")
def test_cluster_def(tf):
    spec = tf.train.ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"]})
    cluster_def = spec.as_cluster_def()
    wire = cluster_def.SerializeToString()
    back = tf.train.ClusterDef.FromString(wire)
    return (
        [job.name for job in cluster_def.job],
        dict(cluster_def.job[1].tasks),
        wire,
        tf.train.ClusterSpec(back).as_dict(),
        tf.train.JobDef(name="w", tasks={0: "a:1"}).SerializeToString(),
    )


@same_as_tf("train.ClusterDef", "train.JobDef", edge=True)
def test_cluster_def_empty_and_bad_field(tf):
    empty = tf.train.ClusterDef().SerializeToString()
    try:
        tf.train.JobDef(name="w", tasks={"x": "a:1"})
    except Exception as exc:  # protobuf's own error class differs by runtime; the refusal is what counts
        refused = isinstance(exc, (TypeError, ValueError))
    return empty, refused, tf.train.ClusterSpec(tf.train.ClusterDef()).as_dict()


@same_as_tf("train.ServerDef")
def test_server_def(tf):
    spec = tf.train.ClusterSpec({"worker": ["w0:2222"], "ps": ["p0:2222"]})
    server_def = tf.train.ServerDef(
        cluster=spec.as_cluster_def(), job_name="worker", task_index=0, protocol="grpc", port=2222
    )
    wire = server_def.SerializeToString(deterministic=True)
    back = tf.train.ServerDef.FromString(wire)
    return wire, back.job_name, back.port, tf.train.ClusterSpec(back.cluster).as_dict()


@same_as_tf("train.ServerDef", edge=True)
def test_server_def_empty_and_bad_field(tf):
    try:
        tf.train.ServerDef(task_index="zero")
    except Exception as exc:  # protobuf's own error class differs by runtime; the refusal is what counts
        refused = isinstance(exc, (TypeError, ValueError))
    return tf.train.ServerDef().SerializeToString(), refused, tf.train.ServerDef().protocol


# --- Coordinator ------------------------------------------------------------------------------------
@same_as_tf("train.Coordinator")
def test_coordinator_stops_threads(tf):
    import threading

    coord = tf.train.Coordinator()
    counts = [0, 0]

    def work(i):
        with coord.stop_on_exception():
            while not coord.should_stop():
                counts[i] += 1
                if counts[i] == 3:
                    coord.request_stop()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in threads:
        coord.register_thread(t)
        t.start()
    coord.join()
    stopped = coord.should_stop()
    coord.clear_stop()
    return stopped, coord.should_stop(), coord.joined, max(counts) >= 3


@same_as_tf("train.Coordinator", edge=True)
def test_coordinator_reraises_the_first_exception(tf):
    import threading

    coord = tf.train.Coordinator()

    def fail():
        with coord.stop_on_exception():
            raise KeyError("boom")

    t = threading.Thread(target=fail)
    t.start()
    coord.join([t])


@same_as_tf("train.Coordinator", edge=True)
def test_coordinator_out_of_range_is_a_clean_stop(tf):
    coord = tf.train.Coordinator()
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "end"))
    coord.join([])
    other = tf.train.Coordinator(clean_stop_exception_types=(ValueError,))
    other.request_stop(ValueError("fine"))
    other.join([])
    return coord.should_stop(), other.should_stop()


# --- ExponentialMovingAverage ----------------------------------------------------------------------
@same_as_tf("train.ExponentialMovingAverage")
def test_ema(tf):
    v = tf.Variable(1.0)
    w = tf.Variable([1.0, -2.0], dtype=tf.float64)
    ema = tf.train.ExponentialMovingAverage(decay=0.9)
    ema.apply([v, w])
    seen = [ema.average(v).numpy(), ema.average(w).numpy()]
    for value in (3.0, 5.0, -1.0):
        v.assign(value)
        w.assign([value, value * 2])
        ema.apply([v, w])
        seen += [ema.average(v).numpy(), ema.average(w).numpy()]
    return seen, ema.average(w).dtype == tf.float64, ema.name, ema.average_name(v), ema.average(v).trainable


@same_as_tf("train.ExponentialMovingAverage", edge=True)
def test_ema_num_updates_and_zero_debias(tf):
    steps = tf.Variable(2)
    ema = tf.train.ExponentialMovingAverage(0.99, num_updates=steps, zero_debias=True, name="avg")
    v = tf.Variable(10.0, name="x")
    ema.apply([v])
    v.assign(0.0)
    ema.apply([v])
    first = ema.average(v).numpy()
    steps.assign(1000)
    ema.apply([v])
    return first, ema.average(v).numpy(), ema.average_name(v), ema.average(tf.Variable(1.0)) is None


@same_as_tf("train.ExponentialMovingAverage", edge=True)
def test_ema_of_an_int_variable(tf):
    return tf.train.ExponentialMovingAverage(0.9).apply([tf.Variable(1)])


@same_as_tf("train.ExponentialMovingAverage", edge=True)
def test_ema_of_a_tensor(tf):
    return tf.train.ExponentialMovingAverage(0.9).apply([tf.constant(1.0)])


# --- checkpoints ------------------------------------------------------------------------------------
@same_as_tf("train.Checkpoint", "train.latest_checkpoint", "train.get_checkpoint_state")
def test_checkpoint_save_restore(tf):
    d = _tmp()
    v = tf.Variable([1.0, 2.0])
    ckpt = tf.train.Checkpoint(v=v, step=tf.Variable(3))
    first = ckpt.save(d + "/ckpt")
    v.assign([5.0, 6.0])
    second = ckpt.save(d + "/ckpt")
    ckpt.restore(first)
    state = tf.train.get_checkpoint_state(d)
    return (
        _base(first),
        _base(second),
        v.numpy(),
        int(ckpt.save_counter),
        _base(tf.train.latest_checkpoint(d)),
        _base(state.model_checkpoint_path),
        [_base(p) for p in state.all_model_checkpoint_paths],
    )


@same_as_tf("train.Checkpoint", "train.latest_checkpoint", "train.get_checkpoint_state", edge=True)
def test_checkpoint_state_of_an_empty_directory(tf):
    d = _tmp()
    return tf.train.latest_checkpoint(d), tf.train.get_checkpoint_state(d)


@same_as_tf("train.Checkpoint", edge=True)
def test_checkpoint_of_a_number_is_an_error(tf):
    return tf.train.Checkpoint(x=3)


@same_as_tf("train.get_checkpoint_state", edge=True)
def test_checkpoint_state_with_another_file_name(tf):
    import os

    d = _tmp()
    with open(os.path.join(d, "state"), "w") as fh:
        fh.write('model_checkpoint_path: "a-2"\nall_model_checkpoint_paths: "a-1"\nall_model_checkpoint_paths: "a-2"\n')
    state = tf.train.get_checkpoint_state(d, latest_filename="state")
    return _base(state.model_checkpoint_path), [os.path.relpath(p, d) for p in state.all_model_checkpoint_paths]


@same_as_tf("train.CheckpointManager")
def test_checkpoint_manager_keeps_the_newest(tf):
    d = _tmp()
    v = tf.Variable(0.0)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=v), d, max_to_keep=2)
    paths = []
    for i in range(3):
        v.assign(float(i))
        paths.append(_base(manager.save()))
    return paths, [_base(p) for p in manager.checkpoints], _base(manager.latest_checkpoint)


@same_as_tf("train.CheckpointManager", edge=True)
def test_checkpoint_manager_before_any_save(tf):
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(1.0)), _tmp(), max_to_keep=None)
    return manager.latest_checkpoint, manager.checkpoints


@same_as_tf("train.checkpoints_iterator")
def test_checkpoints_iterator_yields_the_latest(tf):
    d = _tmp()
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    ckpt.save(d + "/ckpt")
    ckpt.save(d + "/ckpt")
    return [_base(p) for p in tf.train.checkpoints_iterator(d, timeout=0.01)]


@same_as_tf("train.checkpoints_iterator", edge=True)
def test_checkpoints_iterator_of_an_empty_directory(tf):
    calls = []

    def timeout_fn():
        calls.append(1)
        return True

    return list(tf.train.checkpoints_iterator(_tmp(), timeout=0.01, timeout_fn=timeout_fn)), len(calls)


@same_as_tf("train.CheckpointOptions")
def test_checkpoint_options(tf):
    d = _tmp()
    written = []
    options = tf.train.CheckpointOptions(experimental_write_callbacks=[lambda path: written.append(path)])
    path = tf.train.Checkpoint(v=tf.Variable(1.0)).write(d + "/w", options=options)
    o = tf.train.CheckpointOptions(enable_async=True)
    return [_base(p) for p in written] == [_base(path)], o.enable_async, o.experimental_enable_async_checkpoint


@same_as_tf("train.CheckpointOptions", edge=True)
def test_checkpoint_options_bad_sharding_callback(tf):
    return tf.train.CheckpointOptions(experimental_sharding_callback="shard")


@same_as_tf("train.list_variables", "train.load_variable", "train.load_checkpoint")
def test_reading_a_checkpoint(tf):
    d = _tmp()
    tf.train.Checkpoint(v=tf.Variable([1.0, 2.0]), step=tf.Variable(3)).save(d + "/ckpt")
    names = [n for n, _ in tf.train.list_variables(d) if not n.startswith("_")]
    reader = tf.train.load_checkpoint(d)
    return (
        names,
        [s for n, s in tf.train.list_variables(d) if not n.startswith("_")],
        tf.train.load_variable(d, "v/.ATTRIBUTES/VARIABLE_VALUE"),
        reader.get_tensor("step/.ATTRIBUTES/VARIABLE_VALUE"),
        reader.has_tensor("v/.ATTRIBUTES/VARIABLE_VALUE"),
    )


@same_as_tf("train.list_variables", "train.load_variable", "train.load_checkpoint", edge=True)
def test_reading_a_missing_variable(tf):
    d = _tmp()
    tf.train.Checkpoint(v=tf.Variable(1.0)).save(d + "/ckpt")
    return tf.train.load_variable(d, "nope")


@same_as_tf("train.load_checkpoint", "train.list_variables", edge=True)
def test_reading_an_empty_directory(tf):
    return tf.train.list_variables(_tmp())


@same_as_tf("train.experimental.PythonState")
def test_python_state_in_a_checkpoint(tf):
    class Counter(tf.train.experimental.PythonState):
        def __init__(self):
            self.n = 0

        def serialize(self):
            return str(self.n)

        def deserialize(self, string_value):
            self.n = int(string_value)

    c = Counter()
    c.n = 7
    path = tf.train.Checkpoint(c=c).save(_tmp() + "/ckpt")
    back = Counter()
    tf.train.Checkpoint(c=back).restore(path)
    return back.n


@same_as_tf("train.experimental.PythonState", edge=True)
def test_python_state_is_abstract(tf):
    return tf.train.experimental.PythonState()


# --- Example protos -----------------------------------------------------------------------------
@same_as_tf(
    "train.Example",
    "train.Features",
    "train.Feature",
    "train.BytesList",
    "train.FloatList",
    "train.Int64List",
)
def test_example_wire_bytes(tf):
    ex = tf.train.Example(
        features=tf.train.Features(
            feature={
                "f": tf.train.Feature(float_list=tf.train.FloatList(value=[1.5, -2.0])),
                "i": tf.train.Feature(int64_list=tf.train.Int64List(value=[3, -4])),
                "b": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"ab"])),
            }
        )
    )
    wire = ex.SerializeToString(deterministic=True)
    back = tf.train.Example.FromString(wire)
    return wire, list(back.features.feature["i"].int64_list.value)


@same_as_tf(
    "train.Example",
    "train.Features",
    "train.Feature",
    "train.BytesList",
    "train.FloatList",
    "train.Int64List",
    edge=True,
)
def test_example_empty_and_wrong_kind(tf):
    empty = tf.train.Example().SerializeToString()
    try:
        tf.train.Int64List(value=[1.5])
    except Exception as exc:
        refused = isinstance(exc, (TypeError, ValueError))
    return empty, refused, tf.train.Feature().WhichOneof("kind")


@same_as_tf("train.SequenceExample", "train.FeatureList", "train.FeatureLists")
def test_sequence_example_wire_bytes(tf):
    seq = tf.train.SequenceExample(
        feature_lists=tf.train.FeatureLists(
            feature_list={
                "t": tf.train.FeatureList(
                    feature=[tf.train.Feature(int64_list=tf.train.Int64List(value=[i])) for i in range(3)]
                )
            }
        )
    )
    return seq.SerializeToString(deterministic=True)


@same_as_tf("train.SequenceExample", "train.FeatureList", "train.FeatureLists", edge=True)
def test_sequence_example_empty(tf):
    seq = tf.train.SequenceExample.FromString(b"")
    return len(seq.feature_lists.feature_list), tf.train.FeatureList().SerializeToString(), np.int64(0)
