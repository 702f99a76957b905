"""Point 7 of issue 12: user mistakes that ended in a raw IndexError or were silently accepted."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

import unison as tf
from unison.cluster.placement import usable_cores
from unison.cluster.resolvers import TFConfigClusterResolver
from unison.distribute.devices import parse_devices


def test_tf_config_with_an_empty_worker_list_is_named() -> None:
    raw = '{"cluster": {"worker": []}, "task": {"type": "worker", "index": 0}}'
    with pytest.raises(ValueError, match=r"TF_CONFIG: cluster.worker is an empty list.*task worker:0.*Fix: list"):
        TFConfigClusterResolver(environ={"TF_CONFIG": raw})


def test_cpu_device_beyond_the_cores_is_refused_with_the_fix(monkeypatch) -> None:
    monkeypatch.delenv("UNISON_CPU_OVERSUBSCRIBE", raising=False)
    cores = usable_cores()
    with pytest.raises(ValueError) as info:
        parse_devices([f"/cpu:{cores + 97}"])
    text = str(info.value)
    assert f"/cpu:{cores + 97}" in text and f"os.cpu_count()={os.cpu_count()}" in text
    assert "UNISON_CPU_OVERSUBSCRIBE=1" in text
    assert [d.index for d in parse_devices([f"/cpu:{i}" for i in range(cores)])] == list(range(cores))
    monkeypatch.setenv("UNISON_CPU_OVERSUBSCRIBE", "1")
    assert parse_devices([f"/cpu:{cores + 97}"])[0].index == cores + 97
