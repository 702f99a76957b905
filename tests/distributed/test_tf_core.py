"""TF core on real replicas: a GradientTape loop under MirroredStrategy, and tf.train.Checkpoint
written by 2 replicas (the chief only) and restored by one process without a strategy."""

from __future__ import annotations

import os

import numpy as np
import pytest
import tf_core_fns as fns
import torch

import unison as tf
from unison.testing import run_distributed

STEPS = 4


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_two_replicas_save_one_process_restores(tmp_path) -> None:
    directory = str(tmp_path / "ckpts")
    results = run_distributed(fns.train_with_tape_and_checkpoint, 2, args=(directory, STEPS), timeout=150)
    chief, other = sorted(results, key=lambda r: r["rank"])
    # the GradientTape loop on 2 replicas equals one process on the global batch
    for got, want in zip(chief["params"], fns.reference_loop(STEPS)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for a, b in zip(chief["params"], other["params"]):
        np.testing.assert_array_equal(a, b)
    # every replica got TF's numbered paths; only the chief wrote, max_to_keep=2 kept
    assert chief["paths"] == other["paths"] == [f"{directory}/ckpt-{i}" for i in range(1, STEPS + 1)]
    assert sorted(os.listdir(directory)) == ["checkpoint", "ckpt-3.unison", "ckpt-4.unison"]
    assert tf.train.latest_checkpoint(directory) == f"{directory}/ckpt-4"
    assert chief["wrote_own"] and not other["wrote_own"]  # the non-chief replica wrote nothing

    model = fns.make_model()
    torch.manual_seed(5)
    for p in model.parameters():
        torch.nn.init.normal_(p)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    step = tf.Variable(0)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, step=step)
    checkpoint.restore(tf.train.latest_checkpoint(directory)).assert_consumed()
    for got, want in zip(model.parameters(), chief["params"]):
        np.testing.assert_array_equal(got.detach().numpy(), want)
    np.testing.assert_array_equal(optimizer.state_dict()["state"][0]["exp_avg"].numpy(), chief["exp_avg"])
    assert step.numpy() == STEPS and int(checkpoint.save_counter) == STEPS


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_checkpoint_of_a_sharded_optimizer_holds_every_shard(tmp_path) -> None:
    results = run_distributed(fns.sharded_optimizer_checkpoint, 2, args=(str(tmp_path),), timeout=150)
    n_params = len(results[0]["params"])
    assert sum(r["local_entries"] for r in results) == n_params  # each replica held its shard only
    model = fns.make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    tf.train.Checkpoint(model=model, optimizer=optimizer).restore(results[0]["path"]).assert_consumed()
    assert len(optimizer.state) == n_params  # the file has every parameter's moments
    for got, want in zip(model.parameters(), results[0]["params"]):
        np.testing.assert_array_equal(got.detach().numpy(), want)
