"""``tf.config`` against TensorFlow 2.21 (see tf_oracle.py for the rules).

Settings are process-wide on both sides, so every test that changes one puts it back.
"""

from __future__ import annotations

import numpy as np
from tf_oracle import same_as_tf


def _devices(devices):
    return [(d.name, d.device_type) for d in devices]


@same_as_tf("config.list_physical_devices", "config.experimental.list_physical_devices", "config.PhysicalDevice")
def test_list_physical_devices(tf):
    cpus = tf.config.list_physical_devices("CPU")
    return (
        _devices(cpus),
        _devices(tf.config.experimental.list_physical_devices("CPU")),
        isinstance(cpus[0], tf.config.PhysicalDevice),
    )


@same_as_tf("config.list_physical_devices", "config.experimental.list_physical_devices", edge=True)
def test_list_physical_devices_of_a_type_it_lacks(tf):
    return (
        tf.config.list_physical_devices("TPU"),
        tf.config.list_physical_devices("cpu"),
        tf.config.experimental.list_physical_devices("XLA_XPU"),
    )


@same_as_tf("config.list_logical_devices", "config.experimental.list_logical_devices", "config.LogicalDevice")
def test_list_logical_devices(tf):
    cpus = tf.config.list_logical_devices("CPU")
    return _devices(cpus), isinstance(cpus[0], tf.config.LogicalDevice), cpus[0].name


@same_as_tf(
    "config.list_logical_devices", "config.experimental.list_logical_devices", "config.LogicalDevice", edge=True
)
def test_list_logical_devices_of_a_type_it_lacks(tf):
    d = tf.config.LogicalDevice(name="/device:CPU:0", device_type="CPU")
    return tf.config.list_logical_devices("TPU"), tf.config.experimental.list_logical_devices("GPU_X"), tuple(d)


@same_as_tf("config.PhysicalDevice", edge=True)
def test_physical_device_is_a_named_tuple(tf):
    d = tf.config.PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")
    return tuple(d), d == tf.config.list_physical_devices("CPU")[0]


@same_as_tf("config.get_visible_devices", "config.experimental.get_visible_devices")
def test_get_visible_devices(tf):
    return _devices(tf.config.get_visible_devices("CPU")), _devices(tf.config.experimental.get_visible_devices())


@same_as_tf("config.get_visible_devices", "config.experimental.get_visible_devices", edge=True)
def test_get_visible_devices_of_a_type_it_lacks(tf):
    return _devices(tf.config.get_visible_devices("TPU")), _devices(tf.config.experimental.get_visible_devices("GPU"))


@same_as_tf("config.set_visible_devices", "config.experimental.set_visible_devices")
def test_set_visible_devices_to_all_it_has(tf):
    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_visible_devices(cpus, "CPU")
    tf.config.experimental.set_visible_devices(cpus, "CPU")
    return _devices(tf.config.get_visible_devices("CPU"))


@same_as_tf("config.set_visible_devices", "config.experimental.set_visible_devices", edge=True)
def test_set_visible_devices_without_a_cpu(tf):
    return tf.config.set_visible_devices([], "CPU")


@same_as_tf(
    "config.set_logical_device_configuration",
    "config.get_logical_device_configuration",
    "config.LogicalDeviceConfiguration",
    "config.experimental.get_virtual_device_configuration",
)
def test_logical_device_configuration_is_none_until_set(tf):
    cpu = tf.config.list_physical_devices("CPU")[0]
    return (
        tf.config.get_logical_device_configuration(cpu),
        tf.config.experimental.get_virtual_device_configuration(cpu),
        tf.config.LogicalDeviceConfiguration(memory_limit=64).memory_limit,
    )


@same_as_tf(
    "config.set_logical_device_configuration",
    "config.get_logical_device_configuration",
    "config.experimental.set_virtual_device_configuration",
    "config.experimental.get_virtual_device_configuration",
    "config.experimental.VirtualDeviceConfiguration",
    "config.LogicalDeviceConfiguration",
    edge=True,
)
def test_logical_device_configuration_of_a_non_device_is_an_error(tf):
    return tf.config.set_logical_device_configuration("CPU:0", [tf.config.LogicalDeviceConfiguration()])


@same_as_tf("config.experimental.VirtualDeviceConfiguration", "config.experimental.set_virtual_device_configuration")
def test_virtual_device_configuration_is_the_logical_one(tf):
    c = tf.config.experimental.VirtualDeviceConfiguration(memory_limit=128)
    return c.memory_limit, isinstance(c, tf.config.LogicalDeviceConfiguration)


