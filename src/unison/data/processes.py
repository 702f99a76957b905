"""``map`` (and a ``batch`` right after it) in forked worker processes, as ``DataLoader`` does.

Threads cannot run a function in parallel while it holds the GIL, and small per-element work
(a crop and a flip of a 28x28 image, pure Python, numpy on small arrays) spends most of its time
in Python. For such a ``map`` over in-memory arrays (``from_tensor_slices``/``range``, then
shuffle/repeat/take/skip/shard) the work runs in ``k`` forked processes:

* only row indices leave the consumer: each worker inherits the arrays and the function at fork;
* with a ``batch`` right after the ``map`` (TF's map-and-batch fusion) a task is one batch: the
  worker makes the elements, maps them and stacks them, and sends one batch back (a header
  holding the structure and the arrays under 16 KiB, then each larger array's raw buffer; torch
  tensors are never pickled, and a ``SparseTensor`` travels as its three parts);
* task ``t`` goes to worker ``t % k`` and results are taken in task order, so the output is in
  the input's order (``deterministic=False`` takes whichever batch is ready first);
* an exception in the function reaches the consumer as the same exception type, with the
  element index and the worker's traceback in its notes;
* workers ignore SIGINT (a Ctrl-C is the consumer's to handle) and stop when the consumer's
  iterator is dropped, closed or interrupted, or when the consumer process dies;
* each worker seeds torch, numpy and ``random`` differently for every iteration (as DataLoader
  does), so random augmentations differ between workers and epochs; a deterministic function
  gives exactly the elements the threads (or no parallelism) give;
* side effects of the function (appending to a list, counters) stay in the workers, as in TF,
  where the function is traced once and never runs per element in Python.

Example::

    options = tf.data.Options()
    options.threading.worker_processes = 2   # None (default): AUTOTUNE decides, 0: threads only
    ds = ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE).batch(64).with_options(options)
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import random
import secrets
import signal
import time
import traceback
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np
import torch

from unison.data import nest, threads
from unison.ops.sparse_tensor import SparseTensor

PER_WORKER = 2  # tasks in flight per worker (DataLoader's prefetch_factor)
_POLL_S = 1.0  # how often a waiting side checks that the other side is still alive


def available() -> bool:
    """Whether worker processes can start here (they need ``fork``: lambdas, in-memory arrays)."""
    return "fork" in mp.get_all_start_methods()


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


# --- the wire: a list of elements as one small header and the raw buffers of its leaves ----------
_INLINE_BYTES = 16384  # a leaf below this many bytes travels pickled in the header, not as a message of its own


def _encode(elements: list[Any]) -> tuple[Any, list[np.ndarray]]:
    """(header, buffers): the structures and dtypes, and the raw bytes of every leaf."""
    skeletons: list[Any] = []
    meta: list[Any] = []
    buffers: list[np.ndarray] = []
    for element in elements:
        leaves = nest.flatten(element)
        skeletons.append(nest.pack_as(element, [None] * len(leaves)))
        for leaf in leaves:
            _encode_leaf(leaf, meta, buffers)
    return (skeletons, meta), buffers


def _encode_leaf(leaf: Any, meta: list[Any], buffers: list[np.ndarray]) -> None:
    if type(leaf) is torch.Tensor:
        kind = "b16" if leaf.dtype == torch.bfloat16 else "t"
        # np.asarray: a 0-d tensor's numpy() is a NumPy scalar in unison (as TF's), not an array
        arr = np.asarray((leaf.view(torch.int16) if kind == "b16" else leaf).detach().contiguous().numpy())
    elif type(leaf) is np.ndarray or isinstance(leaf, (np.generic, int, float, bool, complex)):
        # np.asarray first: ascontiguousarray alone makes a 0-d value 1-d
        arr = np.asarray(leaf)
        kind, arr = "n", arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)
    elif isinstance(leaf, SparseTensor):  # its parts as raw buffers: pickling torch tensors costs ~100 us each
        meta.append(("sparse",))
        for part in (leaf.indices, leaf.values, leaf.dense_shape):
            _encode_leaf(part, meta, buffers)
        return
    else:  # a string tensor, a subclass, any other object: pickled whole in the header (type kept)
        meta.append(("leaf", leaf))
        return
    if arr.dtype.hasobject:  # strings of any length as Python objects: pickled in the header
        meta.append(("obj", arr))
        return
    if arr.nbytes < _INLINE_BYTES:  # small: inside the header, one pickle for all (a message each costs more)
        meta.append(("inline", kind, arr))
        return
    meta.append((kind, arr.dtype.str, arr.shape))
    if arr.nbytes:
        buffers.append(arr.reshape(-1).view(np.uint8))


def _receive(conn: Connection, payload: Any) -> list[Any]:
    skeletons, meta = payload
    items = iter(meta)
    leaves = [_receive_leaf(conn, item, items) for item in items]
    out, it = [], iter(leaves)
    for skeleton in skeletons:
        n = len(nest.flatten(skeleton))
        out.append(nest.pack_as(skeleton, [next(it) for _ in range(n)]))
    return out


def _receive_leaf(conn: Connection, item: Any, items: Iterator[Any]) -> Any:
    if item[0] in ("obj", "leaf"):
        return item[1]
    if item[0] == "inline":
        kind, arr = item[1], item[2]
        if kind == "n":
            return arr
        t = torch.from_numpy(arr)
        return t.view(torch.bfloat16) if kind == "b16" else t
    if item[0] == "sparse":
        indices, values, dense_shape = (_receive_leaf(conn, next(items), items) for _ in range(3))
        return SparseTensor._from_parts(indices, values, dense_shape)
    kind, dtype, shape = item
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    buf = bytearray(nbytes)
    if nbytes:
        conn.recv_bytes_into(buf)
    arr = np.frombuffer(buf, dtype=dt).reshape(shape)  # writable: it owns a bytearray
    if kind == "n":
        return arr
    t = torch.from_numpy(arr)
    return t.view(torch.bfloat16) if kind == "b16" else t


def _portable(exc: BaseException, text: str) -> BaseException:
    """``exc`` if it survives pickling, else a RuntimeError carrying its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any failure to pickle means: send a substitute
        return RuntimeError(f"{type(exc).__name__}: {exc}")


