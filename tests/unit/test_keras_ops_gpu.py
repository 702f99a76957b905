"""keras.ops / keras.random placement on a GPU: numpy operands follow GPU tensors, new tensors and
random draws follow torch's default device (``with torch.device("cuda")``), seeded draws match the CPU's."""

import numpy as np
import pytest
import torch

from unison.keras import ops, random

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_numpy_operands_join_gpu_tensors():
    x = torch.ones(2, 3, device="cuda")
    assert ops.add(x, np.ones((2, 3), np.float32)).device.type == "cuda"
    assert ops.concatenate([x, np.zeros((1, 3), np.float32)]).device.type == "cuda"
    assert ops.where(np.array([True, False, True]), x, 0.0).device.type == "cuda"
    kernel = np.ones((2, 2, 1, 4), np.float32)
    out = ops.conv(torch.ones(1, 5, 5, 1, device="cuda"), kernel, padding="same")
    assert out.device.type == "cuda" and float(out[0, 0, 0, 0]) == 4.0


def test_creation_and_random_follow_the_default_device():
    with torch.device("cuda"):
        assert ops.arange(4).device.type == "cuda"
        assert ops.zeros((2,)).device.type == "cuda"
        assert ops.convert_to_tensor(np.ones(2)).device.type == "cuda"
        gpu = random.normal((3,), seed=5)
        assert gpu.device.type == "cuda"
    assert torch.equal(gpu.cpu(), random.normal((3,), seed=5))  # same stream on every device


def test_gpu_results_match_cpu():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 6, 6, 3)).astype(np.float32)
    k = rng.normal(size=(3, 3, 3, 2)).astype(np.float32)
    cpu = ops.conv(x, k, strides=2, padding="same")
    gpu = ops.conv(torch.tensor(x, device="cuda"), torch.tensor(k, device="cuda"), strides=2, padding="same")
    np.testing.assert_allclose(gpu.cpu().numpy(), cpu.numpy(), atol=1e-4)
    pooled = ops.average_pool(torch.tensor(x, device="cuda"), 2, padding="same")
    np.testing.assert_allclose(pooled.cpu().numpy(), ops.average_pool(x, 2, padding="same").numpy(), atol=1e-5)
