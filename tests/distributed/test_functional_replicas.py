"""A functional keras.Model trains on 2 replicas exactly as on one device; chief-only files."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
import torch
from functional_fns import functional_fit

from unison import keras
from unison.testing import run_distributed

N_ROWS, BATCH = 19 * 16 + 2, 16  # 20 Adam steps, an uneven last batch

pytestmark = pytest.mark.timeout(300)


def test_functional_fit_on_two_replicas_matches_one_device(tmp_path: Any) -> None:
    ref = functional_fit(None, N_ROWS, BATCH)
    out = str(tmp_path / "run")
    results = run_distributed(
        functional_fit, world_size=2, args=(["/cpu:0", "/cpu:1"], N_ROWS, BATCH, out), timeout=240
    )
    for res in results:
        assert res["replicas"] == 2
        for got, want in zip(res["weights"], ref["weights"]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        assert abs(res["history"]["loss"][0] - ref["history"]["loss"][0]) <= 1e-5
        np.testing.assert_allclose(res["predict"], ref["predict"], atol=1e-5)
    # the chief wrote one set of event files and one model file; it loads back with the trained weights
    assert sorted(os.listdir(os.path.join(out, "logs"))) == ["train", "validation"]
    assert len(os.listdir(os.path.join(out, "logs", "train"))) == 1
    loaded = keras.models.load_model(os.path.join(out, "model.keras"))
    for got, want in zip(loaded.get_weights(), results[0]["weights"]):
        np.testing.assert_array_equal(got, want)
    loaded.eval()
    from replica_fns import make_data

    xv, _ = make_data(101, seed=1)
    np.testing.assert_allclose(loaded(torch.as_tensor(xv)).detach().numpy(), ref["predict"], atol=1e-5)