@same_as_tf(
    "config.run_functions_eagerly",
    "config.functions_run_eagerly",
    "config.experimental_run_functions_eagerly",
    "config.experimental_functions_run_eagerly",
)
def test_run_functions_eagerly(tf):
    tf.config.run_functions_eagerly(True)
    tf.config.experimental_run_functions_eagerly(True)
    on = tf.config.functions_run_eagerly(), tf.config.experimental_functions_run_eagerly()

    @tf.function
    def f(x):
        return x.numpy() * 2  # only possible eagerly

    try:
        return on, f(tf.constant(3))
    finally:
        tf.config.run_functions_eagerly(False)  # TF's default, for the tests that follow


@same_as_tf(
    "config.run_functions_eagerly",
    "config.functions_run_eagerly",
    "config.experimental_functions_run_eagerly",
    "config.experimental_run_functions_eagerly",
    edge=True,
    differs="unison's tf.function always runs eagerly, so functions_run_eagerly() is True even after "
    "run_functions_eagerly(False) (TF then says False and traces graphs)",
)
def test_functions_run_eagerly_after_turning_it_off(tf):
    tf.config.run_functions_eagerly(True)
    first = tf.config.experimental_functions_run_eagerly()
    tf.config.experimental_run_functions_eagerly(False)
    return first, type(tf.config.functions_run_eagerly()).__name__


@same_as_tf("config.get_soft_device_placement", "config.set_soft_device_placement")
def test_soft_device_placement(tf):
    before = tf.config.get_soft_device_placement()
    tf.config.set_soft_device_placement(False)
    off = tf.config.get_soft_device_placement()
    tf.config.set_soft_device_placement(True)
    return before, off, tf.config.get_soft_device_placement()


@same_as_tf("config.get_soft_device_placement", "config.set_soft_device_placement", edge=True)
def test_soft_device_placement_takes_truthy_values(tf):
    tf.config.set_soft_device_placement(0)
    off = tf.config.get_soft_device_placement()
    tf.config.set_soft_device_placement(1)
    return off, tf.config.get_soft_device_placement()


@same_as_tf("config.optimizer.get_jit", "config.optimizer.set_jit")
def test_jit(tf):
    before = tf.config.optimizer.get_jit()
    tf.config.optimizer.set_jit(True)
    on = tf.config.optimizer.get_jit()
    tf.config.optimizer.set_jit(False)
    return before, on, tf.config.optimizer.get_jit()


@same_as_tf("config.optimizer.get_jit", "config.optimizer.set_jit", edge=True)
def test_jit_by_name(tf):
    tf.config.optimizer.set_jit("autoclustering")
    on = tf.config.optimizer.get_jit()
    tf.config.optimizer.set_jit(False)
    return on


@same_as_tf("config.optimizer.get_experimental_options", "config.optimizer.set_experimental_options")
def test_experimental_options(tf):
    before = tf.config.optimizer.get_experimental_options()
    tf.config.optimizer.set_experimental_options({"layout_optimizer": False})
    after = tf.config.optimizer.get_experimental_options()
    tf.config.optimizer.set_experimental_options({"layout_optimizer": True})
    return before, after


@same_as_tf("config.optimizer.get_experimental_options", "config.optimizer.set_experimental_options", edge=True)
def test_experimental_options_override_a_default(tf):
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    after = tf.config.optimizer.get_experimental_options()["disable_meta_optimizer"]
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": False})
    return after, tf.config.optimizer.get_experimental_options()["disable_meta_optimizer"]


@same_as_tf("config.experimental.get_device_policy", "config.experimental.set_device_policy")
def test_device_policy(tf):
    seen = [tf.config.experimental.get_device_policy()]
    for policy in ("warn", "explicit", "silent_for_int32", None):
        tf.config.experimental.set_device_policy(policy)
        seen.append(tf.config.experimental.get_device_policy())
    return seen


@same_as_tf("config.experimental.get_device_policy", "config.experimental.set_device_policy", edge=True)
def test_device_policy_unknown(tf):
    return tf.config.experimental.set_device_policy("bogus")


@same_as_tf("config.experimental.get_synchronous_execution", "config.experimental.set_synchronous_execution")
def test_synchronous_execution(tf):
    before = tf.config.experimental.get_synchronous_execution()
    tf.config.experimental.set_synchronous_execution(False)
    off = tf.config.experimental.get_synchronous_execution()
    tf.config.experimental.set_synchronous_execution(True)
    return before, off, tf.config.experimental.get_synchronous_execution()


@same_as_tf("config.experimental.get_synchronous_execution", "config.experimental.set_synchronous_execution", edge=True)
def test_synchronous_execution_runs_ops_either_way(tf):
    tf.config.experimental.set_synchronous_execution(False)
    value = tf.reduce_sum(tf.constant([1.0, 2.0]))
    tf.config.experimental.set_synchronous_execution(True)
    return value


