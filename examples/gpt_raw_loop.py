"""The GPT of examples/gpt.py in a raw PyTorch loop with unison.DistributedOptimizer (Horovod style).

    python examples/gpt_raw_loop.py                                 # one process
    unison launch --nproc-per-node 2 examples/gpt_raw_loop.py       # two processes (gloo on CPU)

Each process takes every ``size``-th row of a global batch, runs the forward under
``torch.autocast`` (``--precision mixed_bfloat16``), and ``DistributedOptimizer`` averages the
gradients of all processes while ``backward()`` runs, clips their global norm and steps AdamW.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import unison

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from gpt import GPT, make_sequences, read_corpus  # the example beside this one


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", default="mixed_bfloat16", choices=["float32", "mixed_bfloat16"])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--log-every", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=32, help="global batch size")
    parser.add_argument("--seq-len", type=int, default=64)
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--learning-rate", type=float, default=3e-3)
    parser.add_argument("--max-bytes", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    unison.init()
    rank, size = unison.rank(), unison.size()
    show = print if rank == 0 else (lambda *a, **k: None)
    if args.batch_size % size:
        raise SystemExit(f"--batch-size {args.batch_size} must be a multiple of the {size} processes.")
    x, y = make_sequences(read_corpus(args.max_bytes), args.seq_len)
    x, y = torch.from_numpy(x), torch.from_numpy(y)

    torch.manual_seed(args.seed)
    model = GPT(256, args.seq_len, args.d_model, args.heads, args.layers)
    model.build((1, args.seq_len))
    unison.broadcast_parameters(model.state_dict(), root_rank=0)
    optimizer = unison.DistributedOptimizer(
        torch.optim.AdamW(model.parameters(), lr=args.learning_rate, weight_decay=0.01),
        named_parameters=model.named_parameters(),
        clip_grad_norm=1.0,
    )
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "mixed_bfloat16")
    show(f"{len(x)} sequences; {size} process(es); {args.precision}; {model.count_params():,} parameters")

    order = np.random.default_rng(args.seed).permutation(len(x))  # the same order on every process
    model.train()
    start, running = time.perf_counter(), 0.0
    for step in range(args.steps):
        rows = order[(np.arange(args.batch_size) + step * args.batch_size) % len(x)][rank::size]
        with autocast:
            logits = model(x[rows])
        loss = F.cross_entropy(logits.float().reshape(-1, 256), y[rows].reshape(-1))
        loss.backward()
        optimizer.step()  # gradients averaged over the processes, clipped, AdamW
        optimizer.zero_grad()
        running += float(unison.allreduce(loss.detach(), op=unison.Average))
        if (step + 1) % args.log_every == 0:
            mean = running / args.log_every
            show(
                f"step {step + 1}: loss {mean:.4f} - perplexity {math.exp(mean):.2f} - "
                f"{time.perf_counter() - start:.1f}s"
            )
            running = 0.0


if __name__ == "__main__":
    main()
