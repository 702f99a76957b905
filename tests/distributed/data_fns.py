"""Programs the tf.data distribution tests run in real replica / worker processes.

Run as ``python data_fns.py FUNCTION RESULT_FILE ARGS_JSON`` with a ``TF_CONFIG`` (a worker), or
through ``unison.testing.run_distributed`` (replicas of one MirroredStrategy), or in the test
process itself (the one-replica reference).
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import warnings
from typing import Any

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from multi_worker_fns import make_data, strategy_from_env  # noqa: E402

N_ROWS, BATCH = 19 * 16 + 2, 16  # 20 global batches, the last one uneven


def _strategy(kind: str, devices: list[str] | None = None) -> Any:
    import unison as tf

    if kind == "default":
        return tf.distribute.get_strategy()
    if kind == "mirrored":
        return tf.distribute.MirroredStrategy(devices)
    return strategy_from_env()


def _ids(batch: Any) -> list[int]:
    return [int(v) for v in batch[1]]


def pipelines(kind: str, devices: list[str] | None = None) -> dict:
    """Which sample ids each replica sees, and the Keras weights after 20 steps on a tf.data pipeline."""
    import unison as tf

    strategy = _strategy(kind, devices)
    x, y = make_data(N_ROWS)
    ids = np.arange(N_ROWS)
    D = tf.data.Dataset
    out: dict[str, Any] = {"replicas": strategy.num_replicas_in_sync, "rank": strategy.extended.replica_id}

    # experimental_distribute_dataset: an unseeded shuffle, two epochs; every sample once per epoch
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist = strategy.experimental_distribute_dataset(D.from_tensor_slices((x, ids)).shuffle(N_ROWS).batch(BATCH))
    out["warned"] = [str(w.message) for w in caught if "AUTO sharding policy" in str(w.message)]
    out["distribute_dataset"] = [[i for b in dist for i in _ids(b)] for _ in range(2)]

    # distribute_datasets_from_function: TF's tutorial recipe (shard by pipeline, per-replica batch)
    def dataset_fn(ctx: Any) -> Any:
        per_replica = ctx.get_per_replica_batch_size(BATCH)
        ds = D.from_tensor_slices((x, ids)).shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
        return ds.shuffle(N_ROWS, seed=1).batch(per_replica).prefetch(2)

    out["from_function"] = [i for b in strategy.distribute_datasets_from_function(dataset_fn) for i in _ids(b)]

    # Keras: 20 steps on a repeat()ed, unseeded-shuffled pipeline, validation on a dataset
    torch.manual_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential(
            [
                tf.keras.layers.Dense(32, activation="relu", input_shape=(12,)),
                tf.keras.layers.Dense(4, activation="softmax"),
            ]
        )
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    train = D.from_tensor_slices((x, y)).shuffle(N_ROWS).batch(BATCH).repeat()
    xv, yv = make_data(101, seed=1)
    val = D.from_tensor_slices((xv, yv)).batch(BATCH)
    history = model.fit(train, steps_per_epoch=10, epochs=2, validation_data=val, verbose=0)
    out["weights"] = [w.copy() for w in model.get_weights()]
    out["history"] = history.history
    out["evaluate"] = model.evaluate(val, verbose=0)
    out["predict"] = model.predict(D.from_tensor_slices(xv).batch(BATCH), verbose=0)
    return out


def shard_policies(files: list[str]) -> dict:
    """The lines / ids this worker sees under each AutoShardPolicy (2 workers)."""
    import unison as tf

    strategy = strategy_from_env()
    D, P = tf.data.Dataset, tf.data.experimental.AutoShardPolicy
    out: dict[str, Any] = {"rank": strategy.extended.replica_id}

    def with_policy(ds: Any, policy: Any) -> Any:
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = policy
        return ds.with_options(options)

    def seen(ds: Any) -> list[Any]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dist = strategy.experimental_distribute_dataset(ds)
        out.setdefault("warnings", []).extend(str(w.message) for w in caught)
        return [v for b in dist for v in b.tolist()]

    numbers = D.range(40).batch(8)
    lines = D.list_files(files, shuffle=False).interleave(tf.data.TextLineDataset, cycle_length=1).batch(4)
    for name in ("AUTO", "DATA", "OFF"):
        out[f"range_{name}"] = seen(with_policy(numbers, P[name]))
    for name in ("AUTO", "FILE", "OFF", "DATA"):
        out[f"files_{name}"] = seen(with_policy(lines, P[name]))
    try:
        seen(with_policy(numbers, P.FILE))
        out["file_on_range"] = "no error"
    except ValueError as exc:
        out["file_on_range"] = str(exc)
    return out


def main() -> None:
    fn, result_file, kwargs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    out = globals()[fn](**kwargs)
    with open(result_file, "wb") as fh:
        pickle.dump(out, fh)


if __name__ == "__main__":
    main()
