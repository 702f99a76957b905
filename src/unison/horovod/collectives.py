"""Horovod's collectives (``hvd.allreduce``, ``allgather``, ``broadcast``, ``alltoall``, ...) on unison.

Every function here is a collective over the job ``unison.init()`` joined: every process calls
it, in the same order, with tensors of one dtype (and, where Horovod requires it, one shape).
The blocking forms return new tensors and leave their input alone; the ``_`` forms work in place;
the ``_async`` forms return a :class:`Handle` for :func:`synchronize` / :func:`poll`. As in
Horovod's torch API, ``allreduce``, ``allgather``, ``broadcast`` and ``alltoall`` are
differentiable (their gradient is the matching collective of the incoming gradient).

Example:
    >>> import torch, unison as hvd
    >>> hvd.init()
    >>> hvd.allreduce(torch.tensor([1.0, 3.0]), op=hvd.Sum).tolist()        # one process
    [1.0, 3.0]
    >>> hvd.synchronize(hvd.allreduce_async(torch.ones(2))).tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import torch

from unison.comm.communicator import Communicator, Pending
from unison.comm.reduce_op import ReduceOp
from unison.horovod.basics import _comm
from unison.optim.adasum import adasum_tree
from unison.optim.compression import Compression, Compressor
from unison.optim.distributed import Adasum, Average, Sum

_OPS = ("AVERAGE", "SUM", "ADASUM")
_OP_WORDS = "unison.Average or unison.Sum, or unison.Adasum"
_NAMES = itertools.count()


class ProcessSet:
    """Horovod's process set; unison supports the global one (every process of the job)."""

    def __repr__(self) -> str:
        return "global_process_set"


global_process_set = ProcessSet()


def _check_process_set(process_set: Any, fn: str) -> None:
    if process_set is not None and process_set is not global_process_set:
        raise NotImplementedError(
            f"{fn}(process_set={process_set!r}): unison runs every collective over all processes "
            "(hvd.global_process_set). Drop process_set=, or start a separate job for the subset."
        )


def _resolve_op(average: bool | None, op: Any, fn: str) -> ReduceOp:
    """Horovod's rule: ``op`` wins; the deprecated ``average`` picks Average/Sum; default Average."""
    if op is not None and average is not None:
        raise ValueError(f"{fn}: pass op= or the deprecated average=, not both. Received: average={average}, op={op}")
    if op is None:
        return Average if average is None or average else Sum
    return ReduceOp.parse(op, _OPS, _OP_WORDS)


def _check_tensor(tensor: Any, fn: str) -> torch.Tensor:
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{fn} expects a torch tensor. Received: {type(tensor).__name__} {tensor!r:.60}")
    return tensor


def _check_compression(compression: Any, fn: str) -> Compressor:
    if isinstance(compression, Compressor):
        return compression
    raise ValueError(f"{fn}: unknown compression {compression!r}. Expected unison.Compression.none, .fp16 or .bf16.")


def _name(name: str | None, kind: str) -> str:
    return name or f"{kind}.noname.{next(_NAMES)}"


