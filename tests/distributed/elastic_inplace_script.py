"""An hvd.elastic training job for test_elastic_inplace.py and benchmarks/elastic_times.py.

Run by `unison launch --min-workers A --max-workers B` (or, for the full-restart baseline of the
benchmark, `unison launch --max-restarts 1`, where rank 0 writes each commit to a file). Each worker writes its pid to
$OUT/pid.<worker>, one JSON line per step to $OUT/steps.<worker> (rank, size, pid, epoch, batch,
time) and its final accuracy to $OUT/result.<worker>. While the file $OUT/hold exists the job
paces its steps (0.08 s) and waits before its very last step (checking for new workers), so that a test
can kill or add workers mid-training.

Horovod's rules: the per-worker batch is fixed (the global batch is BATCH * size) and the
reset callback scales the learning rate by the new hvd.size().
"""

import faulthandler
import json
import os
import signal
import time

import torch

import unison as hvd

EPOCHS, STEPS, BATCH, BASE_LR = 6, 12, 16, 0.05


def main() -> None:
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 PID` prints where a worker is
    out = os.environ["OUT"]
    hvd.init()
    # the elastic agent's worker id; under torchrun (--max-restarts), the rank
    worker = os.environ.get("UNISON_ELASTIC_WORKER") or str(hvd.rank())
    with open(os.path.join(out, f"pid.{worker}"), "w") as f:
        f.write(str(os.getpid()))
    hold = os.path.join(out, "hold")
    g = torch.Generator().manual_seed(0)
    centers = torch.randn(4, 8, generator=g) * 2.0
    labels = torch.arange(4).repeat_interleave(256)
    data = centers[labels] + torch.randn(len(labels), 8, generator=g)
    torch.manual_seed(int(worker))  # different starting weights: sync() must give rank 0's
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    log = open(os.path.join(out, f"steps.{worker}"), "a")
    opt = hvd.DistributedOptimizer(
        torch.optim.SGD(model.parameters(), lr=BASE_LR * hvd.size()), named_parameters=model.named_parameters()
    )
    state = hvd.elastic.TorchState(model, opt, epoch=0, batch=0)

    def on_reset() -> None:
        for group in opt.param_groups:
            group["lr"] = BASE_LR * hvd.size()

    state.register_reset_callbacks([on_reset])

    @hvd.elastic.run
    def train(state: hvd.elastic.TorchState) -> None:
        with open(os.path.join(out, f"started.{worker}"), "a") as f:  # each (re-)entry, after sync
            f.write(json.dumps(dict(rank=hvd.rank(), size=hvd.size(), epoch=state.epoch, batch=state.batch)) + "\n")
        while state.epoch < EPOCHS:
            perm = torch.randperm(len(labels), generator=torch.Generator().manual_seed(state.epoch))
            shard = perm[hvd.rank() :: hvd.size()]
            while state.batch < STEPS:
                while os.path.exists(hold) and state.epoch == EPOCHS - 1 and state.batch == STEPS - 1:
                    time.sleep(0.05)
                    state.check_host_updates()
                idx = shard[state.batch * BATCH : (state.batch + 1) * BATCH]
                opt.zero_grad()
                torch.nn.functional.cross_entropy(model(data[idx]), labels[idx]).backward()
                opt.step()
                entry = dict(rank=hvd.rank(), size=hvd.size(), pid=os.getpid(), epoch=state.epoch, batch=state.batch)
                entry.update(local_rank=hvd.local_rank(), local_size=hvd.local_size())
                log.write(json.dumps({**entry, "time": time.time(), "lr": opt.param_groups[0]["lr"]}) + "\n")
                log.flush()
                if os.path.exists(hold):
                    time.sleep(0.08)
                state.batch += 1
                state.commit()
            state.epoch, state.batch = state.epoch + 1, 0
            state.commit()

    train(state)
    with torch.no_grad():
        acc = (model(data).argmax(1) == labels).float().mean().item()
    with open(os.path.join(out, f"result.{worker}"), "w") as f:
        json.dump(dict(acc=acc, rank=hvd.rank(), size=hvd.size(), pid=os.getpid()), f)


if __name__ == "__main__":  # pytest's doctest collection imports this file: run nothing then
    main()
