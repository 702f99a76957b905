"""The "Distributed input" guide's API on one replica: iterators, specs, options, values from a function.

(tensorflow/docs, site/en/tutorials/distribute/input.ipynb.) The multi-replica splitting itself is
pinned by tests/unit/test_input_distribution.py and tests/distributed/test_data_distribution.py.
"""

from __future__ import annotations

import pytest
import torch

import unison as tf
from unison.distribute.input import DistributedDataset, InputPlacement
from unison.distribute.input_options import (
    ValueContext,
    check_input_options,
    distribute_values_from_function,
)

pytestmark = pytest.mark.timeout(60)


def _dataset_fn(ctx):
    batch_size = ctx.get_per_replica_batch_size(4)
    return tf.data.Dataset.range(9).shard(ctx.num_input_pipelines, ctx.input_pipeline_id).batch(batch_size)


def test_datasets_from_function_iterator_has_tfs_methods_and_spec():
    strategy = tf.distribute.MirroredStrategy()
    dist = strategy.distribute_datasets_from_function(_dataset_fn)
    assert str(dist.element_spec) == "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"
    it = iter(dist)
    assert it.element_spec == dist.element_spec
    assert it.get_next().tolist() == [0, 1, 2, 3]
    assert next(it).tolist() == [4, 5, 6, 7]
    last = it.get_next_as_optional()
    assert last.has_value() and last.get_value().tolist() == [8]
    assert not it.get_next_as_optional().has_value()


def test_get_next_as_optional_ends_the_guides_loop_on_a_partial_batch():
    # The guide's cell: range(9) in global batches of 4, break when the Optional is empty.
    strategy = tf.distribute.MirroredStrategy()
    iterator = iter(strategy.experimental_distribute_dataset(tf.data.Dataset.range(9).batch(4)))
    seen = []
    for _ in range(5):
        optional = iterator.get_next_as_optional()
        if not optional.has_value():
            break
        seen.append(strategy.experimental_local_results(strategy.run(lambda x: x, args=(optional.get_value(),))))
    assert [[t.tolist() for t in r] for r in seen] == [[[0, 1, 2, 3]], [[4, 5, 6, 7]], [[8]]]
    assert str(iterator.element_spec) == "TensorSpec(shape=(None,), dtype=tf.int64, name=None)"


def test_per_replica_element_spec_of_a_two_replica_split():
    dataset = tf.data.Dataset.from_tensors(([1.0], [1.0])).repeat(100).batch(16)
    dist = DistributedDataset(dataset, 2, 1, torch.device("cpu"), InputPlacement(2, 1))
    features, labels = next(iter(dist))
    assert features.shape == (8, 1) and labels.shape == (8, 1)  # replica 1's half of the global batch
    spec = iter(dist).element_spec
    assert [tuple(s.shape) for s in spec] == [(None, 1), (None, 1)]


def test_iterators_of_non_tf_data_input_say_there_is_no_spec():
    strategy = tf.distribute.MirroredStrategy()
    it = iter(strategy.experimental_distribute_dataset([torch.ones(2, 3)]))
    with pytest.raises(AttributeError, match="only known for the iterator of a tf.data Dataset"):
        it.element_spec  # noqa: B018
    dist = strategy.distribute_datasets_from_function(lambda ctx: [torch.ones(2)])
    with pytest.raises(AttributeError, match="dataset function returns a tf.data Dataset. Received: list"):
        dist.element_spec  # noqa: B018


def test_values_from_function_gives_this_replicas_value():
    strategy = tf.distribute.MirroredStrategy()
    seen = []

    def value_fn(ctx):
        seen.append((ctx.replica_id_in_sync_group, ctx.num_replicas_in_sync))
        return tf.constant(ctx.replica_id_in_sync_group)

    value = distribute_values_from_function(strategy, value_fn)
    assert seen == [(0, 1)] and value.dtype == torch.int32 and int(value) == 0
    assert strategy.run(lambda x: x + 1, args=(value,)).item() == 1
    assert repr(ValueContext(1, 2)).endswith("ValueContext(replica_id_in_sync_group=1, num_replicas_in_sync=2)")
    with pytest.raises(TypeError, match="needs a function of a ValueContext"):
        distribute_values_from_function(strategy, 3)


def test_input_options_defaults_and_tfs_checks():
    opts = tf.distribute.InputOptions()
    assert opts.fetch_to_device and opts.experimental_replication_mode is tf.distribute.InputReplicationMode.PER_WORKER
    assert not tf.distribute.InputOptions(experimental_fetch_to_device=False).fetch_to_device
    per_replica = tf.distribute.InputOptions(
        experimental_replication_mode=tf.distribute.InputReplicationMode.PER_REPLICA
    )
    assert check_input_options(per_replica, "distribute_datasets_from_function") is per_replica
    with pytest.raises(NotImplementedError, match="only supported in distribute_datasets_from_function"):
        check_input_options(per_replica, "experimental_distribute_dataset")
    with pytest.raises(TypeError, match="options=tf.distribute.InputOptions"):
        check_input_options({"fetch": True}, "experimental_distribute_dataset")
    with pytest.raises(ValueError, match="needs experimental_replication_mode"):
        tf.distribute.InputOptions(experimental_place_dataset_on_device=True, experimental_fetch_to_device=False)
    with pytest.raises(ValueError, match="cannot be combined with experimental_fetch_to_device=True"):
        tf.distribute.InputOptions(experimental_place_dataset_on_device=True, experimental_fetch_to_device=True)
    with pytest.raises(ValueError, match="PER_WORKER or PER_REPLICA. Received"):
        tf.distribute.InputOptions(experimental_replication_mode="PER_WORKER")
    with pytest.raises(ValueError, match="integer >= 0. Received: -1"):
        tf.distribute.InputOptions(experimental_per_replica_buffer_size=-1)


def test_the_strategy_methods_take_the_guides_options_and_values():
    """The guide's own calls: the strategy's methods, not the helpers behind them."""
    strategy = tf.distribute.MirroredStrategy()
    value = strategy.experimental_distribute_values_from_function(lambda ctx: tf.constant(ctx.num_replicas_in_sync))
    assert int(value) == 1
    assert tf.distribute.experimental.ValueContext is ValueContext
    dataset = tf.data.Dataset.range(8).batch(4)
    host = tf.distribute.InputOptions(experimental_fetch_to_device=False)
    batches = [b.tolist() for b in strategy.experimental_distribute_dataset(dataset, host)]
    assert batches == [[0, 1, 2, 3], [4, 5, 6, 7]]
    per_replica = tf.distribute.InputOptions(
        experimental_replication_mode=tf.distribute.InputReplicationMode.PER_REPLICA
    )
    from_fn = strategy.distribute_datasets_from_function(_dataset_fn, per_replica)
    assert [b.tolist() for b in from_fn] == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]
    older_name = strategy.experimental_distribute_datasets_from_function(_dataset_fn)
    assert [b.tolist() for b in older_name] == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]
    with pytest.raises(NotImplementedError, match="only supported in distribute_datasets_from_function"):
        strategy.experimental_distribute_dataset(dataset, per_replica)
    with pytest.raises(TypeError, match="options=tf.distribute.InputOptions"):
        strategy.distribute_datasets_from_function(_dataset_fn, {"fetch": True})