@same_as_tf(
    "config.experimental.enable_tensor_float_32_execution", "config.experimental.tensor_float_32_execution_enabled"
)
def test_tensor_float_32(tf):
    before = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    off = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(True)
    on = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(before)
    return off, on


@same_as_tf(
    "config.experimental.enable_tensor_float_32_execution",
    "config.experimental.tensor_float_32_execution_enabled",
    edge=True,
)
def test_tensor_float_32_off_keeps_float32_matmul_exact(tf):
    before = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    x = tf.constant([[1.0 + 2.0**-20, 1.0]])
    out = tf.matmul(x, tf.transpose(x))
    tf.config.experimental.enable_tensor_float_32_execution(before)
    return out


@same_as_tf("config.experimental.enable_mlir_bridge", "config.experimental.disable_mlir_bridge")
def test_mlir_bridge_switches(tf):
    tf.config.experimental.enable_mlir_bridge()
    tf.config.experimental.disable_mlir_bridge()
    return tf.reduce_sum(tf.ones([2, 2]))


@same_as_tf("config.experimental.enable_mlir_bridge", "config.experimental.disable_mlir_bridge", edge=True)
def test_mlir_bridge_takes_no_arguments(tf):
    return tf.config.experimental.enable_mlir_bridge(True)


@same_as_tf(
    "config.experimental.get_memory_info",
    "config.experimental.reset_memory_stats",
    "config.experimental.get_memory_usage",
)
def test_memory_info_on_the_cpu(tf):
    tf.config.experimental.reset_memory_stats("CPU:0")
    info = tf.config.experimental.get_memory_info("CPU:0")
    return sorted(info), tf.config.experimental.get_memory_usage("CPU:0") >= 0


@same_as_tf(
    "config.experimental.get_memory_info",
    "config.experimental.reset_memory_stats",
    "config.experimental.get_memory_usage",
    edge=True,
)
def test_memory_info_of_a_missing_device(tf):
    return tf.config.experimental.get_memory_info("CPU:7")


@same_as_tf("config.experimental.reset_memory_stats", "config.experimental.get_memory_usage", edge=True)
def test_reset_memory_stats_of_an_unknown_device(tf):
    return tf.config.experimental.reset_memory_stats("XPU:0")


@same_as_tf("config.experimental.get_device_details")
def test_device_details_of_the_cpu(tf):
    return tf.config.experimental.get_device_details(tf.config.list_physical_devices("CPU")[0])


@same_as_tf("config.experimental.get_device_details", edge=True)
def test_device_details_of_a_string(tf):
    return tf.config.experimental.get_device_details("CPU:0")


@same_as_tf("config.experimental.get_memory_growth", "config.experimental.set_memory_growth")
def test_memory_growth_is_a_gpu_setting(tf):
    return tf.config.experimental.set_memory_growth(tf.config.list_physical_devices("CPU")[0], True)


@same_as_tf("config.experimental.get_memory_growth", "config.experimental.set_memory_growth", edge=True)
def test_memory_growth_of_a_string(tf):
    return tf.config.experimental.set_memory_growth("GPU:0", True)


@same_as_tf("config.experimental.ClusterDeviceFilters")
def test_cluster_device_filters(tf):
    f = tf.config.experimental.ClusterDeviceFilters()
    f.set_device_filters("worker", 0, ["/job:ps"])
    f.set_device_filters("ps", 0, ["/job:worker"])
    return type(f).__name__


@same_as_tf("config.experimental.ClusterDeviceFilters", edge=True)
def test_cluster_device_filters_need_a_list(tf):
    f = tf.config.experimental.ClusterDeviceFilters()
    return f.set_device_filters("worker", 0, 5)


@same_as_tf("config.experimental_connect_to_cluster")
def test_connect_to_a_local_resolver_does_nothing(tf):
    spec = tf.train.ClusterSpec({"worker": ["localhost:12345"]})
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, master="")
    return tf.config.experimental_connect_to_cluster(resolver)


@same_as_tf("config.experimental_connect_to_cluster", edge=True)
def test_connect_to_a_dict_is_an_error(tf):
    return tf.config.experimental_connect_to_cluster({"worker": ["localhost:12345"]})


@same_as_tf("config.experimental_connect_to_cluster", edge=True)
def test_connect_with_bad_device_filters(tf):
    spec = tf.train.ClusterSpec({"worker": ["localhost:12345"]})
    return tf.config.experimental_connect_to_cluster(spec, cluster_device_filters={"worker": ["/job:ps"]})


