"""The rest of the core surface against TensorFlow 2.21: tf.summary, tf.profiler, tf.saved_model round
trips of a tf.Module, tf.data's iterator and options, the loss helpers of tf.nn, a few top-level names.

Files go to a fresh temporary folder per run; what is compared is what a program observes (values
read back, files that exist), not TF's internal file bytes.
"""

from __future__ import annotations

import os
import tempfile

from tf_oracle import same_as_tf

SUMMARY = (
    "summary.create_file_writer",
    "summary.create_noop_writer",
    "summary.SummaryWriter",
    "summary.scalar",
    "summary.histogram",
    "summary.text",
    "summary.experimental.get_step",
    "summary.experimental.set_step",
    "summary.trace_on",
    "summary.trace_off",
    "summary.trace_export",
)


@same_as_tf(*SUMMARY)
def test_summaries_write_event_files(tf):
    root = tempfile.mkdtemp()
    writer = tf.summary.create_file_writer(root)
    with writer.as_default(step=3):
        wrote = [
            bool(tf.summary.scalar("loss", 0.5)),
            bool(tf.summary.histogram("w", tf.constant([1.0, 2.0, 2.5]))),
            bool(tf.summary.text("note", "hello")),
        ]
        step = tf.summary.experimental.get_step()
    writer.flush()
    tf.summary.experimental.set_step(7)
    after = tf.summary.experimental.get_step()
    tf.summary.experimental.set_step(None)
    files = [f for f in os.listdir(root) if f.startswith("events.out.tfevents")]
    return wrote, int(step), int(after), len(files), isinstance(writer, tf.summary.SummaryWriter)


@same_as_tf(*SUMMARY, edge=True)
def test_summaries_without_a_default_writer_write_nothing(tf):
    noop = tf.summary.create_noop_writer()
    with noop.as_default():
        inside = bool(tf.summary.scalar("x", 1.0, step=1))
    tf.summary.trace_on(graph=True, profiler=False)
    tf.summary.trace_off()
    return bool(tf.summary.scalar("x", 1.0, step=1)), inside, tf.summary.experimental.get_step()


PROFILER = (
    "profiler.experimental.start",
    "profiler.experimental.stop",
    "profiler.experimental.Profile",
    "profiler.experimental.Trace",
    "profiler.experimental.ProfilerOptions",
)


@same_as_tf(*PROFILER)
def test_profiler_writes_a_trace_folder(tf):
    root = tempfile.mkdtemp()
    tf.profiler.experimental.start(root, options=tf.profiler.experimental.ProfilerOptions(host_tracer_level=2))
    with tf.profiler.experimental.Trace("train", step_num=1, _r=1):
        _ = tf.reduce_sum(tf.ones([16, 16]))
    tf.profiler.experimental.stop()
    with tf.profiler.experimental.Profile(root):
        _ = tf.reduce_sum(tf.ones([4]))
    # TF writes an .xplane.pb under plugins/profile/, unison torch's trace (docs/tf_core.md): both write one
    return any(files for _, _, files in os.walk(root))


@same_as_tf(*PROFILER, edge=True)
def test_profiler_stop_without_start_is_an_unavailable_error(tf):
    return tf.profiler.experimental.stop()


SAVED = (
    "saved_model.save",
    "saved_model.load",
    "saved_model.contains_saved_model",
    "saved_model.SaveOptions",
    "saved_model.LoadOptions",
)


