"""What the replicas' agreement (issue 40: optimizer class and hyper-parameters, loss, global
batch, folded into the parameter check's digest) costs, against a seed-program step.

Two CPU replicas (MirroredStrategy, the shared-memory path) train the seed program's model
(784-128-10 MLP, Keras Adam, global batch 32) in a custom loop with ``strategy.run``. Measured
on rank 0, medians:

* ``step_us``: one training step (strategy.run: forward, compute_average_loss, backward,
  apply_gradients with its gradient all-reduce);
* ``note_us``: the per-step addition: ``compute_average_loss(global_batch_size=)`` noting the
  global batch (a Keras loss and an optimizer note themselves once, a flag test afterwards);
* ``check_with_us`` / ``check_without_us``: the parameter check (one all-gather of a digest,
  then the values) with the facts noted and with none: their difference is the agreement's
  cost, paid once per DistributedOptimizer (the first step), then again every ``recheck_every``
  steps (default 1000): ``recheck_pct`` is that re-check spread over the steps between two.

    python benchmarks/agreement_overhead.py --steps 300
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any


def replica(steps: int) -> dict[str, Any]:
    import torch

    import unison as tf
    from unison.comm.communicator import joined
    from unison.optim import agreement
    from unison.optim.safety import check_consistency

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    torch.manual_seed(0)
    with strategy.scope():
        model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
        optimizer = tf.keras.optimizers.Adam(0.001)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    x, y = torch.randn(16, 784), torch.randint(0, 10, (16,))
    params = list(model.parameters())

    def step() -> None:
        loss = tf.nn.compute_average_loss(loss_fn(y, model(x)), global_batch_size=32)
        grads = torch.autograd.grad(loss, params)
        optimizer.apply_gradients(zip(grads, params))

    times = []
    for i in range(steps + 20):
        started = time.perf_counter()
        strategy.run(step)
        if i >= 20:
            times.append(time.perf_counter() - started)
    note = []
    for _ in range(2000):
        started = time.perf_counter()
        agreement.note("global batch (compute_average_loss's global_batch_size)", 32)
        note.append(time.perf_counter() - started)
    comm = strategy.extended.communicator
    named = list(model.named_parameters())
    facts = dict(joined().__dict__.get("_agreement_facts", {}))

    torch_optimizer = optimizer._torch_optimizer  # what DistributedOptimizer passes as optimizer=

    def checks(n: int, with_facts: bool) -> list[float]:
        out = []
        for _ in range(n):
            comm.barrier()
            started = time.perf_counter()
            check_consistency(named, comm, optimizer=torch_optimizer if with_facts else None)
            out.append(time.perf_counter() - started)
        return out

    with_facts, without = [], []
    for _ in range(10):  # alternate, so a load swing hits both alike
        joined().__dict__["_agreement_facts"] = dict(facts)
        with_facts += checks(10, True)
        joined().__dict__["_agreement_facts"] = {}
        without += checks(10, False)
    return {
        "facts": sorted(facts),
        "step_us": statistics.median(times) * 1e6,
        "note_us": statistics.median(note) * 1e6,
        "check_with_us": statistics.median(with_facts) * 1e6,
        "check_without_us": statistics.median(without) * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    from unison.testing import run_distributed

    result = run_distributed(replica, 2, args=(args.steps,), timeout=600)[0]
    once = result["check_with_us"] - result["check_without_us"]
    result["per_step_overhead_pct"] = 100 * result["note_us"] / result["step_us"]
    result["first_step_overhead_pct_of_one_step"] = 100 * once / result["step_us"]
    result["recheck_pct"] = 100 * result["check_with_us"] / (1000 * result["step_us"])
    result["epoch_1875_steps_overhead_pct"] = 100 * (once + 1875 * result["note_us"]) / (1875 * result["step_us"])
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
