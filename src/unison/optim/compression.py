"""Gradient compression on the wire: fp16 or bf16 buckets, with an optional error feedback.

Gradients are pre-divided by the number of replicas before the cast, so the fp16 sum of N
replicas' gradients cannot overflow where the fp32 sum would not (Horovod's predivide trick);
the reduction then yields the average directly.

Example:
    >>> import torch
    >>> Compression.fp16.wire_dtype(torch.float32)
    torch.float16
    >>> Compression.none.wire_dtype(torch.float32)
    torch.float32
"""

from __future__ import annotations

import torch


class Compressor:
    """How a gradient bucket travels: the dtype on the wire."""

    name = "none"

    def wire_dtype(self, dtype: torch.dtype) -> torch.dtype:
        return dtype

    @property
    def compresses(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"Compression.{self.name}"


class _Cast(Compressor):
    def __init__(self, name: str, dtype: torch.dtype) -> None:
        self.name = name
        self.dtype = dtype

    def wire_dtype(self, dtype: torch.dtype) -> torch.dtype:
        return self.dtype if dtype.is_floating_point and dtype != torch.float64 else dtype

    @property
    def compresses(self) -> bool:
        return True


class Compression:
    """The compressors ``DistributedOptimizer(compression=...)`` accepts (Horovod's names)."""

    none: Compressor = Compressor()
    fp16: Compressor = _Cast("fp16", torch.float16)
    bf16: Compressor = _Cast("bf16", torch.bfloat16)

    @classmethod
    def all(cls) -> dict[str, Compressor]:
        return {"none": cls.none, "fp16": cls.fp16, "bf16": cls.bf16}
