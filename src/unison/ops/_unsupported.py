"""The error for a ``tf.*`` name unison does not implement, naming the torch equivalent.

``unison``, ``tf.math``, ``tf.nn``, ``tf.random``, ``tf.image``, ``tf.nest``, ``tf.config`` and
``tf.train`` call :func:`unsupported` from their module ``__getattr__``. Private and dunder names
get Python's ordinary message, so ``hasattr`` probes (pickle, doctest, pytest) behave as for any
module.

Example:
    >>> import unison as tf
    >>> try:
    ...     tf.lite
    ... except AttributeError as e:
    ...     print(str(e).split(".")[0])
    unison does not implement tf
"""

from __future__ import annotations

# TF name -> what to use in torch. Names not listed get the generic advice.
TORCH_EQUIVALENTS: dict[str, str] = {
    "tf.signal.fftnd": "torch.fft.fftn (TF 2.21 has no CPU kernel for FFTND either)",
    "tf.signal.ifftnd": "torch.fft.ifftn (TF 2.21 has no CPU kernel for IFFTND either)",
    "tf.signal.rfftnd": "torch.fft.rfftn (TF 2.21 has no CPU kernel for RFFTND either)",
    "tf.signal.irfftnd": "torch.fft.irfftn (TF 2.21 has no CPU kernel for IRFFTND either)",
    "tf.sparse.sparse_dense_matmul": "torch.sparse",
    "tf.ragged": "torch.nested",
    "tf.TensorArray": "a Python list and torch.stack",
    "tf.slice": "tensor slicing (t[a:b])",
    "tf.strided_slice": "tensor slicing (t[a:b:s])",
    "tf.py_function": "calling the Python function directly",
    "tf.numpy_function": "calling the function directly",
    "tf.lite": "torch.export / ExecuTorch",
    "tf.compat.v1": "the TF 2 names unison implements (there are no graphs or sessions)",
    "tf.Graph": "eager torch (there is no graph)",
    "tf.Session": "eager torch (there is no session)",
    "tf.placeholder": "function arguments",
    "tf.custom_gradient": "torch.autograd.Function",
    "tf.random.Generator": "torch.Generator",
    "tf.random.stateless_uniform": "torch.rand with a seeded torch.Generator",
    "tf.train.Saver": "tf.train.Checkpoint",
    "tf.estimator": "Keras Model.fit or a custom loop",
    "tf.image.decode_jpeg": "PIL.Image.open and numpy (or torchvision.io.decode_jpeg)",
    "tf.image.decode_png": "PIL.Image.open and numpy (or torchvision.io.decode_png)",
    "tf.image.decode_image": "PIL.Image.open and numpy (or torchvision.io.decode_image)",
    "tf.image.adjust_hue": "torchvision.transforms.v2.functional.adjust_hue",
    "tf.image.random_hue": "torchvision.transforms.v2.ColorJitter(hue=...)",
    "tf.image.adjust_saturation": "torchvision.transforms.v2.functional.adjust_saturation",
    "tf.image.random_saturation": "torchvision.transforms.v2.ColorJitter(saturation=...)",
    "tf.image.rgb_to_hsv": "torchvision or a few tensor operations",
    "tf.image.crop_and_resize": "torchvision.ops.roi_align",
    "tf.image.non_max_suppression": "torchvision.ops.nms",
    "tf.image.extract_patches": "torch.nn.functional.unfold",
    "tf.nest.flatten_with_joined_string_paths": "tf.nest.flatten with your own paths",
}


def unsupported(namespace: str, name: str) -> AttributeError:
    """The ``AttributeError`` for ``<namespace>.<name>`` (``namespace`` like ``"tf.math"``)."""
    if name.startswith("_"):
        return AttributeError(f"module {namespace!r} has no attribute {name!r}")
    full = f"{namespace}.{name}"
    torch_name = TORCH_EQUIVALENTS.get(full)
    advice = (
        f"Use {torch_name} instead (unison's tensors are torch tensors)."
        if torch_name
        else "unison's tensors are torch tensors: use the torch function of the same purpose."
    )
    return AttributeError(
        f"unison does not implement {full}. {advice} docs/tf_api.md lists what unison has of TF 2.21 and what is missing."
    )
