"""Kernel layout cost: Keras's layout (what unison's Dense and Conv2D keep) vs torch's, forward + backward.

unison's ``Dense`` keeps its kernel as ``(in, units)`` and calls ``F.linear`` on the transposed
view; ``Conv2D`` keeps ``(kh, kw, in, filters)`` and convolves a permuted view. This times both
against kernels stored in torch's own layout, on the seed MLP's first layer (batch 32, 784 -> 128)
and the custom-training tutorial's second convolution (batch 64, 32 -> 64 channels, 3x3, on a
channels-last 13x13 input), interleaved, one thread, median of the repeats.

    python benchmarks/kernel_layout.py --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F


def per_call_us(fn: Callable[[], None], calls: int) -> float:
    for _ in range(max(3, calls // 10)):
        fn()
    begin = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - begin) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x = torch.randn(32, 784)
    w_torch = torch.randn(128, 784, requires_grad=True)
    w_keras = w_torch.detach().t().contiguous().requires_grad_()
    images = torch.randn(64, 13, 13, 32).permute(0, 3, 1, 2)  # NHWC viewed as NCHW, as Conv2D does
    c_torch = torch.randn(64, 32, 3, 3, requires_grad=True)
    c_keras = c_torch.detach().permute(2, 3, 1, 0).contiguous().requires_grad_()
    cases = {
        "Dense 784->128, batch 32": (
            lambda: F.linear(x, w_torch).sum().backward(),
            lambda: F.linear(x, w_keras.t()).sum().backward(),
            300,
        ),
        "Conv2D 32->64 3x3, batch 64, 13x13": (
            lambda: F.conv2d(images, c_torch).sum().backward(),
            lambda: F.conv2d(images, c_keras.permute(3, 2, 0, 1)).sum().backward(),
            40,
        ),
    }
    print(f"Command: `python benchmarks/kernel_layout.py {' '.join(sys.argv[1:])}`\n")
    print("| layer | torch layout (us) | Keras layout (us) | Keras / torch (median of per-repeat ratios) |")
    print("| --- | --- | --- | --- |")
    for name, (torch_fn, keras_fn, calls) in cases.items():
        t_times, k_times, ratios = [], [], []
        for r in range(args.repeats):
            pair = [(torch_fn, t_times), (keras_fn, k_times)]
            for fn, out in pair if r % 2 == 0 else pair[::-1]:
                out.append(per_call_us(fn, calls))
            ratios.append(k_times[-1] / t_times[-1])
        print(
            f"| {name} | {statistics.median(t_times):.0f} | {statistics.median(k_times):.0f} | "
            f"{statistics.median(ratios):.3f} |"
        )


if __name__ == "__main__":
    main()
