"""Argument checks and routing of Keras 3's newer optimizers (Adafactor, Lamb, Muon, ScheduleFreeAdamW).

Their update rules are compared with Keras in tests/conformance/test_vs_keras_optimizers_recent.py.
"""

from __future__ import annotations

import pytest
import torch

from unison.keras import optimizers

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    ("cls", "kwargs", "match"),
    [
        (optimizers.Adafactor, {"clip_threshold": 0.0}, "clip_threshold"),
        (optimizers.Adafactor, {"beta_2_decay": 0.5}, "beta_2_decay"),
        (optimizers.Lamb, {"beta_1": 1.0}, "beta_1"),
        (optimizers.Lamb, {"epsilon": float("nan")}, "epsilon"),
        (optimizers.ScheduleFreeAdamW, {"beta_1": 0.0}, "beta_1"),
        (optimizers.ScheduleFreeAdamW, {"warmup_steps": -1}, "warmup_steps"),
        (optimizers.Muon, {"ns_steps": 1.5}, "ns_steps"),
        (optimizers.Muon, {"momentum": 2.0}, "momentum"),
    ],
)
def test_bad_arguments_name_the_argument(cls, kwargs, match) -> None:
    with pytest.raises(ValueError, match=f"`{match}`.*Received: {match}="):
        cls(**kwargs)


def test_muon_exclude_layers_must_be_a_list_of_patterns() -> None:
    with pytest.raises(TypeError, match="exclude_layers.*list of strings"):
        optimizers.Muon(exclude_layers="dense")


def test_muon_routes_weights_by_rank_and_path() -> None:
    opt = optimizers.Muon(exclude_layers=["head"])
    matrix, vector = torch.zeros(3, 2), torch.zeros(3)
    named = torch.zeros(3, 2)
    named.path = "head/kernel"  # type: ignore[attr-defined]
    embedding = torch.zeros(3, 2)
    embedding.path = "token_Embedding/embeddings"  # type: ignore[attr-defined]
    assert [opt.uses_adamw(t) for t in (matrix, vector, named, embedding)] == [False, True, True, True]
    assert optimizers.Muon(exclude_embeddings=False).uses_adamw(embedding) is False


def test_muon_decays_each_kind_of_weight_at_its_own_rate() -> None:
    matrix = torch.nn.Parameter(torch.ones(2, 2))
    vector = torch.nn.Parameter(torch.ones(2))
    opt = optimizers.Muon(learning_rate=0.1, weight_decay=0.5, adam_weight_decay=0.0, ns_steps=0, rms_rate=None)
    opt.apply_gradients([(torch.zeros(2, 2), matrix), (torch.zeros(2), vector)])
    assert torch.allclose(matrix, torch.full((2, 2), 0.95))  # 1 - lr * weight_decay; a zero update
    assert torch.allclose(vector, torch.ones(2))


def test_get_knows_the_names_keras_get_knows() -> None:
    assert type(optimizers.get("adafactor")) is optimizers.Adafactor
    assert type(optimizers.get("ScheduleFreeAdamW")) is optimizers.ScheduleFreeAdamW
    with pytest.raises(ValueError, match="Unknown optimizer: 'lamb'"):
        optimizers.get("lamb")


def test_schedule_free_starts_z_at_the_weights_before_decay() -> None:
    w = torch.nn.Parameter(torch.tensor([2.0]))
    opt = optimizers.ScheduleFreeAdamW(learning_rate=0.1, weight_decay=0.5)
    opt.apply_gradients([(torch.tensor([0.0]), w)])
    assert opt.torch_optimizer is not None
    z = opt.torch_optimizer.state[w]["momentum"]
    # decay 2 -> 1.9 acts on y only; z keeps the undecayed 2.0 (a zero gradient moves it nowhere)
    assert float(z) == pytest.approx(2.0)
    # at t = 1 the average x is z itself, so y = (1 - b1) z + b1 z = z: the undecayed 2.0 again
    assert float(w.detach()) == pytest.approx(2.0)