def _copy_into(target: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """The in-place forms' last step: ``target`` takes ``value`` (outside autograd) and is returned."""
    with torch.no_grad():
        target.copy_(value)
    return target


def _own_rows(tensor: torch.Tensor, rows: Sequence[int], rank: int) -> torch.Tensor:
    """Rank ``rank``'s rows of ``tensor`` when the ranks hold ``rows[0], rows[1], ...`` rows in order."""
    start = sum(rows[:rank])
    return tensor[start : start + rows[rank]]


def _reduce(
    tensor: torch.Tensor,
    op: ReduceOp,
    name: str,
    prescale: float,
    postscale: float,
    comm: Communicator,
    named: bool = False,
) -> torch.Tensor:
    """``tensor`` reduced across processes, as a new tensor on ``tensor``'s device."""
    out = tensor.detach().to(comm.device).clone()
    if prescale != 1.0:
        out.mul_(prescale)
    if op is Adasum:
        parts = comm.all_gather(out.reshape(1, -1), name=name)
        out = adasum_tree([p.reshape(-1) for p in parts]).reshape(tensor.shape)
    else:
        if out.dtype == torch.bool:
            raise TypeError(f"allreduce '{name}': boolean tensors cannot be summed; cast to an integer dtype first.")
        # Horovod matches named collectives by name: same-shape tensors of different names on
        # different ranks are not one reduction (Horovod stalls on them; here a named error)
        comm.all_reduce(out, name=name, match_name=named)
        if op is Average:
            out = out / comm.world_size if out.is_floating_point() else out // comm.world_size
    if postscale != 1.0:
        out.mul_(postscale)
    return out.to(tensor.device)


class _Allreduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor, op: ReduceOp, name: str, pre: float, post: float) -> torch.Tensor:
        ctx.args = (op, name, pre, post)
        return _reduce(tensor, op, name, pre, post, _comm())

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, ...]:
        # Horovod's gradient: the same reduction of the incoming gradients.
        op, name, pre, post = ctx.args
        return _reduce(grad.contiguous(), op, f"{name}.grad", pre, post, _comm()), None, None, None, None


def allreduce(
    tensor: torch.Tensor,
    average: bool | None = None,
    name: str | None = None,
    compression: Compressor = Compression.none,
    op: ReduceOp | str | None = None,
    prescale_factor: float = 1.0,
    postscale_factor: float = 1.0,
    process_set: Any = None,
) -> torch.Tensor:
    """A new tensor: ``tensor`` averaged (default), summed or Adasum-combined over all processes.

    Horovod's ``hvd.allreduce``: ``tensor`` is left alone; ``prescale_factor`` multiplies it
    before the reduction and ``postscale_factor`` the result; ``compression`` (``.fp16``/``.bf16``)
    is the dtype on the wire. Differentiable: the gradient is the same reduction of the
    incoming gradient. Integer tensors are averaged with floor division.

    Example:
        >>> import torch, unison as hvd
        >>> hvd.init(); hvd.allreduce(torch.tensor([2.0]), op=hvd.Sum, postscale_factor=0.5).tolist()
        [1.0]
    """
    tensor = _check_tensor(tensor, "allreduce")
    _check_process_set(process_set, "allreduce")
    reduce_op = _resolve_op(average, op, "allreduce")
    wire = _check_compression(compression, "allreduce").wire_dtype(tensor.dtype)
    label = _name(name, "allreduce")
    sent = tensor.to(wire) if wire != tensor.dtype else tensor
    if sent.requires_grad and torch.is_grad_enabled():
        out = _Allreduce.apply(sent, reduce_op, label, float(prescale_factor), float(postscale_factor))
    else:
        out = _reduce(
            sent, reduce_op, label, float(prescale_factor), float(postscale_factor), _comm(), named=name is not None
        )
    return out.to(tensor.dtype) if out.dtype != tensor.dtype else out


def allreduce_(
    tensor: torch.Tensor,
    average: bool | None = None,
    name: str | None = None,
    op: ReduceOp | str | None = None,
    prescale_factor: float = 1.0,
    postscale_factor: float = 1.0,
    process_set: Any = None,
) -> torch.Tensor:
    """In-place ``allreduce``: ``tensor`` itself holds the result, which is returned.

    Example:
        >>> import torch, unison as hvd
        >>> t = torch.tensor([4.0]); hvd.init(); hvd.allreduce_(t, op=hvd.Sum) is t
        True
    """
    tensor = _check_tensor(tensor, "allreduce_")
    _check_process_set(process_set, "allreduce_")
    result = _reduce(
        tensor,
        _resolve_op(average, op, "allreduce_"),
        _name(name, "allreduce"),
        prescale_factor,
        postscale_factor,
        _comm(),
    )
    return _copy_into(tensor, result)


