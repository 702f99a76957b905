"""Conv1D on channels-last sequences: torch's ``conv1d`` on a permuted input vs a height-1 ``conv2d``.

Keras's Conv1D takes ``(batch, steps, channels)``. ``F.conv1d`` wants ``(batch, channels, steps)``
contiguous, so the permuted view is copied first (there is no 1-D channels-last memory format);
the same memory viewed as ``(batch, channels, 1, steps)`` is channels_last for ``F.conv2d``, which
oneDNN convolves in place. This times both, forward + backward, on the FCN of
``benchmarks/models_vs_tf.py`` (batch 32, 500 steps, 3-wide kernels, 1 -> 64 and 64 -> 64 channels),
interleaved, the median of the repeats of the process's CPU time (both threads counted, so the
figure is steadier than wall time on a shared machine) and of wall time.

    python benchmarks/conv1d_layout.py --repeats 7
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F


def conv1d_on_permuted(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """What unison's Conv1D did before: conv1d on ``(batch, channels, steps)``."""
    return F.conv1d(x.permute(0, 2, 1), w.permute(2, 1, 0), b, 1, 1).permute(0, 2, 1)


def conv2d_height_one(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """What it does now: the same memory as a channels_last ``(batch, channels, 1, steps)``."""
    y = F.conv2d(x.permute(0, 2, 1).unsqueeze(2), w.permute(2, 1, 0).unsqueeze(2), b, 1, (0, 1))
    return y.squeeze(2).permute(0, 2, 1)


def _step(fn: Callable[..., torch.Tensor], *tensors: torch.Tensor) -> None:
    *inputs, grad = tensors
    fn(*inputs).backward(grad)


def timed(fn: Callable[[], None], calls: int) -> tuple[float, float]:
    """(CPU ms, wall ms) per call."""
    fn()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.process_time() - cpu) / calls * 1e3, (time.perf_counter() - wall) / calls * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    torch.manual_seed(0)
    print(f"command: python benchmarks/conv1d_layout.py --repeats {args.repeats} --calls {args.calls}")
    print("| in -> out channels | conv1d CPU ms | height-1 conv2d CPU ms | CPU ratio | wall ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for cin in (1, 64):
        x = torch.randn(32, 500, cin, requires_grad=True)
        w = torch.randn(3, cin, 64, requires_grad=True)
        b = torch.randn(64, requires_grad=True)
        grad = torch.randn(32, 500, 64)
        torch.testing.assert_close(conv1d_on_permuted(x, w, b), conv2d_height_one(x, w, b), rtol=1e-4, atol=1e-4)
        runs: dict[str, list[tuple[float, float]]] = {"conv1d": [], "conv2d": []}
        for _ in range(args.repeats):
            for name, fn in (("conv1d", conv1d_on_permuted), ("conv2d", conv2d_height_one)):
                step = functools.partial(_step, fn, x, w, b, grad)
                runs[name].append(timed(step, args.calls))
        cpu = {k: statistics.median(c for c, _ in v) for k, v in runs.items()}
        wall = {k: statistics.median(t for _, t in v) for k, v in runs.items()}
        print(
            f"| {cin} -> 64 | {cpu['conv1d']:.2f} | {cpu['conv2d']:.2f} | {cpu['conv2d'] / cpu['conv1d']:.2f}x "
            f"| {wall['conv2d'] / wall['conv1d']:.2f}x |"
        )


if __name__ == "__main__":
    main()