# --- the worker process ------------------------------------------------------------------------
def _worker(
    conn: Connection,
    out: Connection,
    others: list[Connection],
    columns: Any,
    fn: Callable[[Any], Any],
    seed: int,
    stack: bool,
) -> None:
    for other in others:  # the consumer's ends of the pipes: EOF must mean "the consumer is gone"
        other.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the consumer's; it stops us
    # forked with SIGINT blocked (see _Pool): a Ctrl-C that came before the line above is dropped now
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    torch.set_num_threads(1)  # k workers x all cores would oversubscribe (DataLoader does the same)
    torch.manual_seed(seed)
    np.random.seed(seed % 2**32)
    random.seed(seed)
    leaves, pack = nest.flatten(columns), nest.packer(columns)
    parent = os.getppid()
    while True:
        if not conn.poll(_POLL_S):
            if os.getppid() != parent:
                return  # the consumer died without closing us
            continue
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        task, first, indices = message
        results: list[Any] = []
        at = first  # the element being made (named in an error)
        buffers: list[np.ndarray] = []
        try:
            for i in indices:
                results.append(fn(pack([leaf[i] for leaf in leaves])))
                at += 1
            if stack:  # a whole batch made here: one transfer, no per-element work in the consumer
                at = first
                results = [nest.stack(results)]
            header, buffers = _encode(results)
            reply: Any = (task, "ok", header)
        except BaseException as exc:  # noqa: BLE001 - the user's function: re-raised in the consumer
            text = traceback.format_exc()
            reply = (task, "error", (at, _portable(exc, text), text))
        try:
            out.send(reply)
            for buf in buffers:
                out.send_bytes(buf.data)  # the raw buffer (contiguous: _encode made it so)
        except (EOFError, OSError):
            return  # the consumer is gone


# --- the consumer side -------------------------------------------------------------------------
def _result_pipe() -> tuple[Connection, Connection]:
    """(reader, writer) of a pipe enlarged to 1 MiB where Linux allows: a worker then writes a
    batch of a few hundred KiB in one go and goes on with the next, instead of waiting for the
    consumer to be scheduled once per 64 KiB (which, on a busy machine, stalls the workers)."""
    reader, writer = os.pipe()
    try:
        import fcntl

        fcntl.fcntl(writer, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):
        pass  # the default size works, only with more hand-offs
    return Connection(reader, writable=False), Connection(writer, readable=False)


