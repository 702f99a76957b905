"""TF's attributes on torch.Size and torch.dtype (ops/torch_type_attributes.py): added only where
torch lacks the name, and a clear error where TF's answer needs a package that is missing."""

from __future__ import annotations

import sys

import pytest
import torch

import unison as tf
from unison.ops import torch_type_attributes

pytestmark = pytest.mark.timeout(30)


def test_torchs_own_attributes_are_kept():
    before = (torch.dtype.is_complex, torch.dtype.itemsize, torch.Size.numel)
    torch_type_attributes.install()  # idempotent: a second install changes nothing
    assert (torch.dtype.is_complex, torch.dtype.itemsize, torch.Size.numel) == before
    assert torch.zeros(2, 3).shape.numel() == 6 and torch.complex64.is_complex


def test_shape_and_dtype_answers():
    x = torch.zeros(4, 5, dtype=torch.int16)
    assert (x.shape.as_list(), x.shape.rank, x.shape.dims, x.shape.num_elements()) == ([4, 5], 2, [4, 5], 20)
    assert (x.dtype.name, x.dtype.is_integer, x.dtype.min, x.dtype.max, x.dtype.size) == (
        "int16",
        True,
        -32768,
        32767,
        2,
    )
    assert tf.uint8.limits() == (0, 255) and tf.float16.is_floating and not tf.bool.is_integer


def test_bfloat16_numpy_type_without_ml_dtypes_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # import ml_dtypes now raises ImportError
    with pytest.raises(TypeError, match=r"ml_dtypes package is not installed.*pip install ml_dtypes"):
        tf.bfloat16.as_numpy_dtype  # noqa: B018


def test_the_limits_of_a_non_real_dtype_are_a_type_error():
    with pytest.raises(TypeError, match="Cannot find the maximum value of complex64"):
        tf.complex64.max  # noqa: B018
