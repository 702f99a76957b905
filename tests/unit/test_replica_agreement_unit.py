"""The facts replicas compare (optimizer class and hyper-parameters, loss, global batch) and the
message naming the first difference, its rank and both values."""

from __future__ import annotations

import pytest
import torch

from unison import keras
from unison.comm import LocalCommunicator
from unison.optim import agreement


@pytest.mark.timeout(30)
def test_describe_keeps_hyper_parameters_not_names() -> None:
    a = agreement.describe(keras.optimizers.Adam(0.01, name="first"))
    b = agreement.describe(keras.optimizers.Adam(0.01, name="second"))
    assert a == b and a["class"] == "Adam" and a["learning_rate"] == 0.01
    assert agreement.describe(keras.optimizers.Adam(0.02)) != a
    schedule = keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)
    described = agreement.describe(keras.optimizers.SGD(schedule))
    assert described["learning_rate"]["class"] == "ExponentialDecay"
    torch_opt = torch.optim.SGD(torch.nn.Linear(2, 1).parameters(), lr=0.3, momentum=0.9)
    assert agreement.describe(torch_opt)["param_groups"][0]["momentum"] == 0.9


@pytest.mark.timeout(30)
def test_difference_names_the_fact_the_rank_and_both_values() -> None:
    same = {"optimizer (sgd)": {"class": "SGD", "learning_rate": 0.1}}
    other = {"optimizer (sgd)": {"class": "SGD", "learning_rate": 0.2}}
    assert agreement.difference([same, same]) is None
    message = agreement.difference([same, same, other])
    assert message is not None
    assert "different optimizer (sgd): learning_rate is 0.2 on rank 2 but 0.1 on rank 0" in message
    # a fact only some replicas noted (the chief's own loss for a log) is not compared
    assert agreement.difference([{**same, "loss (mse)": 1}, same]) is None
    assert "rank 1 has 16 where rank 0 has 8" in (
        agreement.difference([{"global batch": 8}, {"global batch": 16}]) or ""
    )


@pytest.mark.timeout(30)
def test_one_process_notes_nothing_and_is_never_refused() -> None:
    comm = LocalCommunicator()
    agreement.note("global batch", 8, comm)
    assert agreement.noted(comm) == {}  # nothing to agree on alone
    optimizer = keras.optimizers.SGD(0.1)
    w = torch.nn.Parameter(torch.zeros(2))
    optimizer.apply_gradients([(torch.ones(2), w)])  # no multi-replica strategy: no check
    assert int(optimizer.iterations) == 1
