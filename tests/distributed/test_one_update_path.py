"""One update path: fit's step on one replica and on N runs the same synchroniser code, and a
custom loop asks for each step's synchronisation once."""

from __future__ import annotations

import pytest
from update_path_fns import update_calls

from unison.testing import run_distributed

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize("replicas", [1, 2])
def test_one_and_n_replicas_take_the_same_update_and_a_loop_synchronises_once_per_step(replicas: int) -> None:
    if replicas == 1:
        results = [update_calls(0)]
    else:
        results = run_distributed(update_calls, world_size=replicas, args=(1,), timeout=240)
    for res in results:
        assert res["replicas"] == replicas, res
        # three fit steps (24 rows, batches of 8): three synchroniser steps, one request each
        assert res["fit"] == {"step": 3, "synchronize": 3}, res
        # the Keras loop steps the synchroniser only where one is needed (N > 1) or exists
        # (fit made one for the model's optimizer, not for this new one)
        keras_loop = {"step": 3, "synchronize": 3} if replicas > 1 else {}
        assert res["keras_loop"] == keras_loop, res
        # a torch optimizer's step() in strategy.run: the run's hook asks once per step
        assert res["torch_loop"] == ({"synchronize": 3} if replicas > 1 else {}), res
