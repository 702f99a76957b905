"""The tree walks a fit step makes: unison's tree module vs the four walkers it replaced vs optree.

The structures are those a training step walks: a ``(x, y, w)`` tuple of tensors (split and moved
to the device every step), a dict of four tensors (a multi-input model's batch), nested lists,
and a layer call's ``(args, kwargs)`` holding a KerasTensor (a functional model replays one per
layer per step). For each structure and operation (``map_structure``, ``flatten``,
``pack_sequence_as``) the table gives the microseconds per call of

* ``before``: the walker that did that job before issue 38 (read from git at ``--before``:
  ``ops/nest.py`` for tf.nest, ``distribute/input.py`` for the per-step batch maps,
  ``data/nest.py`` for tf.data elements, ``keras_tensor.py`` for the symbolic graph);
* ``tree``: ``unison.ops.tree`` with the option that variant now names;
* ``optree``: ``optree.tree_map`` / ``tree_leaves`` / ``tree_unflatten(tree_structure(...))``
  (``none_is_leaf=True``, TF's ``None``), the library Keras 3 builds its tree on.

Each figure is the median over ``--repeats`` repeats of ``--number`` calls, in process CPU time
(the three implementations interleaved within every repeat, so load on a shared machine hits
them alike; wall time there mostly measures the wait for a core).

    PYTHONPATH=src python benchmarks/tree_step.py --before 5602dcb --repeats 15 --number 20000
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import timeit
import types
from collections.abc import Callable
from typing import Any

import optree
import torch

from unison.keras.backend import keras_tensor
from unison.ops import tree


def _old_module(rev: str, path: str, name: str) -> types.ModuleType:
    """The module at ``path`` as it was at git revision ``rev``, loaded under ``name``."""
    source = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True, check=True).stdout
    module = types.ModuleType(name)
    module.__dict__["__name__"] = name
    sys.modules[name] = module
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def _time(fn: Callable[[], Any], number: int) -> float:
    # Process CPU time: on a loaded, shared machine wall time mostly measures the wait for a core.
    return timeit.Timer(fn, timer=time.process_time).timeit(number) / number * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="5602dcb", help="git revision holding the walkers before issue 38")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--number", type=int, default=20000)
    args = parser.parse_args()

    old_nest = _old_module(args.before, "src/unison/ops/nest.py", "old_ops_nest")
    old_input = _old_module(args.before, "src/unison/distribute/input.py", "old_distribute_input")
    old_data = _old_module(args.before, "src/unison/data/nest.py", "old_data_nest")
    old_kt = _old_module(args.before, "src/unison/keras/backend/keras_tensor.py", "old_keras_tensor")

    x, y, w = torch.zeros(4, 3), torch.zeros(4), torch.zeros(4)
    kt_new = keras_tensor.KerasTensor.__new__(keras_tensor.KerasTensor)
    kt_old = old_kt.KerasTensor.__new__(old_kt.KerasTensor)
    ident = lambda v: v  # noqa: E731
    tensors = (torch.Tensor,)
    xyw, batch_dict = (x, y, w), {"a": x, "b": y, "c": w, "d": x}
    nested = [[x, [y, w]], [x, y], {"k": [w]}]
    node_new, node_old = ((kt_new,), {"training": True}), ((kt_old,), {"training": True})
    opt = {"none_is_leaf": True}

    # (structure, operation, before-variant name, before, tree, optree)
    cases: list[tuple[str, str, str, Callable[[], Any], Callable[[], Any], Callable[[], Any]]] = []
    for label, s in (("(x, y, w)", xyw), ("dict of 4", batch_dict), ("nested lists", nested)):
        leaves, spec = optree.tree_flatten(s, **opt)
        cases += [
            (
                label,
                "map_structure",
                "tf.nest",
                lambda s=s: old_nest.map_structure(ident, s),
                lambda s=s: tree.map_structure(ident, s),
                lambda s=s: optree.tree_map(ident, s, **opt),
            ),
            (
                label,
                "map_structure",
                "batch map",
                lambda s=s: old_input.map_structure(ident, s),
                lambda s=s: tree.map_structure(ident, s, only=tensors, sort_keys=False),
                lambda s=s: optree.tree_map(lambda v: v if isinstance(v, torch.Tensor) else v, s, **opt),
            ),
            (
                label,
                "flatten",
                "tf.nest",
                lambda s=s: old_nest.flatten(s),
                lambda s=s: tree.flatten(s),
                lambda s=s: optree.tree_leaves(s, **opt),
            ),
            (
                label,
                "pack_sequence_as",
                "tf.nest",
                lambda s=s, leaves=leaves: old_nest.pack_sequence_as(s, leaves),
                lambda s=s, leaves=leaves: tree.pack_sequence_as(s, leaves),
                lambda s=s, leaves=leaves: optree.tree_unflatten(optree.tree_structure(s, **opt), leaves),
            ),
        ]
    for label, s in (("(x, y, w)", xyw), ("dict of 4", batch_dict)):
        leaves = old_data.flatten(s)
        cases += [
            (
                label,
                "map_structure",
                "tf.data",
                lambda s=s: old_data.map_structure(ident, s),
                lambda s=s: tree.map_structure(ident, s, lists=False),
                lambda s=s: optree.tree_map(ident, s, is_leaf=lambda v: isinstance(v, list), **opt),
            ),
            (
                label,
                "flatten",
                "tf.data",
                lambda s=s: old_data.flatten(s),
                lambda s=s: tree.flatten(s, lists=False),
                lambda s=s: optree.tree_leaves(s, is_leaf=lambda v: isinstance(v, list), **opt),
            ),
        ]
    cases += [
        (
            "layer call",
            "map_structure",
            "symbolic",
            lambda: old_kt.map_structure(ident, node_old),
            lambda: keras_tensor.map_keras_tensors(ident, node_new),
            lambda: optree.tree_map(lambda v: v if isinstance(v, keras_tensor.KerasTensor) else v, node_new, **opt),
        ),
        (
            "layer call",
            "flatten",
            "symbolic",
            lambda: old_kt.flatten(node_old),
            lambda: keras_tensor.flatten(node_new),
            lambda: [v for v in optree.tree_leaves(node_new, **opt) if isinstance(v, keras_tensor.KerasTensor)],
        ),
    ]

    samples: list[list[list[float]]] = [[[], [], []] for _ in cases]
    for _ in range(args.repeats):
        for i, case in enumerate(cases):
            for j, fn in enumerate(case[3:]):
                samples[i][j].append(_time(fn, args.number))

    print(f"torch {torch.__version__}, optree {optree.__version__}, python {sys.version.split()[0]}")
    print(f"median of {args.repeats} repeats x {args.number} calls, microseconds of process CPU time per call")
    print("| structure | operation | variant | before | tree | optree |")
    print("|---|---|---|---:|---:|---:|")
    for case, sample in zip(cases, samples):
        before, mine, theirs = (statistics.median(s) for s in sample)
        print(f"| {case[0]} | {case[1]} | {case[2]} | {before:.2f} | {mine:.2f} | {theirs:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