def grouped_allreduce(
    tensors: Sequence[torch.Tensor],
    average: bool | None = None,
    name: str | None = None,
    compression: Compressor = Compression.none,
    op: ReduceOp | str | None = None,
    prescale_factor: float = 1.0,
    postscale_factor: float = 1.0,
    process_set: Any = None,
) -> list[torch.Tensor]:
    """``allreduce`` of a list of tensors in one collective per dtype (Horovod's tensor fusion).

    Returns new tensors in the order given; the inputs are left alone.

    Example:
        >>> import torch, unison as hvd
        >>> hvd.init(); [t.tolist() for t in hvd.grouped_allreduce([torch.ones(2), torch.zeros(1)])]
        [[1.0, 1.0], [0.0]]
    """
    _check_process_set(process_set, "grouped_allreduce")
    reduce_op = _resolve_op(average, op, "grouped_allreduce")
    comp = _check_compression(compression, "grouped_allreduce")
    group = [_check_tensor(t, "grouped_allreduce") for t in tensors]
    return reduce_group(group, reduce_op, comp, _name(name, "grouped_allreduce"), prescale_factor, postscale_factor)


def reduce_group(
    tensors: Sequence[torch.Tensor],
    op: ReduceOp,
    compression: Compressor,
    name: str,
    prescale: float = 1.0,
    postscale: float = 1.0,
    comm: Communicator | None = None,
) -> list[torch.Tensor]:
    """Reduce ``tensors`` as flat buffers, one per wire dtype; new tensors, same order."""
    comm = comm or _comm()
    out: list[torch.Tensor | None] = [None] * len(tensors)
    by_wire: dict[torch.dtype, list[int]] = {}
    for i, t in enumerate(tensors):
        by_wire.setdefault(compression.wire_dtype(t.dtype), []).append(i)
    for wire, indices in by_wire.items():
        flat = torch.cat([tensors[i].detach().reshape(-1).to(comm.device, wire) for i in indices])
        if op is Adasum:
            # Adasum combines each tensor on its own (its dot products are per tensor)
            flat = flat * prescale
            parts = [p.reshape(-1) for p in comm.all_gather(flat.reshape(1, -1), name=f"{name}.{wire}")]
            reduced = torch.cat(
                [adasum_tree([p[s : s + n] for p in parts]) for s, n in _spans([tensors[i] for i in indices])]
            )
            reduced = reduced * postscale
        else:
            reduced = _reduce(flat, op, f"{name}.{wire}", prescale, postscale, comm)
        offset = 0
        for i in indices:
            t = tensors[i]
            out[i] = reduced[offset : offset + t.numel()].view(t.shape).to(t.device, t.dtype)
            offset += t.numel()
    return [t for t in out if t is not None]


def _spans(tensors: Sequence[torch.Tensor]) -> list[tuple[int, int]]:
    spans, offset = [], 0
    for t in tensors:
        spans.append((offset, t.numel()))
        offset += t.numel()
    return spans


def grouped_allreduce_(
    tensors: Sequence[torch.Tensor],
    average: bool | None = None,
    name: str | None = None,
    op: ReduceOp | str | None = None,
    prescale_factor: float = 1.0,
    postscale_factor: float = 1.0,
    process_set: Any = None,
) -> list[torch.Tensor]:
    """In-place ``grouped_allreduce``: each tensor holds its result; returns the same tensors."""
    reduced = grouped_allreduce(
        tensors, average, name, Compression.none, op, prescale_factor, postscale_factor, process_set
    )
    return [_copy_into(t, r) for t, r in zip(tensors, reduced)]


def _summed_grad(grad: torch.Tensor, name: str, comm: Communicator) -> torch.Tensor:
    """Every process's incoming gradient, summed (the backward of allgather and broadcast)."""
    return _reduce(grad.contiguous(), Sum, f"{name}.grad", 1.0, 1.0, comm)


class _Allgather(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor, name: str) -> torch.Tensor:
        comm = _comm()
        parts = comm.all_gather(tensor.detach().to(comm.device), name=name)
        ctx.rows = [p.shape[0] for p in parts]
        ctx.rank, ctx.name = comm.rank, name
        return torch.cat(parts).to(tensor.device)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, None]:
        # every process's output depends on this slice: sum the gradients, keep our rows
        return _own_rows(_summed_grad(grad, ctx.name, _comm()), ctx.rows, ctx.rank), None


