"""Forward + backward CPU time of the DCGAN's lopsided "same" convolutions, by how they are padded.

TF's "same" padding of a kernel-5, stride-2 convolution is 1 cell before and 2 after; torch pads
both ends alike. For the discriminator's ``Conv2D(128, 5, strides=2)`` on 14x14x64 it times the
whole padding in a copy (unison before issue 36), the extra cell in a copy plus ``padding=1``
(now), and plain PyTorch's ``padding=2`` (one cell off Keras's windows: the speed reference). For
the generator's ``Conv2DTranspose(64, 5, strides=2)`` on 7x7x128: the full transposed convolution
cropped by a negative ``F.pad`` (before), ``padding=1`` with the extra cell dropped by a view (its
gradient filled channels-last, as ``conv_transpose._Narrow`` does; and by plain slicing), and
plain PyTorch's ``padding=2, output_padding=1``. Batch 64, channels-last, process CPU time (all
threads), variants interleaved with the order reversed every round, medians.

    python benchmarks/conv_padding.py --rounds 3 [--bf16] [--threads 1]
"""

from __future__ import annotations

import argparse
import resource
import statistics
from collections.abc import Callable

import torch
import torch.nn.functional as F

from unison.keras.layers.conv_transpose import _Narrow

CL = torch.channels_last


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def time_ms(fn: Callable[[], None], reps: int) -> float:
    for _ in range(2):
        fn()
    times = []
    for _ in range(reps):
        start = cpu_seconds()
        fn()
        times.append((cpu_seconds() - start) * 1e3)
    return statistics.median(times)


def variants(bf16: bool) -> dict[str, Callable[[], None]]:
    torch.manual_seed(0)
    x = torch.randn(64, 64, 14, 14).to(memory_format=CL).requires_grad_(True)
    w = torch.randn(128, 64, 5, 5).to(memory_format=CL).requires_grad_(True)
    g = torch.randn(64, 128, 7, 7).to(memory_format=CL)
    xt = torch.randn(64, 128, 7, 7).to(memory_format=CL).requires_grad_(True)
    wt = torch.randn(128, 64, 5, 5).to(memory_format=CL).requires_grad_(True)
    gt = torch.randn(64, 64, 14, 14).to(memory_format=CL)

    def step(f: Callable[[], torch.Tensor], inputs: tuple[torch.Tensor, ...], grad: torch.Tensor) -> Callable[[], None]:
        def run() -> None:
            with torch.autocast("cpu", torch.bfloat16, enabled=bf16):
                y = f()
            torch.autograd.grad(y, inputs, grad)

        return run

    return {
        "Conv2D: pad 1+2 in a copy (before)": step(lambda: F.conv2d(F.pad(x, (1, 2, 1, 2)), w, None, 2), (x, w), g),
        "Conv2D: pad 1 after in a copy, padding=1 (now)": step(
            lambda: F.conv2d(F.pad(x, (0, 1, 0, 1)), w, None, 2, 1), (x, w), g
        ),
        "Conv2D: padding=2 (plain torch, shifted)": step(lambda: F.conv2d(x, w, None, 2, 2), (x, w), g),
        "Conv2DTranspose: full, cropped (before)": step(
            lambda: F.pad(F.conv_transpose2d(xt, wt, None, 2), (-1, -2, -1, -2)), (xt, wt), gt
        ),
        "Conv2DTranspose: padding=1, _Narrow (now)": step(
            lambda: _Narrow.apply(F.conv_transpose2d(xt, wt, None, 2, 1), (14, 14)), (xt, wt), gt
        ),
        "Conv2DTranspose: padding=1, slicing": step(
            lambda: F.conv_transpose2d(xt, wt, None, 2, 1)[:, :, :14, :14], (xt, wt), gt
        ),
        "Conv2DTranspose: padding=2, output_padding=1 (plain torch, shifted)": step(
            lambda: F.conv_transpose2d(xt, wt, None, 2, 2, 1), (xt, wt), gt
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=8, help="timed calls per variant and round")
    parser.add_argument("--bf16", action="store_true", help="run the convolutions under bfloat16 autocast")
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    cases = variants(args.bf16)
    names = list(cases)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            times[name].append(time_ms(cases[name], args.reps))
    print(f"threads {torch.get_num_threads()}, {'bfloat16' if args.bf16 else 'float32'}, forward + backward")
    for name in names:
        print(f"{name:70s} {statistics.median(times[name]):8.2f} ms")


if __name__ == "__main__":
    main()
