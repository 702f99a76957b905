"""A ``tf.train.Checkpoint`` written in shards: the files a sharding callback's answer becomes.

``write_shards`` gives every saved value to the callback as a ``ShardableTensor`` (object graph
order, then ``_CHECKPOINTABLE_OBJECT_GRAPH``, as TF does), checks the answer as TF checks it
(``validate_shards``: a ``RuntimeError`` naming the callback and the value), writes shard ``i`` of
``n`` to ``<prefix>.data-<i>-of-<n>.unison`` (atomically, with its SHA-256) and returns the payload
for the main file ``<prefix>.unison``: the same object graph with every tensor a shard holds left
empty, and the list of those keys. The main file is written last, so a crash mid-save leaves the
old checkpoint readable. ``read_shards`` puts the slices back together when the file is read.

Example:
    >>> from unison.train.sharded_files import shard_file
    >>> shard_file("/tmp/ckpt-1", 0, 2)
    '/tmp/ckpt-1.data-00000-of-00002.unison'
"""

from __future__ import annotations

import glob
import io
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from unison.train.object_graph import GRAPH_KEY, object_graph
from unison.train.sharding import Shard, ShardableTensor, ShardingCallback, parse_slice_spec

__all__ = ["read_shards", "shard_file", "shard_files", "shardable_tensors", "validate_shards", "write_shards"]

SHARD_KIND = "tf.train.Checkpoint shard"
SUFFIX = ".unison"
_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"  # the chief, which writes every value


def shard_file(prefix: str, index: int, count: int) -> str:
    """The path of shard ``index`` of ``count`` of the checkpoint ``prefix``."""
    return f"{prefix}.data-{index:05d}-of-{count:05d}{SUFFIX}"


def shard_files(prefix: str) -> list[str]:
    """Every shard file on disk of the checkpoint ``prefix``."""
    return sorted(glob.glob(glob.escape(prefix) + ".data-[0-9]*-of-[0-9]*" + SUFFIX))


def _copy(value: Any) -> Any:
    """Containers copied, tensors shared: emptying a value must not touch the live objects' state."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def shardable_tensors(payload: dict[str, Any]) -> list[ShardableTensor]:
    """Every value of ``payload`` as TF hands it to a sharding callback, in TF's order."""
    from unison.ops.dtypes import string
    from unison.ops.graph_era import DeviceSpec
    from unison.ops.string_tensor import StringTensor

    device = DeviceSpec.from_string(_DEVICE)
    items = []
    for node in object_graph(payload):
        if node.key is None:
            continue
        value = node.tensor()
        items.append(ShardableTensor(None, value, value.dtype, device, node.key, value.shape, "", node.key, None))
    graph = StringTensor(json_graph(payload))
    items.append(ShardableTensor(None, graph, string, device, GRAPH_KEY, graph.shape, "", GRAPH_KEY, None))
    return items


def json_graph(payload: dict[str, Any]) -> bytes:
    """What unison's reader shows as ``_CHECKPOINTABLE_OBJECT_GRAPH`` (the saved object names)."""
    import json

    return json.dumps(sorted(payload["objects"])).encode()


def _task(device: Any) -> Any:
    from unison.ops.graph_era import DeviceSpec

    if device is None:
        return None
    return (device if isinstance(device, DeviceSpec) else DeviceSpec.from_string(str(device))).task


def validate_shards(shards: Sequence[Shard], items: Sequence[ShardableTensor], description: str) -> None:
    """A callback's answer must hold every value once, whole or in slices of it, with its dtype.

    TF 2.21 writes whatever the callback answers; unison checks first (with the ``RuntimeError``
    messages of TF's own ``sharding_util.validate_shards``), so a bad callback cannot write a
    checkpoint that restores without some of its values.
    """
    originals = {item.checkpoint_key: item.tensor for item in items}
    covered = dict.fromkeys(originals, 0)
    seen: set[tuple[str, str]] = set()
    where = f"  callback_description: {description}\n"
    for shard in shards:
        for key, slices in shard.items():
            for spec, value in slices.items():
                spec = spec.strip()
                what = f"  checkpoint_key: {key}\n  slice_spec: {spec}\n"
                if (key, spec) in seen:
                    raise RuntimeError(
                        "After executing the checkpoint sharding callback, multiple tensors with the same "
                        f"checkpoint key and slice spec were found:\n{where}{what}"
                    )
                if key not in originals:
                    raise RuntimeError(
                        "After executing the checkpoint sharding callback, a tensor not originally in the "
                        f"object graph was found in the checkpoint shards:\n{where}{what}"
                    )
                original = originals[key]
                want = list(original.shape) if not spec else parse_slice_spec(spec)[2]
                if list(value.shape) != want or (spec and parse_slice_spec(spec)[0] != list(original.shape)):
                    raise RuntimeError(
                        "After executing the checkpoint sharding callback, a tensor was found with an altered "
                        f"shape:\n{where}{what}  original tensor_shape: {list(original.shape)}\n"
                        f"  new tensor_shape: {list(value.shape)}\n"
                    )
                if value.dtype != original.dtype:
                    raise RuntimeError(
                        "After executing the checkpoint sharding callback, a tensor was found with an altered "
                        f"dtype:\n{where}{what}  original tensor_dtype: {original.dtype}\n"
                        f"  new tensor_dtype: {value.dtype}\n"
                    )
                seen.add((key, spec))
                covered[key] += int(np.prod(want, dtype=np.int64))
    lost = [k for k, v in originals.items() if covered[k] < int(np.prod(list(v.shape), dtype=np.int64))]
    if lost:
        listing = "".join(f"  tensor:\n    checkpoint_key: {k}\n" for k in lost)
        raise RuntimeError(
            "After executing the checkpoint sharding callback, tensors in the object graph were not found in "
            f"the checkpoint shards:\n{where}{listing}A sharding callback must return every value it was given "
            "(whole, or in slices that cover it); nothing was written."
        )


