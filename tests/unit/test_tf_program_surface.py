"""The pieces TF's published programs needed beyond the core API (see examples/tf/)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import unison as tf
from unison import keras
from unison.cluster.resolvers import default_cluster_resolver


def test_cross_device_ops_and_central_storage_are_accepted_as_in_tfs_guide() -> None:
    ops = tf.distribute.HierarchicalCopyAllReduce()
    assert ops.num_packs == 1 and isinstance(ops, tf.distribute.CrossDeviceOps)
    assert tf.distribute.MirroredStrategy(cross_device_ops=ops).num_replicas_in_sync == 1
    assert tf.distribute.NcclAllReduce(num_packs=2).num_packs == 2
    assert tf.distribute.ReductionToOneDevice("/cpu:0").reduce_to_device == "/cpu:0"
    with pytest.raises(ValueError, match="num_packs must be an int >= 0. Received: num_packs=-1"):
        tf.distribute.HierarchicalCopyAllReduce(num_packs=-1)
    strategy = tf.distribute.experimental.CentralStorageStrategy()
    assert strategy.num_replicas_in_sync == 1 and isinstance(strategy, tf.distribute.MirroredStrategy)
    with pytest.raises(TypeError, match="parameter_device must be a device string"):
        tf.distribute.experimental.CentralStorageStrategy(parameter_device=0)


def test_a_replica_rerun_by_mirrored_strategy_is_not_a_cluster() -> None:
    env = {"UNISON_RANK": "1", "UNISON_WORLD_SIZE": "2", "UNISON_PARENT_PID": "1"}
    assert default_cluster_resolver(env).cluster_spec().as_dict() == {}
    launched = {"UNISON_RANK": "1", "UNISON_WORLD_SIZE": "2", "UNISON_MASTER_PORT": "1234"}
    assert type(default_cluster_resolver(launched)).__name__ == "UnisonLauncherClusterResolver"


def test_losses_broadcast_once_ranks_agree_as_keras_does() -> None:
    # TF's parameter-server tutorial: Dense(10) fitted with "mse" to labels of shape (batch,)
    y_true, y_pred = torch.tensor([1.0, 0.0]), torch.zeros(2, 10)
    assert keras.losses.mean_squared_error(y_true, y_pred).tolist() == [1.0, 0.0]
    with pytest.raises(
        ValueError,
        match=r"shapes that broadcast. Received: y_true.shape=\(2, 3\), "
        r"y_pred.shape=\(2, 10\)",
    ):
        keras.losses.mean_squared_error(torch.zeros(2, 3), y_pred)


def test_string_preprocessing_model_as_in_the_parameter_server_tutorial() -> None:
    lookup = keras.layers.StringLookup(vocabulary=["yes", "no"], num_oov_indices=0, mask_token=None)
    raw = keras.layers.Input(shape=(1,), dtype=tf.string, name="label")
    stage = keras.Model({"label": raw}, lookup(raw))  # traced without a vocabulary error
    assert stage({"label": np.array([["no"], ["yes"]], dtype=object)}).tolist() == [[1], [0]]
    # one rank short of an Input whose last size is 1: a batch of one row, the last axis added (TF 2.21,
    # Keras 3 and tf_keras alike, print [[1]], also for each example inside a tf.data map)
    assert stage({"label": np.array(["no"], dtype=object)}).tolist() == [[1]]
    features = keras.layers.Input(shape=(3,), dtype=tf.string, name="features")
    words = keras.Model({"features": features}, keras.layers.StringLookup(vocabulary=["a", "b", "c"])(features))
    # one unbatched example of an Input wider than 1: tf_keras runs it (TF's parameter-server tutorial
    # maps single examples through its feature stage); Keras 3 refuses, unison follows tf_keras
    assert words({"features": np.array(["a", "b", "c"], dtype=object)}).tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="'maybe', which is not in its vocabulary"):
        stage({"label": np.array([["maybe"]], dtype=object)})


def test_tf_functions_on_symbolic_tensors_become_graph_nodes() -> None:
    ids = keras.layers.Input(shape=(3,), dtype=tf.int64)
    emb = keras.layers.Embedding(5, 4)
    model = keras.Model(ids, tf.reduce_mean(emb(ids), axis=1))
    x = torch.tensor([[1, 2, 3]])
    torch.testing.assert_close(model(x), emb(x).mean(dim=1))


def test_layer_weights_lists_its_variables() -> None:
    layer = keras.layers.Dense(2)
    layer(torch.zeros(1, 3))
    assert [w is p for w, p in zip(layer.weights, layer.parameters())] == [True, True]
    assert len(layer.trainable_weights) == 2 and layer.non_trainable_weights == []