def allgather(tensor: torch.Tensor, name: str | None = None, process_set: Any = None) -> torch.Tensor:
    """Every process's ``tensor`` concatenated along dim 0, in rank order (sizes along it may differ).

    Example:
        >>> import torch, unison as hvd
        >>> hvd.init(); hvd.allgather(torch.ones(2, 3)).shape
        torch.Size([2, 3])
    """
    tensor = _check_tensor(tensor, "allgather")
    _check_process_set(process_set, "allgather")
    if tensor.dim() == 0:
        raise ValueError("allgather concatenates along dim 0: pass a tensor of at least one dimension (t.reshape(1)).")
    label = _name(name, "allgather")
    if tensor.requires_grad and torch.is_grad_enabled():
        out: torch.Tensor = _Allgather.apply(tensor, label)
        return out
    comm = _comm()
    return torch.cat(comm.all_gather(tensor.detach().to(comm.device), name=label)).to(tensor.device)


def _check_root(root_rank: int, fn: str) -> int:
    size = _comm().world_size
    if isinstance(root_rank, bool) or not isinstance(root_rank, int) or not 0 <= root_rank < size:
        raise ValueError(f"{fn}: root_rank must be a rank of the job, 0..{size - 1}. Received: root_rank={root_rank!r}")
    return root_rank


def _broadcast(tensor: torch.Tensor, root: int, name: str) -> torch.Tensor:
    """A new tensor on ``tensor``'s device holding ``root``'s ``tensor``."""
    comm = _comm()
    return comm.broadcast(tensor.detach().to(comm.device).clone(), src=root, name=name).to(tensor.device)


class _Broadcast(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor, root: int, name: str) -> torch.Tensor:
        ctx.root, ctx.name = root, name
        return _broadcast(tensor, root, name)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[Any, None, None]:
        # Horovod: the root's input receives every process's gradient, summed; the others none
        comm = _comm()
        summed = _summed_grad(grad, ctx.name, comm)
        return (summed if comm.rank == ctx.root else torch.zeros_like(summed)), None, None


def broadcast(
    tensor: torch.Tensor, root_rank: int = 0, name: str | None = None, process_set: Any = None
) -> torch.Tensor:
    """A new tensor holding ``root_rank``'s ``tensor`` on every process (differentiable)."""
    tensor = _check_tensor(tensor, "broadcast")
    _check_process_set(process_set, "broadcast")
    root = _check_root(root_rank, "broadcast")
    label = _name(name, "broadcast")
    if tensor.requires_grad and torch.is_grad_enabled():
        out: torch.Tensor = _Broadcast.apply(tensor, root, label)
        return out
    return _broadcast(tensor, root, label)


def broadcast_(
    tensor: torch.Tensor, root_rank: int = 0, name: str | None = None, process_set: Any = None
) -> torch.Tensor:
    """In-place ``broadcast``: ``tensor`` is overwritten with ``root_rank``'s value and returned."""
    return _copy_into(tensor, broadcast(_check_tensor(tensor, "broadcast_").detach(), root_rank, name, process_set))