def write_shards(prefix: str, payload: dict[str, Any], callback: ShardingCallback) -> dict[str, Any]:
    """Write the shard files ``callback`` asks for; return the main file's payload (see the module)."""
    from unison.core.atomic_io import write_verified

    items = shardable_tensors(payload)
    shards = list(callback(items))
    validate_shards(shards, items, callback.description)
    if any(not shard for shard in shards):
        from unison.errors import InvalidArgumentError

        raise InvalidArgumentError(
            None,
            None,
            f"Length for attr 'dtypes' of 0 must be at least minimum 1: the sharding callback "
            f"{callback.description!r} answered an empty shard, and a checkpoint file must hold at least "
            "one value. Leave empty shards out of the callback's answer.",
        )
    main: dict[str, Any] = _copy(payload)
    held = {key for shard in shards for key in shard}  # an empty value may be in no shard (as in TF)
    moved: list[str] = []
    for node in object_graph(main):
        holder = node.holder
        if node.key in held and isinstance(holder[node.slot], torch.Tensor) and not isinstance(holder, tuple):
            holder[node.slot] = torch.empty(0, dtype=holder[node.slot].dtype)
            moved.append(node.key)
    stale = set(shard_files(prefix))
    for index, shard in enumerate(shards):
        tensors = {
            key: {spec: value.detach().cpu().contiguous().clone() for spec, value in slices.items()}
            for key, slices in shard.items()
            if key in moved
        }
        buffer = io.BytesIO()
        torch.save(tensors, buffer)
        path = shard_file(prefix, index, len(shards))
        write_verified(path, buffer.getvalue(), kind=SHARD_KIND)
        stale.discard(path)
    for path in stale:  # an earlier write of this prefix with another number of shards
        os.remove(path)
    main["shards"] = {"count": len(shards), "keys": moved, "callback": callback.description}
    return main


def read_shards(prefix: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Fill a sharded checkpoint's emptied tensors from its shard files."""
    from unison.core.atomic_io import VerificationError, read_verified
    from unison.errors import CorruptCheckpointError

    info = payload.pop("shards")
    count, wanted = int(info["count"]), set(info["keys"])
    slices: dict[str, dict[str, torch.Tensor]] = {}
    for index in range(count):
        path = shard_file(prefix, index, count)
        if not os.path.exists(path):
            raise CorruptCheckpointError(
                f"Checkpoint {prefix!r} was written in {count} shards, and shard {path!r} is missing. Copy "
                "every <prefix>.data-*.unison file along with <prefix>.unison."
            )
        try:
            body = read_verified(path, kind=SHARD_KIND)
        except VerificationError as exc:
            raise CorruptCheckpointError(str(exc)) from exc
        for key, parts in torch.load(io.BytesIO(body), map_location="cpu", weights_only=True).items():
            slices.setdefault(key, {}).update(parts)
    for node in object_graph(payload):
        if node.key is not None and node.key in wanted:
            node.holder[node.slot] = _assemble(prefix, node.key, slices.get(node.key, {}))
    return payload


def _assemble(prefix: str, key: str, parts: dict[str, torch.Tensor]) -> torch.Tensor:
    from unison.errors import CorruptCheckpointError

    if "" in parts:
        return parts[""]
    if not parts:
        raise CorruptCheckpointError(f"Checkpoint {prefix!r}: no shard holds {key!r}.")
    first = parts[next(iter(parts))]
    full = parse_slice_spec(next(iter(parts)))[0]
    out = torch.empty(full, dtype=first.dtype)
    covered = 0
    for spec, part in parts.items():
        _, offset, shape = parse_slice_spec(spec)
        out[tuple(slice(o, o + s) for o, s in zip(offset, shape))] = part
        covered += part.numel()
    if covered != out.numel():
        raise CorruptCheckpointError(
            f"Checkpoint {prefix!r}: the shards hold {covered} of {key!r}'s {out.numel()} values."
        )
    return out