@same_as_tf("config.experimental_connect_to_host", edge=True)
def test_connect_to_no_host(tf):
    return tf.config.experimental_connect_to_host(None)


@same_as_tf("config.experimental_connect_to_host")
def test_connect_to_an_empty_host_list(tf):
    return tf.config.experimental_connect_to_host([])


@same_as_tf(
    "config.threading.get_intra_op_parallelism_threads",
    "config.threading.set_intra_op_parallelism_threads",
    "config.threading.get_inter_op_parallelism_threads",
    "config.threading.set_inter_op_parallelism_threads",
)
def test_threading_settings_are_ints(tf):
    return (
        type(tf.config.threading.get_intra_op_parallelism_threads()).__name__,
        type(tf.config.threading.get_inter_op_parallelism_threads()).__name__,
    )


@same_as_tf(
    "config.threading.get_intra_op_parallelism_threads",
    "config.threading.set_intra_op_parallelism_threads",
    "config.threading.get_inter_op_parallelism_threads",
    "config.threading.set_inter_op_parallelism_threads",
    edge=True,
)
def test_threading_after_ops_ran_keeps_working(tf):
    tf.reduce_sum(tf.ones([3]))
    intra = tf.config.threading.get_intra_op_parallelism_threads()
    inter = tf.config.threading.get_inter_op_parallelism_threads()
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    out = tf.reduce_sum(tf.ones([3]))
    tf.config.threading.set_intra_op_parallelism_threads(intra)  # as it was, for the tests that follow
    tf.config.threading.set_inter_op_parallelism_threads(inter)
    return out


def _disable_op_determinism(tf):
    """Undo enable_op_determinism and forget the global seed, for the tests that follow.

    TF has no public way back; its own tests call ``disable_op_determinism`` of the module the public
    function lives in (``tensorflow.python.framework.config``), and unison keeps the same function
    beside its own (``unison.ops.determinism``), so one line serves both.
    """
    import importlib

    importlib.import_module(tf.config.experimental.enable_op_determinism.__module__).disable_op_determinism()
    tf.random.set_seed(None)


@same_as_tf("config.experimental.enable_op_determinism")
def test_op_determinism_repeats_bit_for_bit_and_needs_seeds(tf):
    rng = np.random.default_rng(0)
    data = rng.standard_normal([20000]).astype(np.float32)
    whole = np.round(data * 8).astype(np.float32)  # integer-valued: sums exact in any order, comparable with TF
    ids = rng.integers(0, 7, [20000]).astype(np.int32)
    unseeded = {
        "random.normal": lambda: tf.random.normal([2]),
        "random.shuffle": lambda: tf.random.shuffle(tf.range(3)),
        "nn.dropout": lambda: tf.nn.dropout(tf.ones([4]), 0.5),
        "Dataset.shuffle": lambda: list(tf.data.Dataset.range(4).shuffle(4)),
        "Generator": lambda: tf.random.Generator.from_non_deterministic_state(),
        "random.uniform(seed=1)": lambda: tf.random.uniform([2], seed=1),
        "stateless_normal": lambda: tf.random.stateless_normal([2], seed=[1, 2]),
    }

    def run(values):
        w = tf.Variable(tf.reshape(values[:2000], [200, 10]))
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(w, ids[:5000] * 20) ** 2)
        return [
            tf.math.unsorted_segment_sum(values, ids, 7),
            tf.tensor_scatter_nd_add(tf.zeros([7]), ids[:, None], values),
            tf.reduce_sum(tf.reshape(values, [200, 100]), axis=0),
            tf.matmul(tf.reshape(values, [100, 200]), tf.reshape(values, [200, 100])),
            tf.convert_to_tensor(tape.gradient(loss, w)),
        ]

    tf.random.set_seed(None)
    tf.config.experimental.enable_op_determinism()
    try:
        errors = {}
        for name, op in unseeded.items():
            try:
                op()
                errors[name] = None
            except RuntimeError as e:
                errors[name] = str(e)
        first, second = run(data), run(data)
        bitwise = [bool(np.array_equal(a.numpy(), b.numpy())) for a, b in zip(first, second)]
        tf.random.set_seed(7)
        a = tf.random.normal([5])
        tf.random.set_seed(7)
        seeded_repeats = bool(np.array_equal(a.numpy(), tf.random.normal([5]).numpy()))
        exact = run(whole)[:3]
    finally:
        _disable_op_determinism(tf)
    return errors, bitwise, seeded_repeats, exact


@same_as_tf("config.experimental.enable_op_determinism", edge=True)
def test_op_determinism_takes_no_arguments(tf):
    return tf.config.experimental.enable_op_determinism(False)
