"""MultiHeadAttention's fused path (scaled_dot_product_attention) against its op-by-op path.

``return_attention_scores=True`` computes the weights explicitly (einsum-like matmuls and a masked
softmax), the default call runs torch's fused kernel, in float32 for half-precision heads on CPU
(``fused_attention``). Both must give the same outputs and gradients, masks and causal included,
in float32 and under ``mixed_bfloat16``.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from unison.keras import layers
from unison.keras.layers.attention import fused_attention

pytestmark = pytest.mark.timeout(60)

B, T, S, DIM = 2, 5, 7, 8


def _masks(case: str) -> dict[str, Any]:
    gen = torch.Generator().manual_seed(1)
    if case == "none":
        return {}
    if case == "attention_mask":
        mask = torch.rand(B, T, S, generator=gen) > 0.4
        mask[:, :, 0] = True  # every query step may attend somewhere
        return {"attention_mask": mask}
    if case == "padding":
        # the last query step of example 1 is padding: it attends to nothing (zero weights)
        return {
            "query_mask": torch.tensor([[True] * T, [True] * (T - 1) + [False]]),
            "value_mask": torch.tensor([[True] * S, [True] * 3 + [False] * (S - 3)]),
        }
    if case == "causal":
        return {"use_causal_mask": True}
    # causal and a padding mask together: the fused call gets the combined boolean mask
    return {"use_causal_mask": True, "value_mask": torch.tensor([[True] * S, [True] * 4 + [False] * (S - 4)])}


def _run(mha: layers.MultiHeadAttention, scores: bool, kwargs: dict[str, Any]) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(B, T, DIM, generator=gen).requires_grad_()
    v = torch.randn(B, S, DIM, generator=gen).requires_grad_()
    out = mha(q, v, return_attention_scores=scores, **kwargs)
    out = out[0] if scores else out
    weights = [mha.query_dense.kernel, mha.key_dense.kernel, mha.value_dense.kernel, mha.output_dense.kernel]
    grads = torch.autograd.grad((out.float() ** 2).sum(), [q, v, *weights])
    return [out.detach().float(), *grads]


@pytest.fixture(scope="module")
def layers_by_policy() -> dict[str, layers.MultiHeadAttention]:
    """One layer per policy, with the same weights (built once: the cases only change the masks)."""
    made = {}
    for policy in ("float32", "mixed_bfloat16"):
        torch.manual_seed(0)
        mha = layers.MultiHeadAttention(num_heads=2, key_dim=4, dtype=policy)
        mha(torch.zeros(B, T, DIM), torch.zeros(B, S, DIM))
        made[policy] = mha
    return made


@pytest.mark.parametrize("case", ["none", "attention_mask", "padding", "causal", "causal_and_padding"])
@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_fused_path_matches_the_op_by_op_path(layers_by_policy, policy: str, case: str) -> None:
    mha = layers_by_policy[policy]
    kwargs = _masks(case)
    fused, explicit = _run(mha, False, kwargs), _run(mha, True, kwargs)
    # bfloat16: the op-by-op path rounds the logits and weights to bfloat16, the fused one attends
    # in float32; they agree to bfloat16's resolution (8 bits of mantissa), relative to the values
    tol = {"rtol": 1e-5, "atol": 1e-5} if policy == "float32" else {"rtol": 3e-2, "atol": 3e-2}
    for name, a, b in zip(("output", "d_query", "d_value", "d_wq", "d_wk", "d_wv", "d_wo"), fused, explicit):
        scale = max(b.abs().max().item(), 1.0) if policy != "float32" else 1.0
        torch.testing.assert_close(a / scale, b / scale, **tol, msg=lambda m, n=name: f"{policy} {case} {n}: {m}")
    if policy == "mixed_bfloat16":
        # and both are the float32 layer's values to bfloat16's resolution
        reference = _run(layers_by_policy["float32"], False, kwargs)
        for a, b in zip(fused, reference):
            scale = max(b.abs().max().item(), 1.0)
            torch.testing.assert_close(a / scale, b / scale, rtol=3e-2, atol=3e-2)


def test_fused_path_keeps_the_compute_dtype_under_mixed_bfloat16(layers_by_policy) -> None:
    mha = layers_by_policy["mixed_bfloat16"]
    out = mha(torch.randn(B, T, DIM), torch.randn(B, S, DIM))
    assert out.dtype == torch.bfloat16  # Keras: a mixed_bfloat16 layer's output is bfloat16


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_heads_attend_in_float32_and_come_back_in_their_dtype(dtype: torch.dtype) -> None:
    gen = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, 2, 6, 4, generator=gen) for _ in range(3))
    mask = torch.tril(torch.ones(6, 6, dtype=torch.bool))
    with torch.autocast("cpu", dtype=torch.bfloat16):  # the context a mixed policy's layer runs in
        out = fused_attention(q.to(dtype), k.to(dtype), v.to(dtype), mask, 0.0, False, 0.5)
    assert out.dtype == dtype
    expected = torch.nn.functional.scaled_dot_product_attention(
        q.to(dtype).float(), k.to(dtype).float(), v.to(dtype).float(), attn_mask=mask, scale=0.5
    )
    torch.testing.assert_close(out, expected.to(dtype), rtol=0, atol=0)  # float32 attention, one rounding


def test_grouped_query_attention_fused_path_under_mixed_bfloat16() -> None:
    torch.manual_seed(3)
    gqa = layers.GroupedQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2, dtype="mixed_bfloat16")
    gen = torch.Generator().manual_seed(4)
    q, v = torch.randn(B, T, DIM, generator=gen), torch.randn(B, S, DIM, generator=gen)
    fused = gqa(q, v)
    explicit, _ = gqa(q, v, return_attention_scores=True)
    scale = max(explicit.float().abs().max().item(), 1.0)
    torch.testing.assert_close(fused.float() / scale, explicit.float() / scale, rtol=3e-2, atol=3e-2)
