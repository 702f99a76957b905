"""Sharded state on one process: activation checkpointing, argument errors of shard_model and
keras.distribution, and sharded checkpoints written atomically (issue 16, item 4)."""

from __future__ import annotations

import os

import pytest
import torch

import unison
from unison.distribute.remat import checkpoint_activations, is_rematerialized
from unison.distribute.sharded_checkpoint import IncompatibleCheckpointError, ShardedCheckpoint
from unison.distribute.sharding import replica_state_bytes, shard_model
from unison.keras import distribution


def deep_mlp(depth: int = 12, width: int = 64, seed: int = 0) -> torch.nn.Sequential:
    torch.manual_seed(seed)
    layers: list[torch.nn.Module] = []
    for _ in range(depth):
        layers += [torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.Tanh())]
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, 1))


def grads(model: torch.nn.Module, x: torch.Tensor) -> list[torch.Tensor]:
    model.zero_grad()
    (model(x) ** 2).mean().backward()
    return [p.grad.clone() for p in model.parameters()]


def test_rematerialised_blocks_give_the_same_gradients_and_recompute_in_backward():
    x = torch.randn(32, 64)
    plain = deep_mlp()
    remat = deep_mlp()
    calls = []
    for block in list(remat)[:-1]:
        checkpoint_activations(block)
        block[0].register_forward_hook(lambda *_: calls.append(1))
    for a, b in zip(grads(plain, x), grads(remat, x)):
        assert torch.allclose(a, b, atol=1e-7)
    assert len(calls) == 2 * 12  # every block ran again in backward
    assert all(is_rematerialized(b) for b in list(remat)[:-1]) and not is_rematerialized(remat)
    assert [n for n, _ in remat.named_parameters()] == [n for n, _ in plain.named_parameters()]  # names kept


def test_remat_of_a_function_and_under_no_grad_and_a_bad_argument():
    w = torch.randn(4, 4, requires_grad=True)
    f = checkpoint_activations(lambda x: torch.tanh(x @ w))
    f(torch.ones(2, 4)).sum().backward()
    want = torch.autograd.grad(torch.tanh(torch.ones(2, 4) @ w).sum(), w)[0]
    assert torch.allclose(w.grad, want)
    block = checkpoint_activations(torch.nn.Linear(4, 4))
    with torch.no_grad():
        assert block(torch.ones(1, 4)).shape == (1, 4)
    assert checkpoint_activations(block) is block  # idempotent
    assert unison.keras.remat is checkpoint_activations
    with pytest.raises(TypeError, match="Received: int"):
        checkpoint_activations(3)


def test_shard_model_on_one_replica_returns_the_module_and_counts_its_state():
    model = deep_mlp(depth=2, width=8)
    opt = torch.optim.Adam(model.parameters())
    assert shard_model(model) is model
    grads(model, torch.randn(4, 8))
    opt.step()
    sizes = replica_state_bytes(model, opt)
    n = sum(p.numel() for p in model.parameters()) * 4
    assert sizes["parameters"] == sizes["gradients"] == n
    assert sizes["optimizer"] == 2 * n + 4 * len(list(model.parameters()))  # moments + step counters
    assert sizes["total"] == sizes["parameters"] + sizes["gradients"] + sizes["optimizer"]


def test_a_meta_device_model_is_allocated_and_initialised_by_shard_model():
    with torch.device("meta"):
        model = deep_mlp(depth=2, width=8)
    assert all(p.is_meta for p in model.parameters())
    model = shard_model(model)
    assert not any(p.is_meta for p in model.parameters())
    assert all(torch.isfinite(p).all() and p.abs().sum() > 0 for p in model.parameters())