@same_as_tf(*SAVED, rtol=1e-6)
def test_saved_model_round_trip_of_a_module(tf):
    class Scale(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([[2.0, -1.0], [0.5, 3.0]])

        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
        def __call__(self, x):
            return tf.matmul(x, self.w)

    root = os.path.join(tempfile.mkdtemp(), "scale")
    module = Scale()
    tf.saved_model.save(module, root, options=tf.saved_model.SaveOptions())
    loaded = tf.saved_model.load(root, options=tf.saved_model.LoadOptions())
    # calling `loaded` needs the class here in unison (it keeps variables, not traced functions:
    # docs/tf_core.md), so the comparison is of what both restore
    return (
        tf.saved_model.contains_saved_model(root),
        module(tf.constant([[1.0, 2.0]])),
        loaded.w.numpy(),
    )


@same_as_tf(*SAVED, edge=True)
def test_contains_saved_model_of_an_empty_folder(tf):
    return tf.saved_model.contains_saved_model(tempfile.mkdtemp())


LOSS = ("nn.compute_average_loss", "nn.scale_regularization_loss")


@same_as_tf(*LOSS, rtol=1e-6)
def test_loss_helpers_outside_a_strategy(tf):
    per_example = tf.constant([1.0, 2.0, 3.0, 6.0])
    return (
        tf.nn.compute_average_loss(per_example),
        tf.nn.compute_average_loss(per_example, global_batch_size=8),
        tf.nn.compute_average_loss(per_example, sample_weight=tf.constant([1.0, 0.0, 1.0, 0.5])),
        tf.nn.scale_regularization_loss(tf.constant(0.4)),
    )


@same_as_tf(*LOSS, edge=True)
def test_loss_helpers_on_an_empty_batch(tf):
    return tf.nn.compute_average_loss(tf.zeros([0])), tf.nn.scale_regularization_loss(
        [tf.constant(1.0), tf.constant(2.0)]
    )


DATA = (
    "data.Iterator",
    "data.ThreadingOptions",
    "data.experimental.AUTOTUNE",
    "data.experimental.AutoShardPolicy",
    "data.experimental.DistributeOptions",
    "data.experimental.INFINITE_CARDINALITY",
    "data.experimental.UNKNOWN_CARDINALITY",
)


@same_as_tf(*DATA)
def test_iterators_and_options(tf):
    ds = tf.data.Dataset.range(3)
    it = iter(ds)
    first = next(it)
    options = tf.data.Options()
    options.threading.private_threadpool_size = 2
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return (
        isinstance(it, tf.data.Iterator),
        first,
        it.get_next(),
        it.get_next_as_optional().get_value(),
        it.get_next_as_optional().has_value(),
        isinstance(options.threading, tf.data.ThreadingOptions),
        options.threading.private_threadpool_size,
        isinstance(options.experimental_distribute, tf.data.experimental.DistributeOptions),
        options.experimental_distribute.auto_shard_policy == tf.data.experimental.AutoShardPolicy.DATA,
        [p.name for p in tf.data.experimental.AutoShardPolicy],
        (
            tf.data.experimental.AUTOTUNE,
            tf.data.experimental.INFINITE_CARDINALITY,
            tf.data.experimental.UNKNOWN_CARDINALITY,
        ),
    )


@same_as_tf(*DATA, edge=True)
def test_iterator_past_the_end_is_out_of_range(tf):
    it = iter(tf.data.Dataset.range(0))
    return it.get_next()


TOP = ("broadcast_static_shape", "newaxis", "timestamp", "is_symbolic_tensor", "dtypes.DType")


@same_as_tf(*TOP)
def test_top_level_odds(tf):
    x = tf.reshape(tf.range(6), [2, 3])
    return (
        tf.broadcast_static_shape(tf.TensorShape([2, 1, 3]), tf.TensorShape([4, 3])).as_list(),
        x[:, tf.newaxis, :],
        tf.timestamp().dtype == tf.float64,
        tf.is_symbolic_tensor(x),
        isinstance(tf.float32, tf.dtypes.DType),
    )


@same_as_tf(*TOP, edge=True)
def test_broadcast_static_shape_mismatch_is_a_value_error(tf):
    return tf.broadcast_static_shape(tf.TensorShape([2, 3]), tf.TensorShape([4]))


MORE_SUMMARY = (
    "summary.write",
    "summary.image",
    "summary.audio",
    "summary.flush",
    "summary.record_if",
    "summary.should_record_summaries",
)


def _tags_and_steps(root):
    from tensorboard.backend.event_processing import event_file_loader

    found = []
    for name in sorted(os.listdir(root)):
        for event in event_file_loader.LegacyEventFileLoader(os.path.join(root, name)).Load():
            found += [(value.tag, int(event.step)) for value in event.summary.value]
    return sorted(set(found))


@same_as_tf(*MORE_SUMMARY)
def test_more_summaries_write_tags(tf):
    root = tempfile.mkdtemp()
    writer = tf.summary.create_file_writer(root)
    with writer.as_default(step=2):
        wrote = [
            bool(tf.summary.write("raw", tf.constant([1.0, 2.0]))),
            bool(tf.summary.image("img", tf.zeros([2, 4, 4, 3]), max_outputs=1)),
            bool(tf.summary.audio("snd", tf.zeros([1, 100, 1]), 8000)),
            bool(tf.summary.should_record_summaries()),
        ]
        with tf.summary.record_if(False):
            wrote.append(bool(tf.summary.write("skipped", 1.0)))
            wrote.append(bool(tf.summary.should_record_summaries()))
        with tf.summary.record_if(lambda: True):
            wrote.append(bool(tf.summary.write("kept", 3.0, step=5)))
        tf.summary.flush()
    return wrote, _tags_and_steps(root)


@same_as_tf(*MORE_SUMMARY, edge=True)
def test_more_summaries_without_a_writer(tf):
    out = [bool(tf.summary.should_record_summaries()), bool(tf.summary.write("x", 1.0, step=1))]
    tf.summary.flush()
    with tf.summary.record_if(True):
        out.append(bool(tf.summary.image("i", tf.zeros([1, 2, 2, 1]), step=1)))
    return out


@same_as_tf("summary.experimental.summary_scope")
def test_summary_scope(tf):
    out = []
    with tf.summary.experimental.summary_scope("loss", "default") as (tag, scope):
        out.append((tag, scope))
    with tf.name_scope("outer"):
        with tf.summary.experimental.summary_scope("a b", "default") as (tag, scope):
            out.append((tag, scope))
    return out


@same_as_tf("summary.experimental.summary_scope", edge=True)
def test_summary_scope_default_name(tf):
    with tf.summary.experimental.summary_scope(None, "fallback") as (tag, scope):
        return tag, scope


@same_as_tf("saved_model.experimental.VariablePolicy")
def test_variable_policy(tf):
    policy = tf.saved_model.experimental.VariablePolicy
    options = tf.saved_model.SaveOptions(experimental_variable_policy="save_variable_devices")
    return [(p.name, p.value) for p in policy], options.experimental_variable_policy == policy.SAVE_VARIABLE_DEVICES


@same_as_tf("saved_model.experimental.VariablePolicy", edge=True)
def test_variable_policy_bad_value(tf):
    out = [tf.saved_model.SaveOptions().experimental_variable_policy == tf.saved_model.experimental.VariablePolicy.NONE]
    try:
        tf.saved_model.SaveOptions(experimental_variable_policy="keep_everything")
    except ValueError:
        out.append("bad policy")
    return out


def _raw_summary(tag, value):
    from tensorboard.compat.proto.summary_pb2 import Summary

    return Summary(value=[Summary.Value(tag=tag, simple_value=value)]).SerializeToString()


@same_as_tf("summary.experimental.write_raw_pb")
def test_write_raw_pb(tf):
    root = tempfile.mkdtemp()
    writer = tf.summary.create_file_writer(root)
    with writer.as_default(step=4):
        wrote = bool(
            tf.summary.experimental.write_raw_pb(tf.constant([_raw_summary("a", 1.0), _raw_summary("b", 2.0)]))
        )
        single = bool(tf.summary.experimental.write_raw_pb(_raw_summary("c", 3.0), step=9))
    writer.flush()
    return wrote, single, _tags_and_steps(root)


@same_as_tf("summary.experimental.write_raw_pb", edge=True)
def test_write_raw_pb_without_a_writer(tf):
    return bool(tf.summary.experimental.write_raw_pb(_raw_summary("a", 1.0), step=1))
