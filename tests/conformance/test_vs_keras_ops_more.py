"""The rest of ``keras.ops`` (numpy-style functions, ``nn``, ``math``, ``linalg``, ``image``) on
unison against Keras 3.15 on TensorFlow 2.21.

Like ``test_vs_keras_ops.py``: one generic body calls ``keras.ops.<name>(*args, **kwargs)`` on the
same NumPy inputs on both sides. ``ROWS`` holds, per op, its ordinary call and its edge case
(NaN, an empty array, broadcasting, integer dtype promotion or a bad argument); ``ROW_NAMES`` lists
the public names they cover, for the report. Inputs are named by strings beginning with ``@``.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf


def _inputs() -> dict:
    a = (np.sin(np.arange(12)) * 2.0).reshape(3, 4).astype(np.float32)
    return {
        "A": a,
        "B": (np.cos(np.arange(12)) * 2.0).reshape(3, 4).astype(np.float32),
        "C": np.array([[1.0], [-2.0], [0.5]], np.float32),
        "V": np.array([0.5, -1.0, 2.0, 3.0], np.float32),
        "V3": np.array([1.0, -2.0, 0.5], np.float32),
        "I": (np.arange(12) % 5).reshape(3, 4).astype(np.int32),
        "I2": (np.arange(12) % 3 + 1).reshape(3, 4).astype(np.int32),
        "I64": (np.arange(12) % 5).reshape(3, 4).astype(np.int64),
        "IV": np.array([12, 18, -7, 0], np.int32),
        "IW": np.array([8, 4, 3, 5], np.int32),
        "IC": np.array([[2], [3], [1]], np.int32),
        "M": (np.arange(12) % 3 == 0).reshape(3, 4),
        "N": np.array([np.nan, np.inf, -np.inf, 0.0, -1.5, 2.5], np.float32),
        "NZ": np.array([-0.0, 0.0, -2.0, 3.0, np.inf, -np.inf], np.float32),
        "AN": np.array(
            [[1.0, np.nan, 3.0, -2.0], [np.nan, np.nan, np.nan, np.nan], [4.0, 0.5, np.nan, 2.0]], np.float32
        ),
        "E": np.zeros((0, 4), np.float32),
        "E1": np.zeros((0,), np.float32),
        "Q": (np.sin(np.arange(24)) * 2.0).reshape(2, 3, 4).astype(np.float32),
        "Q6": (np.sin(np.arange(24)) * 2.0).reshape(2, 2, 6).astype(np.float32),
        "CPX": (np.array([1 + 2j, -3 + 0j, 0 - 1j, 2.5 + 0.5j], np.complex64)),
        "D": np.array([1.0, 2.0, 4.0, 7.0, 0.0], np.float32),
        "D4": np.array([1.0, 0.5, -1.0, 2.0], np.float32),
        "H": np.array([0.1, 0.5, 0.5, 0.9, 1.7, 2.0, -0.3], np.float32),
        "U": np.array([3, 1, 2, 3, 1, 5, 1], np.int32),
        "U2": np.array([[1, 2], [3, 4], [1, 2]], np.int32),
        "IT": np.array([3, -1, 2, -1, 5], np.int32),
        "FLAT": np.array([0, 5, 11, 7], np.int32),
        "FLAT64": np.array([0, 5, 11, 7], np.int64),
        "S7": np.arange(7, dtype=np.float32),
        "X4": np.array([0.0, 1.0, 3.0, 6.0], np.float32),
        "P": np.abs(a) + 0.5,
        "X": (np.sin(np.arange(150)) * 2.0).reshape(2, 5, 5, 3).astype(np.float32),
        "X1": (np.sin(np.arange(30)) * 2.0).reshape(2, 5, 3).astype(np.float32),
        "X3": (np.sin(np.arange(120)) * 2.0).reshape(1, 4, 5, 3, 2).astype(np.float32),
        "XCF": (np.sin(np.arange(150)) * 2.0).reshape(2, 3, 5, 5).astype(np.float32),
        "DS": np.arange(32, dtype=np.float32).reshape(1, 2, 2, 8),
        "SD": np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2),
        "NCHW": (np.sin(np.arange(40)) * 2.0).reshape(1, 2, 4, 5).astype(np.float32),
        "FOLD": (np.cos(np.arange(96)) * 2.0).reshape(1, 8, 12).astype(np.float32),
        "FOLD9": (np.cos(np.arange(72)) * 2.0).reshape(1, 8, 9).astype(np.float32),
        "G34": (np.cos(np.arange(12)) + 1.0).reshape(3, 4).astype(np.float32),
        "CTC_T": np.array([[1, 2, 2], [3, 1, 0]], np.int32),
        "SIG": (np.sin(np.arange(64) * 0.3) + np.cos(np.arange(64) * 0.05)).reshape(2, 32).astype(np.float32),
        "STR": (np.sin(np.arange(90)) * 2.0).reshape(2, 5, 9).astype(np.float32),
        "STI": (np.cos(np.arange(90)) * 0.5).reshape(2, 5, 9).astype(np.float32),
        "VC": np.array([[1.0, 2.0], [-3.0, 0.5], [0.0, -1.0]], np.float32),
        "L": np.tril(a[:, :3]) + 3 * np.eye(3, dtype=np.float32),
        "LT": (np.tril(a[:, :3]) + 3 * np.eye(3, dtype=np.float32)).T.copy(),
        "S": (a[:, :3] @ a[:, :3].T + 3 * np.eye(3)).astype(np.float32),
        "RANK1": np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5]).astype(np.float32),
        "TALL": (np.sin(np.arange(12)) * 2.0).reshape(4, 3).astype(np.float32),
        "SEG": np.array([0, 0, 2], np.int32),
        "SCAN": np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0], [2.0, 2.0], [-1.0, 1.0]], np.float32),
        "IMG": (np.abs(np.sin(np.arange(48) * 0.7))).reshape(4, 4, 3).astype(np.float32),
        "IMGCF": (np.abs(np.sin(np.arange(96) * 0.7))).reshape(2, 3, 4, 4).astype(np.float32),
        "IMGI": np.ones((2, 2, 3), np.int32),
        "IMG8": (np.abs(np.sin(np.arange(384) * 0.3))).reshape(2, 8, 8, 3).astype(np.float32),
        "IMG8B": (np.abs(np.cos(np.arange(384) * 0.3))).reshape(2, 8, 8, 3).astype(np.float32),
        "IMG8S": (np.abs(np.sin(np.arange(64) * 0.3))).reshape(8, 8, 1).astype(np.float32),
        "AFF": np.array([0.9, 0.2, 0.3, -0.1, 1.1, -0.4, 0.0, 0.0], np.float32),
        "AFF2": np.array(
            [[1.0, 0.0, -1.5, 0.0, 1.0, 2.2, 0.0, 0.0], [0.7, -0.7, 2.0, 0.7, 0.7, -1.0, 0.01, 0.02]], np.float32
        ),
        "PS": np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [4.0, 4.0]], np.float32),
        "PE": np.array([[0.5, 0.2], [3.6, 0.4], [0.1, 3.9], [4.2, 3.5]], np.float32),
        "MC": np.array([[[0.5, -1.2, 2.7], [1.0, 3.4, 0.2]], [[0.0, 1.5, 4.6], [-0.6, 2.2, 3.9]]], np.float32),
        "X3V": (np.sin(np.arange(60)) * 2.0).reshape(3, 4, 5, 1).astype(np.float32),
        "IMGD": np.sin(np.arange(192) * 0.1).reshape(8, 8, 3).astype(np.float64),
        "CTC_T0": np.array([[1, 0, 2], [2, 1, 1]], np.int32),
        "CTC_Y": (np.sin(np.arange(40)) * 2.0).reshape(2, 5, 4).astype(np.float32),
        "CTC_TL": np.array([3, 2], np.int32),
        "CTC_YL": np.array([5, 4], np.int32),
        "CTC_SL": np.array([5, 3], np.int32),
    }


def _arg(value, inputs: dict):
    if isinstance(value, str) and value.startswith("@"):
        return inputs[value[1:]]
    if isinstance(value, list) and value and all(isinstance(v, str) and v.startswith("@") for v in value):
        return [inputs[v[1:]] for v in value]
    return value


# name -> ((args, kwargs), (edge args, edge kwargs)). A name with a dot is looked up below keras.ops.
ROWS = (
    # element-wise, one argument: ordinary values and NaN/inf/signed zeros, or integer promotion
    ("angle", (("@CPX",), {}), (("@N",), {})),
    ("cbrt", (("@A",), {}), (("@I64",), {})),
    ("deg2rad", (("@A",), {}), (("@I64",), {})),
    ("rad2deg", (("@A",), {}), (("@I",), {})),
    ("fabs", (("@A",), {}), (("@I64",), {})),
    ("i0", (("@A",), {}), (("@I",), {})),
    ("sinc", (("@A",), {}), (("@NZ",), {})),
    ("signbit", (("@A",), {}), (("@NZ",), {})),
    ("isneginf", (("@N",), {}), (("@I",), {})),
    ("isposinf", (("@N",), {}), (("@I",), {})),
    ("isreal", (("@CPX",), {}), (("@A",), {})),
    ("bitwise_invert", (("@IV",), {}), (("@A",), {})),
    ("bitwise_not", (("@IV",), {}), (("@M",), {})),
    # element-wise, two arguments: ordinary values and broadcasting (3, 1) against (4,) or bad dtypes
    ("bitwise_and", (("@IV", "@IW"), {}), (("@IC", "@IW"), {})),
    ("bitwise_or", (("@IV", "@IW"), {}), (("@IC", "@IW"), {})),
    ("bitwise_xor", (("@IV", "@IW"), {}), (("@A", "@B"), {})),
    ("bitwise_left_shift", (("@IV", 2), {}), (("@IC", "@IW"), {})),
    ("bitwise_right_shift", (("@IV", 1), {}), (("@IC", "@IW"), {})),
    ("left_shift", (("@IW", "@IW"), {}), (("@IC", "@IW"), {})),
    ("right_shift", (("@IV", "@IW"), {}), (("@A", 1), {})),
    ("fmax", (("@AN", "@A"), {}), (("@C", "@V"), {})),
    ("fmin", (("@AN", "@A"), {}), (("@I", "@I64"), {})),
    ("fmod", (("@A", "@C"), {}), (("@IV", "@IW"), {})),
    ("gcd", (("@IV", "@IW"), {}), (("@IC", "@IW"), {})),
    ("lcm", (("@IV", "@IW"), {}), (("@A", "@B"), {})),
    ("heaviside", (("@NZ", 0.5), {}), (("@I", "@I64"), {})),
    ("ldexp", (("@A", "@I"), {}), (("@A", "@B"), {})),
    ("logaddexp2", (("@A", "@B"), {}), (("@C", "@V"), {})),
    ("nextafter", (("@A", "@B"), {}), (("@I", "@I2"), {})),
    ("kron", (("@C", "@V"), {}), (("@I", "@IC"), {})),
    ("allclose", (("@A", "@A"), {}), (("@N", "@N"), {"equal_nan": True})),
    ("isin", (("@U", [1, 5]), {}), (("@I", [1.0, 2.5]), {"invert": True})),
    # NaN-ignoring reductions: an axis, then an all-NaN row with keepdims
    ("nansum", (("@AN",), {"axis": 1}), (("@AN",), {"axis": 0, "keepdims": True})),
    ("nanprod", (("@AN",), {"axis": 1}), (("@M",), {"axis": 0, "keepdims": True})),
    ("nanmean", (("@AN",), {"axis": 1}), (("@I",), {"axis": 0, "keepdims": True})),
    ("nanvar", (("@AN",), {"axis": 1}), (("@AN",), {"keepdims": True})),
    ("nanstd", (("@AN",), {"axis": 1}), (("@AN",), {"axis": 0, "keepdims": True})),
    ("nanmax", (("@AN",), {"axis": 1}), (("@AN",), {"axis": 0, "keepdims": True})),
    ("nanmin", (("@AN",), {"axis": 1}), (("@I",), {"axis": 0, "keepdims": True})),
    ("nanargmax", (("@AN",), {"axis": 0}), (("@A",), {"keepdims": True})),
    ("nanargmin", (("@AN",), {"axis": 0}), (("@I",), {"axis": 1, "keepdims": True})),
    ("nancumsum", (("@AN",), {"axis": 1}), (("@M",), {})),
    ("nancumprod", (("@AN",), {"axis": 1}), (("@I",), {"axis": 0, "dtype": "float32"})),
    ("nanmedian", (("@AN",), {"axis": 1}), (("@AN",), {"axis": 0, "keepdims": True})),
    ("nanquantile", (("@AN", [0.25, 0.5]), {"axis": 0}), (("@AN", 0.3), {"method": "nearest"})),
    ("nanpercentile", (("@AN", 40.0), {"axis": 1}), (("@A", 75.0), {"axis": 0, "method": "midpoint"})),
    ("percentile", (("@A", [10.0, 90.0]), {"axis": 1}), (("@I", 50), {"keepdims": True})),
    ("ptp", (("@A",), {"axis": 1}), (("@I",), {"axis": 0, "keepdims": True})),
    # arrays
    ("empty_like", (("@A",), {"__shape": True}), (("@I",), {"dtype": "float32", "__shape": True})),
    ("diagflat", (("@V",), {}), (("@C",), {"k": -1})),
    ("diff", (("@A",), {}), (("@A",), {"n": 2, "axis": 0})),
    ("fliplr", (("@A",), {}), (("@E",), {})),
    ("flipud", (("@A",), {}), (("@Q",), {})),
    ("rot90", (("@A",), {}), (("@Q",), {"k": -3, "axes": (1, 2)})),
    ("dstack", ((["@A", "@B"],), {}), ((["@V", "@V"],), {})),
    ("array_split", (("@S7", 3), {}), (("@A", [1, 3]), {"axis": 1})),
    ("hsplit", (("@A", 2), {}), (("@S7", [2, 5]), {})),
    ("vsplit", (("@Q6", 2), {}), (("@A", [1]), {})),
    ("dsplit", (("@Q6", 3), {}), (("@Q6", [1, 4]), {})),
    ("argpartition", (("@D",), {"kth": 2}), (("@IT",), {"kth": 1})),
    ("unravel_index", (("@FLAT", (3, 4)), {}), (("@FLAT64", (2, 2, 3)), {})),
    ("vander", (("@V3",), {}), (("@V3",), {"N": 4, "increasing": True})),
    ("view", (("@A", "int32"), {}), (("@I", "float32"), {})),
    ("corrcoef", (("@A",), {}), (("@I",), {})),
    ("correlate", (("@D", "@V3"), {}), (("@D", "@D4"), {"mode": "same"})),
    ("trapezoid", (("@A",), {}), (("@V",), {"x": "@X4"})),
    ("histogram", (("@H",), {"bins": 4}), (("@H",), {"bins": 3, "range": (0.0, 1.0)})),
    ("unique", (("@U",), {}), (("@U",), {"return_index": True, "return_inverse": True, "return_counts": True})),
    ("bartlett", ((6,), {}), ((1,), {})),
    ("blackman", ((6,), {}), ((1,), {})),
    ("hamming", ((5,), {}), ((0,), {})),
    ("hanning", ((5,), {}), ((2,), {})),
    ("kaiser", ((6, 3.5), {}), ((1, 2.0), {})),
    ("logspace", ((0.0, 2.0, 5), {}), ((1.0, 3.0, 4), {"endpoint": False, "base": 2})),
    # nn: activations (NaN/inf or integer input as the edge)
    ("hard_tanh", (("@A",), {}), (("@I",), {})),
    ("hard_shrink", (("@A",), {"threshold": 1.0}), (("@N",), {})),
    ("soft_shrink", (("@A",), {"threshold": 1.0}), (("@N",), {})),
    ("tanh_shrink", (("@A",), {}), (("@N",), {})),
    ("squareplus", (("@A",), {"b": 1}), (("@N",), {})),
    ("sparse_plus", (("@A",), {}), (("@N",), {})),
    ("sparse_sigmoid", (("@A",), {}), (("@N",), {})),
    ("sparsemax", (("@A",), {}), (("@Q",), {"axis": 1})),
    ("threshold", (("@A", 0.5, -1.0), {}), (("@I", 2, 0.5), {})),
    ("polar", (("@P", "@A"), {}), (("@C", "@V"), {})),
    # nn: normalisation, pooling, rearrangements, CTC
    ("layer_normalization", (("@Q",), {"gamma": "@V", "beta": "@V"}), (("@Q",), {"axis": (1, 2), "gamma": "@G34"})),
    ("rms_normalization", (("@Q",), {"scale": "@V"}), (("@Q",), {"axis": (1, 2), "epsilon": 0.5})),
    (
        "adaptive_average_pool",
        (("@X", (2, 3)), {"__tensor": True}),
        (("@XCF", 4), {"data_format": "channels_first", "__tensor": True}),
    ),
    ("adaptive_max_pool", (("@X", (2, 3)), {"__tensor": True}), (("@X1", 3), {"__tensor": True})),
    ("depth_to_space", (("@DS", 2), {}), (("@SD", 2), {"data_format": "channels_first"})),
    ("space_to_depth", (("@SD", 2), {}), (("@SD", 2), {"data_format": "channels_first"})),
    ("unfold", (("@NCHW", 2), {}), (("@NCHW", (2, 3)), {"stride": 2, "padding": 1, "dilation": (1, 2)})),
    ("fold", (("@FOLD", (4, 5), 2), {}), (("@FOLD9", (4, 5), 2), {"stride": 2, "padding": 1})),
    (
        "ctc_loss",
        (("@CTC_T", "@CTC_Y", "@CTC_TL", "@CTC_YL"), {}),
        (("@CTC_T0", "@CTC_Y", [3, 3], "@CTC_YL"), {"mask_index": 3}),
    ),
    ("ctc_decode", (("@CTC_Y", "@CTC_SL"), {}), (("@CTC_Y", "@CTC_SL"), {"merge_repeated": False, "mask_index": 3})),
    # math: FFTs on (real, imag), STFT, segments, complex views, erfc, cdist
    ("erfc", (("@A",), {}), (("@N",), {})),
    ("cdist", (("@A", "@B"), {}), (("@E", "@A"), {})),
    ("fft", ((["@A", "@B"],), {}), ((["@E", "@E"],), {})),
    ("fft2", ((["@Q", "@Q"],), {}), ((["@A", "@E"],), {})),
    ("ifft2", ((["@Q", "@Q"],), {}), ((["@I", "@I"],), {})),
    ("rfft", (("@A",), {}), (("@A",), {"fft_length": 6})),
    ("irfft", ((["@A", "@B"],), {}), ((["@A", "@B"],), {"fft_length": 5})),
    ("stft", (("@SIG", 8, 4, 16), {}), (("@SIG", 8, 3, 8), {"window": "hamming", "center": False})),
    ("istft", ((["@STR", "@STI"], 8, 4, 16), {}), ((["@STR", "@STI"], 8, 4, 16), {"length": 20, "center": False})),
    ("segment_min", (("@A", "@SEG"), {}), (("@A", "@SEG"), {"num_segments": 4})),
    ("segment_prod", (("@A", "@SEG"), {}), (("@A", "@SEG"), {"num_segments": 2, "sorted": True})),
    ("view_as_complex", (("@VC",), {}), (("@A",), {})),
    ("view_as_real", (("@CPX",), {}), (("@A",), {})),
    # linalg
    ("cholesky_inverse", (("@L",), {}), (("@LT",), {"upper": True})),
    ("matrix_rank", (("@S",), {}), (("@RANK1",), {"tol": 0.1})),
    ("pinv", (("@TALL",), {}), (("@RANK1",), {"rcond": 0.01})),
    ("jvp", (("@A",), {"__jvp": True}), (("@E",), {"__jvp": True})),
    # core: functions as arguments, einops
    ("associative_scan", (("@SCAN",), {"__scan": True}), (("@SCAN",), {"__scan": True, "reverse": True, "axis": 1})),
    ("rearrange", (("@Q", "b h w -> b (h w)"), {}), (("@Q6", "b h (w c) -> (b c) w h"), {"c": 2})),
    # image: colour spaces, edges, blur, SSIM, pad and crop
    ("image.rgb_to_hsv", (("@IMG",), {}), (("@IMGCF",), {"data_format": "channels_first"})),
    ("image.hsv_to_rgb", (("@IMG",), {}), (("@IMGI",), {})),
    ("image.sobel_edges", (("@X",), {}), (("@XCF",), {"data_format": "channels_first"})),
    (
        "image.gaussian_blur",
        (("@X",), {}),
        (("@XCF",), {"kernel_size": (5, 5), "sigma": (2.0, 0.5), "data_format": "channels_first"}),
    ),
    (
        "image.ssim",
        (("@IMG8", "@IMG8B"), {"filter_size": 5}),
        (("@IMG8S", "@IMG8S"), {"filter_size": 3, "max_val": 2.0}),
    ),
    (
        "image.pad_images",
        (("@X", 1, 2), {"target_height": 8, "target_width": 9}),
        (
            ("@IMGCF", None, 0),
            {"bottom_padding": 2, "right_padding": 1, "target_height": 7, "data_format": "channels_first"},
        ),
    ),
    (
        "image.crop_images",
        (("@X", 1, 2), {"target_height": 3, "target_width": 2}),
        (("@X", 1), {"bottom_cropping": 1, "left_cropping": 3, "target_width": 3}),
    ),
    (
        "image.affine_transform",
        (("@X", "@AFF"), {}),
        (("@X", "@AFF2"), {"interpolation": "nearest", "fill_mode": "reflect"}),
    ),
    (
        "image.perspective_transform",
        (("@X", "@PS", "@PE"), {}),
        (("@XCF", "@PS", "@PE"), {"interpolation": "nearest", "fill_value": 0.5, "data_format": "channels_first"}),
    ),
    ("image.map_coordinates", (("@A", "@MC", 1), {}), (("@I", "@MC", 0), {"fill_mode": "reflect"})),
    ("image.extract_patches_3d", (("@X3", 2), {}), (("@X3V", (2, 2, 1)), {"strides": 1, "padding": "same"})),
    (
        "image.scale_and_translate",
        (("@X", (2, 8, 3, 3), [1.6, 0.6], [0.5, -0.2], (1, 2), "bilinear"), {}),
        (("@IMGD", (6, 5, 3), [0.75, 1.25], [0.0, 0.3], (0, 1), "lanczos3"), {"antialias": False}),
    ),
    ("geomspace", ((1.0, 1000.0, 4), {}), ((-1.0, -16.0, 5), {"endpoint": False})),
)


def _call(tf, name: str, args: tuple, kwargs: dict):
    inputs = _inputs()
    kwargs = dict(kwargs)
    shape_only = kwargs.pop("__shape", False)
    as_tensor = kwargs.pop("__tensor", False)  # Keras's adaptive pools on TF read inputs.shape.as_list()
    ops = tf.keras.ops
    fn = ops
    for part in name.split("."):
        fn = getattr(fn, part)
    if kwargs.pop("__jvp", False):  # a function and its tangent: jvp of sin(x) * y at (x, y)
        fn = lambda f, x, **kw: ops.jvp(  # noqa: E731
            lambda p, q: ops.sin(p) * q,
            (ops.convert_to_tensor(x), ops.convert_to_tensor(x * 2.0)),  # Keras's TF jvp needs tensors
            (ops.ones_like(x), ops.convert_to_tensor(x)),
            **kw,
        )
        args = ("@fn", *args)
    if kwargs.pop("__scan", False):  # pairs (sum, max) scanned together: an associative f on a structure
        fn = lambda f, x, **kw: ops.associative_scan(  # noqa: E731
            lambda a, b: {"sum": a["sum"] + b["sum"], "max": ops.maximum(a["max"], b["max"])},
            {"sum": x, "max": x},
            **kw,
        )
        args = ("@fn", *args)
    values = [None if a == "@fn" else _arg(a, inputs) for a in args]
    if as_tensor:
        values = [ops.convert_to_tensor(v) if isinstance(v, np.ndarray) else v for v in values]
    out = fn(*values, **{k: _arg(v, inputs) for k, v in kwargs.items()})
    if shape_only:  # values unspecified
        return list(ops.shape(out)), ops.dtype(out)
    return out


def _aliases(tf, name: str) -> list:
    """Whether each public alias of ``ops.<name>`` is the same function (as Keras exports it)."""
    if "." in name:
        return []
    ops = tf.keras.ops
    return [getattr(getattr(ops, module), name, None) is getattr(ops, name) for module in _ALIAS_MODULES.get(name, ())]


_ALIAS_MODULES = {
    "angle": ("numpy",),
    "cbrt": ("numpy",),
    "deg2rad": ("numpy",),
    "rad2deg": ("numpy",),
    "fabs": ("numpy",),
    "i0": ("numpy",),
    "sinc": ("numpy",),
    "signbit": ("numpy",),
    "isneginf": ("numpy",),
    "isposinf": ("numpy",),
    "isreal": ("numpy",),
    "bitwise_invert": ("numpy",),
    "bitwise_not": ("numpy",),
    "bitwise_and": ("numpy",),
    "bitwise_or": ("numpy",),
    "bitwise_xor": ("numpy",),
    "bitwise_left_shift": ("numpy",),
    "bitwise_right_shift": ("numpy",),
    "left_shift": ("numpy",),
    "right_shift": ("numpy",),
    "fmax": ("numpy",),
    "fmin": ("numpy",),
    "fmod": ("numpy",),
    "gcd": ("numpy",),
    "lcm": ("numpy",),
    "heaviside": ("numpy",),
    "ldexp": ("numpy",),
    "logaddexp2": ("numpy",),
    "nextafter": ("numpy",),
    "kron": ("numpy",),
    "allclose": ("numpy",),
    "isin": ("numpy",),
    "nansum": ("numpy",),
    "nanprod": ("numpy",),
    "nanmean": ("numpy",),
    "nanvar": ("numpy",),
    "nanstd": ("numpy",),
    "nanmax": ("numpy",),
    "nanmin": ("numpy",),
    "nanargmax": ("numpy",),
    "nanargmin": ("numpy",),
    "nancumsum": ("numpy",),
    "nancumprod": ("numpy",),
    "nanmedian": ("numpy",),
    "nanquantile": ("numpy",),
    "nanpercentile": ("numpy",),
    "percentile": ("numpy",),
    "ptp": ("numpy",),
    "empty_like": ("numpy",),
    "diagflat": ("numpy",),
    "diff": ("numpy",),
    "fliplr": ("numpy",),
    "flipud": ("numpy",),
    "rot90": ("numpy",),
    "dstack": ("numpy",),
    "array_split": ("numpy",),
    "hsplit": ("numpy",),
    "vsplit": ("numpy",),
    "dsplit": ("numpy",),
    "argpartition": ("numpy",),
    "unravel_index": ("numpy",),
    "vander": ("numpy",),
    "view": ("numpy",),
    "corrcoef": ("numpy",),
    "correlate": ("numpy",),
    "trapezoid": ("numpy",),
    "histogram": ("numpy",),
    "unique": ("numpy",),
    "bartlett": ("numpy",),
    "blackman": ("numpy",),
    "hamming": ("numpy",),
    "hanning": ("numpy",),
    "kaiser": ("numpy",),
    "logspace": ("numpy",),
    "hard_tanh": ("nn",),
    "hard_shrink": ("nn",),
    "soft_shrink": ("nn",),
    "tanh_shrink": ("nn",),
    "squareplus": ("nn",),
    "sparse_plus": ("nn",),
    "sparse_sigmoid": ("nn",),
    "sparsemax": ("nn",),
    "threshold": ("nn",),
    "polar": ("nn",),
    "layer_normalization": ("nn",),
    "rms_normalization": ("nn",),
    "adaptive_average_pool": ("nn",),
    "adaptive_max_pool": ("nn",),
    "depth_to_space": ("nn",),
    "space_to_depth": ("nn",),
    "unfold": ("nn",),
    "fold": ("nn",),
    "ctc_loss": ("nn",),
    "ctc_decode": ("nn",),
    "erfc": (),
    "cdist": (),
    "fft": (),
    "fft2": (),
    "ifft2": (),
    "rfft": (),
    "irfft": (),
    "stft": (),
    "istft": (),
    "segment_min": (),
    "segment_prod": (),
    "view_as_complex": (),
    "view_as_real": (),
    "cholesky_inverse": ("linalg",),
    "matrix_rank": ("linalg",),
    "pinv": ("linalg",),
    "jvp": ("linalg",),
    "associative_scan": (),
    "rearrange": (),
    "geomspace": ("numpy",),
}


ROW_NAMES = (
    "keras:ops.angle",
    "keras:ops.numpy.angle",
    "keras:ops.cbrt",
    "keras:ops.numpy.cbrt",
    "keras:ops.deg2rad",
    "keras:ops.numpy.deg2rad",
    "keras:ops.rad2deg",
    "keras:ops.numpy.rad2deg",
    "keras:ops.fabs",
    "keras:ops.numpy.fabs",
    "keras:ops.i0",
    "keras:ops.numpy.i0",
    "keras:ops.sinc",
    "keras:ops.numpy.sinc",
    "keras:ops.signbit",
    "keras:ops.numpy.signbit",
    "keras:ops.isneginf",
    "keras:ops.numpy.isneginf",
    "keras:ops.isposinf",
    "keras:ops.numpy.isposinf",
    "keras:ops.isreal",
    "keras:ops.numpy.isreal",
    "keras:ops.bitwise_invert",
    "keras:ops.numpy.bitwise_invert",
    "keras:ops.bitwise_not",
    "keras:ops.numpy.bitwise_not",
    "keras:ops.bitwise_and",
    "keras:ops.numpy.bitwise_and",
    "keras:ops.bitwise_or",
    "keras:ops.numpy.bitwise_or",
    "keras:ops.bitwise_xor",
    "keras:ops.numpy.bitwise_xor",
    "keras:ops.bitwise_left_shift",
    "keras:ops.numpy.bitwise_left_shift",
    "keras:ops.bitwise_right_shift",
    "keras:ops.numpy.bitwise_right_shift",
    "keras:ops.left_shift",
    "keras:ops.numpy.left_shift",
    "keras:ops.right_shift",
    "keras:ops.numpy.right_shift",
    "keras:ops.fmax",
    "keras:ops.numpy.fmax",
    "keras:ops.fmin",
    "keras:ops.numpy.fmin",
    "keras:ops.fmod",
    "keras:ops.numpy.fmod",
    "keras:ops.gcd",
    "keras:ops.numpy.gcd",
    "keras:ops.lcm",
    "keras:ops.numpy.lcm",
    "keras:ops.heaviside",
    "keras:ops.numpy.heaviside",
    "keras:ops.ldexp",
    "keras:ops.numpy.ldexp",
    "keras:ops.logaddexp2",
    "keras:ops.numpy.logaddexp2",
    "keras:ops.nextafter",
    "keras:ops.numpy.nextafter",
    "keras:ops.kron",
    "keras:ops.numpy.kron",
    "keras:ops.allclose",
    "keras:ops.numpy.allclose",
    "keras:ops.isin",
    "keras:ops.numpy.isin",
    "keras:ops.nansum",
    "keras:ops.numpy.nansum",
    "keras:ops.nanprod",
    "keras:ops.numpy.nanprod",
    "keras:ops.nanmean",
    "keras:ops.numpy.nanmean",
    "keras:ops.nanvar",
    "keras:ops.numpy.nanvar",
    "keras:ops.nanstd",
    "keras:ops.numpy.nanstd",
    "keras:ops.nanmax",
    "keras:ops.numpy.nanmax",
    "keras:ops.nanmin",
    "keras:ops.numpy.nanmin",
    "keras:ops.nanargmax",
    "keras:ops.numpy.nanargmax",
    "keras:ops.nanargmin",
    "keras:ops.numpy.nanargmin",
    "keras:ops.nancumsum",
    "keras:ops.numpy.nancumsum",
    "keras:ops.nancumprod",
    "keras:ops.numpy.nancumprod",
    "keras:ops.nanmedian",
    "keras:ops.numpy.nanmedian",
    "keras:ops.nanquantile",
    "keras:ops.numpy.nanquantile",
    "keras:ops.nanpercentile",
    "keras:ops.numpy.nanpercentile",
    "keras:ops.percentile",
    "keras:ops.numpy.percentile",
    "keras:ops.ptp",
    "keras:ops.numpy.ptp",
    "keras:ops.empty_like",
    "keras:ops.numpy.empty_like",
    "keras:ops.diagflat",
    "keras:ops.numpy.diagflat",
    "keras:ops.diff",
    "keras:ops.numpy.diff",
    "keras:ops.fliplr",
    "keras:ops.numpy.fliplr",
    "keras:ops.flipud",
    "keras:ops.numpy.flipud",
    "keras:ops.rot90",
    "keras:ops.numpy.rot90",
    "keras:ops.dstack",
    "keras:ops.numpy.dstack",
    "keras:ops.array_split",
    "keras:ops.numpy.array_split",
    "keras:ops.hsplit",
    "keras:ops.numpy.hsplit",
    "keras:ops.vsplit",
    "keras:ops.numpy.vsplit",
    "keras:ops.dsplit",
    "keras:ops.numpy.dsplit",
    "keras:ops.argpartition",
    "keras:ops.numpy.argpartition",
    "keras:ops.unravel_index",
    "keras:ops.numpy.unravel_index",
    "keras:ops.vander",
    "keras:ops.numpy.vander",
    "keras:ops.view",
    "keras:ops.numpy.view",
    "keras:ops.corrcoef",
    "keras:ops.numpy.corrcoef",
    "keras:ops.correlate",
    "keras:ops.numpy.correlate",
    "keras:ops.trapezoid",
    "keras:ops.numpy.trapezoid",
    "keras:ops.histogram",
    "keras:ops.numpy.histogram",
    "keras:ops.unique",
    "keras:ops.numpy.unique",
    "keras:ops.bartlett",
    "keras:ops.numpy.bartlett",
    "keras:ops.blackman",
    "keras:ops.numpy.blackman",
    "keras:ops.hamming",
    "keras:ops.numpy.hamming",
    "keras:ops.hanning",
    "keras:ops.numpy.hanning",
    "keras:ops.kaiser",
    "keras:ops.numpy.kaiser",
    "keras:ops.logspace",
    "keras:ops.numpy.logspace",
    "keras:ops.hard_tanh",
    "keras:ops.nn.hard_tanh",
    "keras:ops.hard_shrink",
    "keras:ops.nn.hard_shrink",
    "keras:ops.soft_shrink",
    "keras:ops.nn.soft_shrink",
    "keras:ops.tanh_shrink",
    "keras:ops.nn.tanh_shrink",
    "keras:ops.squareplus",
    "keras:ops.nn.squareplus",
    "keras:ops.sparse_plus",
    "keras:ops.nn.sparse_plus",
    "keras:ops.sparse_sigmoid",
    "keras:ops.nn.sparse_sigmoid",
    "keras:ops.sparsemax",
    "keras:ops.nn.sparsemax",
    "keras:ops.threshold",
    "keras:ops.nn.threshold",
    "keras:ops.polar",
    "keras:ops.nn.polar",
    "keras:ops.layer_normalization",
    "keras:ops.nn.layer_normalization",
    "keras:ops.rms_normalization",
    "keras:ops.nn.rms_normalization",
    "keras:ops.adaptive_average_pool",
    "keras:ops.nn.adaptive_average_pool",
    "keras:ops.adaptive_max_pool",
    "keras:ops.nn.adaptive_max_pool",
    "keras:ops.depth_to_space",
    "keras:ops.nn.depth_to_space",
    "keras:ops.space_to_depth",
    "keras:ops.nn.space_to_depth",
    "keras:ops.unfold",
    "keras:ops.nn.unfold",
    "keras:ops.fold",
    "keras:ops.nn.fold",
    "keras:ops.ctc_loss",
    "keras:ops.nn.ctc_loss",
    "keras:ops.ctc_decode",
    "keras:ops.nn.ctc_decode",
    "keras:ops.erfc",
    "keras:ops.cdist",
    "keras:ops.fft",
    "keras:ops.fft2",
    "keras:ops.ifft2",
    "keras:ops.rfft",
    "keras:ops.irfft",
    "keras:ops.stft",
    "keras:ops.istft",
    "keras:ops.segment_min",
    "keras:ops.segment_prod",
    "keras:ops.view_as_complex",
    "keras:ops.view_as_real",
    "keras:ops.cholesky_inverse",
    "keras:ops.linalg.cholesky_inverse",
    "keras:ops.matrix_rank",
    "keras:ops.linalg.matrix_rank",
    "keras:ops.pinv",
    "keras:ops.linalg.pinv",
    "keras:ops.jvp",
    "keras:ops.linalg.jvp",
    "keras:ops.associative_scan",
    "keras:ops.rearrange",
    "keras:ops.image.rgb_to_hsv",
    "keras:ops.image.hsv_to_rgb",
    "keras:ops.image.sobel_edges",
    "keras:ops.image.gaussian_blur",
    "keras:ops.image.ssim",
    "keras:ops.image.pad_images",
    "keras:ops.image.crop_images",
    "keras:ops.image.affine_transform",
    "keras:ops.image.perspective_transform",
    "keras:ops.image.map_coordinates",
    "keras:ops.image.extract_patches_3d",
    "keras:ops.image.scale_and_translate",
    "keras:ops.geomspace",
    "keras:ops.numpy.geomspace",
)


@pytest.mark.parametrize(("name", "call", "edge"), ROWS, ids=[row[0] for row in ROWS])
@same_as_tf(*ROW_NAMES, rtol=1e-4, atol=1e-5)
def test_op(tf, name, call, edge):
    return _call(tf, name, *call), _aliases(tf, name)


@pytest.mark.parametrize(("name", "call", "edge"), ROWS, ids=[row[0] for row in ROWS])
@same_as_tf(*ROW_NAMES, edge=True, rtol=1e-4, atol=1e-5)
def test_op_edge(tf, name, call, edge):
    return _call(tf, name, *edge)


def test_the_table_covers_the_listed_names():
    listed = {n.split(":")[1].split(".")[-1] for n in ROW_NAMES}
    assert listed == {row[0].split(".")[-1] for row in ROWS}


# ---------------------------------------------------------------------------------------------
# keras.activations: the same functions as activations (and by name through activations.get)

ACTIVATION_NAMES = ("keras:activations.sparse_sigmoid", "keras:activations.sparsemax", "keras:activations.threshold")


@same_as_tf(*ACTIVATION_NAMES, rtol=1e-5, atol=1e-6)
def test_activations(tf):
    x = _inputs()["A"]
    act = tf.keras.activations
    return {
        "sparse_sigmoid": act.sparse_sigmoid(x),
        "sparsemax": act.sparsemax(x, axis=0),
        "threshold": act.threshold(x, 0.25, 9.0),
        "by_name": act.get("sparsemax")(x),
        "serialized": act.serialize(act.sparse_sigmoid),
        "deserialized": act.deserialize("threshold")(x, 0.0, 1.0),
    }


@same_as_tf(*ACTIVATION_NAMES, edge=True, rtol=1e-5, atol=1e-6)
def test_activations_of_special_values(tf):
    n = _inputs()["N"]
    act = tf.keras.activations
    return {
        "sparse_sigmoid": act.sparse_sigmoid(n),
        "sparsemax": act.sparsemax(np.array([[1.0, 1.0], [-np.inf, 0.0]], np.float32)),
        "threshold": act.threshold(n, 0.0, -1.0),
    }


# ---------------------------------------------------------------------------------------------
# custom_gradient: the gradient a GradientTape sees is grad_fn's


def _clipped_gradient(tf, values, weights):
    ops = tf.keras.ops

    @ops.custom_gradient
    def doubled(x):
        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            return ops.clip(upstream, -0.5, 0.5)

        return x * 2.0, grad

    x = tf.Variable(values)
    with tf.GradientTape() as tape:
        y = ops.sum(ops.multiply(doubled(x), weights))
    return y, tape.gradient(y, x)


@same_as_tf("keras:ops.custom_gradient", rtol=1e-6, atol=1e-7)
def test_custom_gradient(tf):
    return _clipped_gradient(tf, np.array([1.0, -2.0, 3.0], np.float32), np.array([3.0, 0.1, -1.0], np.float32))


@same_as_tf("keras:ops.custom_gradient", edge=True, rtol=1e-6, atol=1e-7)
def test_custom_gradient_of_two_inputs(tf):
    ops = tf.keras.ops

    @ops.custom_gradient
    def product(a, b):
        def grad(upstream):
            return upstream * b * 10.0, upstream * a

        return a * b, grad

    a, b = tf.Variable(np.array([1.0, 2.0], np.float32)), tf.Variable(np.array([3.0, -1.0], np.float32))
    with tf.GradientTape() as tape:
        y = ops.sum(product(a, b))
    return y, tape.gradient(y, [a, b])


# ---------------------------------------------------------------------------------------------
# elastic_transform: random displacements (another generator), so the values are compared where
# they do not depend on the draw (alpha=0 leaves the images as they are), else shapes and ranges


@same_as_tf("keras:ops.image.elastic_transform", rtol=1e-5, atol=1e-6)
def test_elastic_transform_without_displacement(tf):
    images = _inputs()["X"]
    return tf.keras.ops.image.elastic_transform(images, alpha=0.0, sigma=1.0, seed=3)


@same_as_tf("keras:ops.image.elastic_transform", edge=True)
def test_elastic_transform_stays_within_the_image_values(tf):
    ops = tf.keras.ops
    images = _inputs()["XCF"]
    out = ops.image.elastic_transform(images, alpha=3.0, sigma=1.0, seed=7, data_format="channels_first")
    values = ops.convert_to_numpy(out)
    inside = bool((values >= images.min() - 1e-5).all() and (values <= images.max() + 1e-5).all())
    return list(ops.shape(out)), ops.dtype(out), inside
