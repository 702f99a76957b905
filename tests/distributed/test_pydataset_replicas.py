"""A keras.utils.PyDataset on 2 replicas trains exactly as one process on the same batches."""

from __future__ import annotations

import numpy as np
import pytest
from pydataset_fns import pydataset_fit

from unison.testing import run_distributed

pytestmark = [pytest.mark.timeout(300), pytest.mark.distributed]


@pytest.mark.parametrize("shuffle", [False, True])
def test_pydataset_on_two_replicas_matches_one_process(shuffle: bool) -> None:
    ref = pydataset_fit(None, shuffle)
    assert ref["replicas"] == 1 and ref["ends"] == 2
    epochs = [ref["reads"][1:7], ref["reads"][7:13]]  # read 0 is the first item, for the shapes
    assert all(sorted(e) == list(range(6)) for e in epochs)
    assert (epochs == [list(range(6))] * 2) is (not shuffle)
    for res in run_distributed(pydataset_fit, world_size=2, args=(["/cpu:0", "/cpu:1"], shuffle), timeout=240):
        assert res["replicas"] == 2
        assert res["reads"] == ref["reads"]  # every replica reads every global batch, in the same order
        for got, want in zip(res["weights"], ref["weights"]):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        for key, value in ref["history"].items():
            np.testing.assert_allclose(res["history"][key], value, rtol=1e-5, atol=1e-6, err_msg=key)
        for key, value in ref["evaluate"].items():
            assert abs(res["evaluate"][key] - value) <= 1e-5, key
        np.testing.assert_allclose(res["predict"], ref["predict"], atol=1e-6)