class _Pool:
    def __init__(self, columns: Any, fn: Callable[[Any], Any], workers: int, stack: bool) -> None:
        ctx = mp.get_context("fork")
        base = secrets.randbits(62)
        self.tasks: list[Connection] = []  # consumer -> worker
        self.conns: list[Connection] = []  # worker -> consumer (results)
        self.procs: list[Any] = []
        try:
            for rank in range(workers):
                task_in, task_out = ctx.Pipe(duplex=False)
                result_in, result_out = _result_pipe()
                ours = [*self.tasks, *self.conns, task_out, result_in]
                proc = ctx.Process(
                    target=_worker,
                    name=f"unison-data-worker-{rank}",
                    daemon=True,
                    args=(task_in, result_out, ours, columns, fn, (base + 7919 * rank) % 2**62, stack),
                )
                # SIGINT blocked across the fork: the child starts with it blocked and unblocks it only
                # once it ignores it, so a Ctrl-C to the process group in between cannot kill it
                mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
                try:
                    proc.start()
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                task_in.close()
                result_out.close()
                self.tasks.append(task_out)
                self.conns.append(result_in)
                self.procs.append(proc)
        except BaseException:
            self.close()
            raise

    def receive(self, rank: int) -> tuple[int, str, Any]:
        """The next message of worker ``rank`` (an error if that worker died)."""
        conn, proc = self.conns[rank], self.procs[rank]
        while not conn.poll(_POLL_S):
            if not proc.is_alive():
                break
        try:
            # unpickled: the other end is a child this process forked, over an anonymous pipe it
            # inherited (no address anyone else can reach), so no peer outside this job writes here
            task, status, payload = conn.recv()
        except (EOFError, OSError):
            proc.join(timeout=_POLL_S)
            raise RuntimeError(
                f"A unison.data worker process (worker {rank}, pid {proc.pid}) exited unexpectedly with exit "
                f"code {proc.exitcode} (killed by the system, out of memory, or a crash in native code). "
                "Set options.threading.worker_processes = 0 to run the map in threads instead."
            ) from None
        if status == "ok":
            return task, status, _receive(conn, payload)
        return task, status, payload

    def close(self) -> None:
        """Ask every worker to stop, and terminate those still busy after a second (they hold
        nothing worth finishing: results not yet read are dropped)."""
        for conn in self.tasks:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
            conn.close()
        for conn in self.conns:
            conn.close()
        deadline = time.monotonic() + 1.0
        for proc in self.procs:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
        for proc in self.procs:
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5.0)


def process_map(
    columns: Any,
    tasks: Iterator[list[int]],
    fn: Callable[[Any], Any],
    workers: int,
    stack: bool = False,
    deterministic: bool = True,
) -> Iterator[Any]:
    """``fn`` on the rows each task names, in ``workers`` forked processes.

    With ``stack`` each task is one batch: the worker stacks its results and sends one element.
    Results come in task order unless ``deterministic`` is False. Results are read as soon as a
    worker has one (into a small reorder buffer), so no worker waits on its pipe while the
    consumer waits for another; at most ``2 * PER_WORKER * workers`` tasks are ahead of the
    consumer.
    """
    pool = _Pool(columns, fn, workers, stack)
    owner: dict[int, int] = {}  # task in flight -> worker
    busy = [0] * workers  # tasks in flight per worker
    done: dict[int, tuple[str, Any]] = {}  # finished, not yet delivered
    window = 2 * PER_WORKER * workers
    state = {"next": 0, "first": 0, "expected": 0, "exhausted": False}

    def fill() -> None:
        while not state["exhausted"] and state["next"] - state["expected"] < window:
            rank = min(range(workers), key=busy.__getitem__)
            if busy[rank] >= PER_WORKER:
                return
            block = next(tasks, None)
            if not block:
                state["exhausted"] = True
                return
            task = state["next"]
            pool.tasks[rank].send((task, state["first"], block))
            owner[task] = rank
            busy[rank] += 1
            state["next"] += 1
            state["first"] += len(block)

    def collect() -> None:
        """Read every result that is ready (waiting up to a poll period for one)."""
        ranks = sorted({r for r in owner.values()})
        ready = wait([pool.conns[r] for r in ranks], timeout=_POLL_S)
        if not ready:
            for r in ranks:
                if not pool.procs[r].is_alive():
                    pool.receive(r)  # raises: the worker died
            return
        for conn in ready:
            rank = pool.conns.index(conn)  # type: ignore[arg-type]  # wait() returns the objects it was given
            task, status, payload = pool.receive(rank)
            del owner[task]
            busy[rank] -= 1
            done[task] = (status, payload)
        fill()

    try:
        fill()
        while owner or done:
            if deterministic:
                while state["expected"] not in done:
                    collect()
                status, payload = done.pop(state["expected"])
            else:
                while not done:
                    collect()
                status, payload = done.pop(min(done))
            state["expected"] += 1
            fill()
            if status == "error":
                index, exc, text = payload
                exc.add_note(f"Traceback in the worker process:\n{text}")
                raise threads.annotate(exc, "map", index)
            yield from payload
    finally:
        pool.close()


def element_tasks(index_chunks: Iterator[np.ndarray], size: int = 32) -> Iterator[list[int]]:
    """Row indices in lists of ``size`` (one task per list)."""
    flat = (i for c in index_chunks for i in c.tolist())
    while True:
        block = [i for _, i in zip(range(size), flat)]
        if not block:
            return
        yield block


__all__ = ["PER_WORKER", "available", "element_tasks", "process_map", "usable_cores"]