def alltoall(tensor: torch.Tensor, splits: Any = None, name: str | None = None, process_set: Any = None) -> Any:
    """Send slices of ``tensor`` (along dim 0) to every process; receive theirs, in rank order.

    ``splits[r]`` rows go to rank ``r`` (default: ``tensor.shape[0] / size`` each, which must
    divide). Returns the received rows; with ``splits``, also a tensor of how many rows came
    from each rank (Horovod's ``(output, received_splits)``).

    Example:
        >>> import torch, unison as hvd
        >>> hvd.init(); hvd.alltoall(torch.arange(3)).tolist()
        [0, 1, 2]
    """
    tensor = _check_tensor(tensor, "alltoall")
    _check_process_set(process_set, "alltoall")
    comm = _comm()
    size = comm.world_size
    rows = tensor.shape[0] if tensor.dim() else 0
    if splits is None:
        if tensor.dim() == 0 or rows % size:
            raise ValueError(
                f"alltoall without splits divides dim 0 equally among {size} processes, but the tensor has shape "
                f"{tuple(tensor.shape)}. Pass splits= (rows for each rank) or a tensor whose first dimension is a "
                f"multiple of {size}."
            )
        counts = [rows // size] * size
    else:
        counts = [int(s) for s in torch.as_tensor(splits).reshape(-1).tolist()]
        if len(counts) != size or any(c < 0 for c in counts) or sum(counts) != rows:
            raise ValueError(
                f"alltoall: splits must hold {size} non-negative row counts that add up to the tensor's first "
                f"dimension ({rows}). Received: splits={counts}"
            )
    label = _name(name, "alltoall")
    pieces = list(torch.split(tensor.detach().to(comm.device), counts)) if rows else [tensor.detach()] * size
    # A gather of everyone's pieces and the counts: each rank keeps the pieces addressed to it.
    table = comm.all_gather_object([p.cpu() for p in pieces], name=label) if comm.is_distributed else [pieces]
    received = [table[src][comm.rank] for src in range(size)]
    output = torch.cat(received).to(tensor.device, tensor.dtype)
    if splits is None:
        return output
    return output, torch.tensor([r.shape[0] for r in received], dtype=torch.int32)


def reducescatter(
    tensor: torch.Tensor,
    name: str | None = None,
    compression: Compressor = Compression.none,
    op: ReduceOp | str = Average,
    process_set: Any = None,
    prescale_factor: float = 1.0,
    postscale_factor: float = 1.0,
) -> torch.Tensor:
    """This process's slice (along dim 0) of ``tensor`` reduced over all processes.

    Rows are shared as Horovod shares them: ``rows // size`` each, the first ``rows % size``
    ranks one more. ``op`` is ``Average`` (default) or ``Sum``.

    Example:
        >>> import torch, unison as hvd
        >>> hvd.init(); hvd.reducescatter(torch.ones(3, 2), op=hvd.Sum).shape
        torch.Size([3, 2])
    """
    tensor = _check_tensor(tensor, "reducescatter")
    _check_process_set(process_set, "reducescatter")
    reduce_op = ReduceOp.parse(op, ("AVERAGE", "SUM"), "unison.Average or unison.Sum")
    comm = _comm()
    if tensor.dim() == 0:
        raise ValueError("reducescatter splits dim 0: pass a tensor of at least one dimension.")
    wire = _check_compression(compression, "reducescatter").wire_dtype(tensor.dtype)
    reduced = _reduce(tensor.to(wire), reduce_op, _name(name, "reducescatter"), prescale_factor, postscale_factor, comm)
    rows, size = tensor.shape[0], comm.world_size
    counts = [rows // size + (1 if r < rows % size else 0) for r in range(size)]
    return _own_rows(reduced, counts, comm.rank).to(tensor.dtype).clone()


def allgather_object(obj: Any, name: str | None = None, process_set: Any = None) -> list[Any]:
    """A list of every process's picklable ``obj``, in rank order."""
    _check_process_set(process_set, "allgather_object")
    return _comm().all_gather_object(obj, name=_name(name, "allgather_object"))


def broadcast_object(obj: Any, root_rank: int = 0, name: str | None = None, process_set: Any = None) -> Any:
    """``root_rank``'s picklable ``obj`` on every process (small objects: states, configs)."""
    _check_process_set(process_set, "broadcast_object")
    return _comm().broadcast_object(
        obj, src=_check_root(root_rank, "broadcast_object"), name=_name(name, "broadcast_object")
    )


class Handle:
    """An asynchronous collective: pass it to :func:`synchronize` (result) or :func:`poll`."""

    def __init__(self, pending: Pending | None, finish: Callable[[], Any]) -> None:
        self._pending = pending
        self._finish = finish
        self._done = False
        self._result: Any = None

    def poll(self) -> bool:
        """Whether the collective finished (``synchronize`` then returns without waiting)."""
        if self._done or self._pending is None:
            return True
        is_completed = getattr(self._pending.work, "is_completed", None)
        return bool(is_completed()) if is_completed is not None else False

    def wait(self) -> Any:
        if not self._done:
            if self._pending is not None:
                _comm().wait(self._pending)
            self._result = self._finish()
            self._done = True
        return self._result


def allreduce_async(
    tensor: torch.Tensor,
    average: bool | None = None,
    name: str | None = None,
    op: ReduceOp | str | None = None,
    prescale_factor: float = 1.0,
    postscale_factor: float = 1.0,
    process_set: Any = None,
) -> Handle:
    """Start ``allreduce`` of ``tensor``; :func:`synchronize` returns the new reduced tensor."""
    return _allreduce_async(tensor, None, average, name, op, prescale_factor, postscale_factor, process_set)


def allreduce_async_(
    tensor: torch.Tensor,
    average: bool | None = None,
    name: str | None = None,
    op: ReduceOp | str | None = None,
    prescale_factor: float = 1.0,
    postscale_factor: float = 1.0,
    process_set: Any = None,
) -> Handle:
    """Start an in-place ``allreduce``; :func:`synchronize` returns ``tensor`` holding the result."""
    return _allreduce_async(tensor, tensor, average, name, op, prescale_factor, postscale_factor, process_set)


def _allreduce_async(
    tensor: torch.Tensor,
    target: torch.Tensor | None,
    average: bool | None,
    name: str | None,
    op: Any,
    pre: float,
    post: float,
    process_set: Any,
) -> Handle:
    tensor = _check_tensor(tensor, "allreduce_async")
    _check_process_set(process_set, "allreduce_async")
    reduce_op = _resolve_op(average, op, "allreduce_async")
    comm = _comm()
    label = _name(name, "allreduce")

    def deliver(value: torch.Tensor) -> torch.Tensor:
        return value.to(tensor.device) if target is None else _copy_into(target, value)

    if not comm.is_distributed or reduce_op is Adasum or not tensor.is_floating_point():
        result = deliver(_reduce(tensor, reduce_op, label, pre, post, comm))  # runs now; the handle is done
        return Handle(None, lambda: result)
    buf = tensor.detach().to(comm.device).clone()
    if pre != 1.0:
        buf.mul_(pre)
    pending = comm.all_reduce_async(buf, name=label)
    scale = post / comm.world_size if reduce_op is Average else post
    return Handle(pending, lambda: deliver(buf.mul_(scale) if scale != 1.0 else buf))


def _check_handle(handle: Any, fn: str) -> Handle:
    if not isinstance(handle, Handle):
        raise TypeError(f"{fn} expects a handle from an *_async call. Received: {type(handle).__name__}")
    return handle


def poll(handle: Handle) -> bool:
    """Whether the asynchronous collective of ``handle`` has finished."""
    return _check_handle(handle, "poll").poll()


def synchronize(handle: Handle) -> Any:
    """Wait for the asynchronous collective of ``handle`` and return its result."""
    return _check_handle(handle, "synchronize").wait()


def join(device: int = -1) -> int:
    """Horovod's ``hvd.join()``: wait until every process has joined; returns the last rank to join.

    unison's collectives need every process, so ``join`` is a synchronisation point: a process
    must not issue collectives the others skip (Horovod's zero-filling of joined ranks is not
    provided). Call it once on every process after its last step.
    """
    comm = _comm()
    if not comm.is_distributed:
        return 0
    arrival = -1
    store = comm.store
    if store is not None:
        try:  # the store counts arrivals: the process that brings it to `size` came last
            arrival = int(store.add(f"unison/join/{comm.collective_count}", 1))
        except Exception:  # a store without add(): fall back to the highest rank
            arrival = -1
    last = comm.all_gather_object(comm.rank if arrival == comm.world_size else -1, name="join")
    return max(last) if max(last) >= 0 else comm.world_size - 1


__all__ = [
    "Handle",
    "ProcessSet",
    "allgather",
    "allgather_object",
    "allreduce",
    "allreduce_",
    "allreduce_async",
    "allreduce_async_",
    "alltoall",
    "broadcast",
    "broadcast_",
    "broadcast_object",
    "global_process_set",
    "grouped_allreduce",
    "grouped_allreduce_",
    "join",
    "poll",
    "reducescatter",
    "reduce_group",
    "synchronize",
]