def test_shard_model_names_what_is_wrong():
    with pytest.raises(TypeError, match="Received: str"):
        shard_model("model")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="op=unison.Average or unison.Sum"):
        shard_model(torch.nn.Linear(2, 2), op=unison.Adasum)
    with pytest.raises(ValueError, match="no parameters"):
        shard_model(torch.nn.ReLU())
    with pytest.raises(ValueError, match="lazy"):
        shard_model(torch.nn.LazyLinear(2))
    with pytest.raises(TypeError, match="block_types"):
        shard_model(torch.nn.Linear(2, 2), block_types=["Linear"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"does not have: \['nope'\]"):
        shard_model(torch.nn.Linear(2, 2), shard_dims={"nope": 0})
    with pytest.raises(ValueError, match=r"shard_dims\['bias'\] must be a dimension of its shape \[2\]"):
        shard_model(torch.nn.Linear(2, 2), shard_dims={"bias": 1})


def test_checkpoint_round_trip_on_one_replica_replaces_the_old_one_atomically(tmp_path):
    model = deep_mlp(depth=2, width=8)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    grads(model, torch.randn(4, 8))
    opt.step()
    path = tmp_path / "ckpt"
    ShardedCheckpoint(model, opt).save(path)
    first = os.listdir(path)
    opt.step()
    ShardedCheckpoint(model, opt).save(path)  # over the previous one
    assert sorted(os.listdir(path)) == sorted(first) and ".metadata" in first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt"]  # no temporary or old directory left
    fresh = deep_mlp(depth=2, width=8, seed=5)
    fresh_opt = torch.optim.Adam(fresh.parameters(), lr=0.1)
    ShardedCheckpoint(fresh, fresh_opt).restore(path)
    for a, b in zip(model.parameters(), fresh.parameters()):
        assert torch.equal(a, b)
    for p, q in zip(model.parameters(), fresh.parameters()):
        assert torch.equal(opt.state[p]["exp_avg"], fresh_opt.state[q]["exp_avg"])


def test_checkpoint_errors_name_the_received_values(tmp_path):
    with pytest.raises(TypeError, match="Received: dict"):
        ShardedCheckpoint({})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Received: list"):
        ShardedCheckpoint(torch.nn.Linear(2, 2), optimizer=[])
    ShardedCheckpoint(deep_mlp(depth=1, width=4)).save(tmp_path / "c")
    with pytest.raises(
        IncompatibleCheckpointError, match=r"In the checkpoint, not in the model: \['1.bias', '1.weight'\]"
    ):
        ShardedCheckpoint(torch.nn.Sequential(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh()))).restore(
            tmp_path / "c"
        )


def test_keras_distribution_names_and_their_errors():
    mesh = distribution.DeviceMesh(shape=(1,), axis_names=("batch",))
    layout_map = distribution.LayoutMap(mesh)
    layout_map[r".*\.weight"] = ("batch", None)
    layout_map["special"] = distribution.TensorLayout((None, "batch"))
    assert layout_map["0.weight"].axes == ("batch", None) and layout_map["0.bias"] is None
    assert layout_map["special"].axes == (None, "batch")
    with pytest.raises(ValueError, match="already has a layout"):
        layout_map["special"] = ("batch",)
    with pytest.raises(ValueError, match="several LayoutMap keys"):
        layout_map["special.weight"]
    with pytest.raises(
        ValueError, match=r"tensor parallelism over a second axis is not supported. Received: shape=\(2, 4\)"
    ):
        distribution.DeviceMesh(shape=(2, 4), axis_names=("batch", "model"))
    bad = distribution.LayoutMap(mesh)
    bad["kernel"] = (None, "model")
    with pytest.raises(ValueError, match=r"LayoutMap\['kernel'\] = \(None, 'model'\)"):
        distribution.ModelParallel(layout_map=bad)
    replicated = distribution.LayoutMap(mesh)
    replicated["kernel"] = (None, None)
    with pytest.raises(ValueError, match="replicated"):
        distribution.ModelParallel(layout_map=replicated)
    with pytest.raises(ValueError, match="batch_dim_name='data'"):
        distribution.ModelParallel(layout_map=layout_map, batch_dim_name="data")
    two = distribution.ModelParallel(device_mesh=distribution.DeviceMesh((2,), ("batch",)))
    with pytest.raises(ValueError, match=r"job has 1 replicas. Received: shape=\(2,\)"):
        two.distribute_model(torch.nn.Linear(2, 2))
    wrong_rank = distribution.LayoutMap(mesh)
    wrong_rank["bias"] = ("batch", None)
    with pytest.raises(
        ValueError, match=r"'bias' the layout \('batch', None\) \(2 dimensions\) but its shape is \[2\]"
    ):
        distribution.ModelParallel(layout_map=wrong_rank).distribute_model(torch.nn.Linear(2, 2))
    model = torch.nn.Linear(2, 2)
    assert distribution.DataParallel().distribute_model(model) is model
    assert distribution.list_devices("cpu") == ["cpu:0"]
    with pytest.raises(ValueError, match="device_type='tpu'"):
        distribution.list_devices("tpu")


def test_set_distribution_takes_a_distribution_or_none_and_scope_restores_the_previous():
    from unison.keras import distribution

    with pytest.raises(TypeError, match="expects a keras.distribution.DataParallel or ModelParallel"):
        distribution.set_distribution("model_parallel")
    assert distribution.distribution() is None
    mp = distribution.ModelParallel()
    with mp.scope():
        assert distribution.distribution() is mp
    assert distribution.distribution() is None
