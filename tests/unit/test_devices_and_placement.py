"""Device strings and process placement: parsed and validated before any process starts."""

from __future__ import annotations

import pytest
import torch

import unison as tf
from unison.cluster import resolve_placement
from unison.distribute.devices import parse_device, parse_devices


@pytest.mark.parametrize(
    "text,kind,index",
    [
        ("/cpu:0", "cpu", 0),
        ("/CPU:3", "cpu", 3),
        ("GPU:1", "gpu", 1),
        ("/device:GPU:2", "gpu", 2),
        ("/job:worker/replica:0/task:1/device:CPU:0", "cpu", 0),
        ("cuda:0", "gpu", 0),
    ],
)
def test_tf_device_strings_parse(text: str, kind: str, index: int) -> None:
    spec = parse_device(text)
    assert (spec.kind, spec.index) == (kind, index)


@pytest.mark.parametrize("bad", ["/cpu:x", "cpu0", "/tpu:0", "", "/gpu:-1"])
def test_malformed_device_strings_name_the_value_and_the_forms(bad: str) -> None:
    with pytest.raises(ValueError) as info:
        tf.distribute.MirroredStrategy([bad])
    assert repr(bad) in str(info.value)
    assert '"/cpu:0"' in str(info.value)


def test_device_list_mistakes() -> None:
    with pytest.raises(ValueError, match="not one string"):
        parse_devices("/cpu:0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="appears twice"):
        parse_devices(["/cpu:0", "/cpu:0"])
    with pytest.raises(ValueError, match="one kind"):
        parse_devices(["/cpu:0", "/gpu:0"])
    with pytest.raises(ValueError, match="at least one device"):
        parse_devices([])


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU message")
def test_missing_gpu_is_named() -> None:
    # parse_devices alone still refuses; MirroredStrategy falls back as TF does (below).
    with pytest.raises(ValueError, match=r"not available: this machine has 0 visible GPU"):
        parse_devices(["/gpu:0", "/gpu:1"])


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a host without GPUs")
def test_missing_gpu_warns_once_and_runs_on_the_cpu() -> None:
    with pytest.warns(UserWarning, match=r"\['/gpu:0'\] are not available.*1 replica\(s\) on \['/cpu:0'\]") as record:
        strategy = tf.distribute.MirroredStrategy(["/gpu:0"])
    assert len([w for w in record if "not available" in str(w.message)]) == 1
    assert strategy.num_replicas_in_sync == 1 and strategy.extended.device.type == "cpu"


def test_default_strategy_is_one_cpu_replica() -> None:
    strategy = tf.distribute.MirroredStrategy()
    assert strategy.num_replicas_in_sync == 1
    assert strategy.extended.should_checkpoint
    assert not tf.distribute.has_strategy()
    with strategy.scope():
        assert tf.distribute.has_strategy() and tf.distribute.get_strategy() is strategy
    assert tf.distribute.get_replica_context() is not None


def test_placement_from_torchrun_and_unison_env() -> None:
    p = resolve_placement({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_PORT": "2950"})
    assert (p.rank, p.world_size, p.local_rank, p.source) == (1, 2, 1, "torchrun")
    p = resolve_placement({"UNISON_RANK": "0", "UNISON_WORLD_SIZE": "3", "UNISON_MASTER_PORT": "1234"})
    assert (p.rank, p.world_size, p.is_chief, p.source) == (0, 3, True, "unison")
    assert resolve_placement({}) is None
    with pytest.raises(ValueError, match="must be an integer"):
        resolve_placement({"RANK": "one", "WORLD_SIZE": "2", "MASTER_PORT": "1"})
    with pytest.raises(ValueError, match=r"rank must be in \[0, world_size\)"):
        resolve_placement({"RANK": "2", "WORLD_SIZE": "2", "MASTER_PORT": "1"})
