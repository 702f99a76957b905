"""``tf.image.resize``'s bilinear kernel through OpenCV (``unison.ops.image_resize_cv2``) against
torch's kernel (the path without OpenCV, and TF's arithmetic to float tolerance): every channel count
OpenCV is given (1-4; more go to torch's kernel), integer and float pixels, batches, strided views,
up- and down-scaling; what OpenCV does not take falls back to torch (gradients, more channels)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import unison as tf
from unison.ops import image_resize_cv2

pytestmark = pytest.mark.skipif(image_resize_cv2._cv2() is None, reason="OpenCV is not installed here")


def _torch_bilinear(x: torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    batched = x.dim() == 4
    x4 = (x if batched else x[None]).to(torch.float32)
    out = F.interpolate(x4.permute(0, 3, 1, 2), size=size, mode="bilinear", align_corners=False).permute(0, 2, 3, 1)
    return out if batched else out[0]


@pytest.mark.parametrize("channels", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int32, torch.float32, torch.float64, torch.bfloat16])
def test_opencv_bilinear_equals_torchs_within_float_tolerance(channels, dtype):
    rng = np.random.default_rng(channels)
    x = torch.from_numpy(rng.integers(0, 256, (2, 13, 9, channels))).to(dtype)
    for size in [(5, 4), (29, 17), (13, 9)]:
        got = tf.image.resize(x, size)
        assert got.dtype == torch.float32 and tuple(got.shape) == (2, *size, channels)
        torch.testing.assert_close(got, _torch_bilinear(x, size), atol=2e-3, rtol=1e-5)
        one = tf.image.resize(x[1], size)  # a single image, rank 3
        torch.testing.assert_close(one, got[1])


def test_strided_views_and_fallbacks():
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.random((20, 30, 3), dtype=np.float32))
    strided = x.permute(1, 0, 2)  # not contiguous: read as a contiguous copy
    torch.testing.assert_close(
        tf.image.resize(strided, [7, 11]), _torch_bilinear(strided, (7, 11)), atol=1e-5, rtol=1e-5
    )
    wide = torch.zeros(4, 4, 513)  # more channels than an image's: torch's kernel
    assert image_resize_cv2.bilinear(wide, (2, 2)) is None
    assert tuple(tf.image.resize(wide, [2, 2]).shape) == (2, 2, 513)
    assert image_resize_cv2.bilinear(torch.zeros(4, 4, 3), (2, 2)) is not None
    grad = x.clone().requires_grad_(True)  # gradients: torch's kernel, which autograd differentiates
    assert image_resize_cv2.bilinear(grad, (5, 5)) is None
    tf.image.resize(grad, [5, 5]).sum().backward()
    assert grad.grad is not None and grad.grad.shape == x.shape
    assert image_resize_cv2.bilinear(x, (5, 5.0)) is None  # not two ints: the general path checks them
    with pytest.raises(Exception, match="positive"):
        tf.image.resize(x, [0, 5])


def test_a_pipeline_worker_resizes_serially_and_puts_opencvs_threads_back():
    cv2 = image_resize_cv2._cv2()
    before = cv2.getNumThreads()
    x = torch.zeros(600, 800, 3, dtype=torch.uint8)
    ds = tf.data.Dataset.range(6).map(lambda i: tf.image.resize(x, [500, 700]), num_parallel_calls=2).batch(3)
    assert [tuple(b.shape) for b in ds] == [(3, 500, 700, 3)] * 2
    assert cv2.getNumThreads() == before
