"""A Horovod elastic program for test_horovod_elastic.py: rank 1 dies once after a commit.

Run by `unison launch --nproc-per-node 2 --max-restarts 1`; each rank appends one JSON line per
event to $EVENTS_DIR/rank<R>.jsonl (the two ranks' stdout lines may interleave).
"""

import json
import os

import torch

import unison as hvd


def say(**event):
    path = os.path.join(os.environ["EVENTS_DIR"], f"rank{hvd.rank()}.jsonl")
    with open(path, "a") as f:
        f.write(json.dumps({"rank": hvd.rank(), "attempt": attempt, **event}) + "\n")


def on_reset():
    say(event="reset", size=hvd.size())


@hvd.elastic.run
def train(state):
    say(event="start", epoch=state.epoch, weights=model.weight.detach().flatten().tolist())
    for state.epoch in range(state.epoch, 4):  # noqa: B020 (Horovod's idiom: the loop variable is state)
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
        state.commit()
        say(event="commit", epoch=state.epoch, weights=model.weight.detach().flatten().tolist())
        if attempt == 0 and state.epoch == 1 and hvd.rank() == 1:
            os._exit(3)  # a process dies: the job restarts from the last commit


if __name__ == "__main__":  # pytest's doctest collection imports this file: run nothing then
    hvd.init()
    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    torch.manual_seed(hvd.rank())  # different initial weights: sync() must give rank 0's
    model = torch.nn.Linear(2, 1)
    optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1))
    x = torch.full((4, 2), float(hvd.rank() + 1))
    state = hvd.elastic.TorchState(model, optimizer, epoch=0)
    state.register_reset_callbacks([on_reset])
    train(state)
    say(event="done", weights=model.weight.detach().flatten().tolist())
