"""The error for a ``tf.*`` name unison does not implement, naming the torch equivalent.

``unison``, ``tf.math``, ``tf.nn``, ``tf.random``, ``tf.config`` and ``tf.train`` call
:func:`unsupported` from their module ``__getattr__``. Private and dunder names get Python's
ordinary message, so ``hasattr`` probes (pickle, doctest, pytest) behave as for any module.

Example:
    >>> import unison as tf
    >>> try:
    ...     tf.einsum
    ... except AttributeError as e:
    ...     print(str(e).split(".")[0])
    unison does not implement tf
"""

from __future__ import annotations

# TF name -> what to use in torch. Names not listed get the generic advice.
TORCH_EQUIVALENTS: dict[str, str] = {
    "tf.einsum": "torch.einsum",
    "tf.tensordot": "torch.tensordot",
    "tf.norm": "torch.linalg.norm",
    "tf.linalg": "torch.linalg",
    "tf.signal": "torch.fft",
    "tf.sparse": "torch.sparse",
    "tf.ragged": "torch.nested",
    "tf.RaggedTensor": "torch.nested.nested_tensor",
    "tf.SparseTensor": "torch.sparse_coo_tensor",
    "tf.TensorArray": "a Python list and torch.stack",
    "tf.gather_nd": "advanced indexing: params[tuple(indices.T)]",
    "tf.scatter_nd": "torch.Tensor.index_put_",
    "tf.tensor_scatter_nd_update": "torch.Tensor.index_put",
    "tf.boolean_mask": "tensor[mask]",
    "tf.pad": "torch.nn.functional.pad",
    "tf.slice": "tensor slicing (t[a:b])",
    "tf.strided_slice": "tensor slicing (t[a:b:s])",
    "tf.sort": "torch.sort",
    "tf.argsort": "torch.argsort",
    "tf.unique": "torch.unique",
    "tf.cond": "a Python if",
    "tf.while_loop": "a Python while loop",
    "tf.map_fn": "torch.vmap or a Python loop",
    "tf.vectorized_map": "torch.vmap",
    "tf.py_function": "calling the Python function directly",
    "tf.numpy_function": "calling the function directly",
    "tf.saved_model": "torch.save(model.state_dict()) or torch.export",
    "tf.image": "torchvision.transforms.v2",
    "tf.io": "open()/numpy/torch.load",
    "tf.strings": "Python str methods",
    "tf.lite": "torch.export / ExecuTorch",
    "tf.compat": "the TF 2 names unison implements",
    "tf.Graph": "eager torch (there is no graph)",
    "tf.Session": "eager torch (there is no session)",
    "tf.placeholder": "function arguments",
    "tf.device": "tensor.to(device)",
    "tf.control_dependencies": "nothing (torch runs in program order)",
    "tf.custom_gradient": "torch.autograd.Function",
    "tf.searchsorted": "torch.searchsorted",
    "tf.meshgrid": "torch.meshgrid",
    "tf.linspace": "torch.linspace",
    "tf.eye": "torch.eye",
    "tf.roll": "torch.roll",
    "tf.reverse": "torch.flip",
    "tf.broadcast_to": "torch.broadcast_to",
    "tf.math.bincount": "torch.bincount",
    "tf.math.segment_sum": "torch.Tensor.index_add",
    "tf.math.unsorted_segment_sum": "torch.Tensor.index_add",
    "tf.math.confusion_matrix": "torch.bincount",
    "tf.nn.conv2d": "torch.nn.functional.conv2d (NCHW)",
    "tf.nn.max_pool2d": "torch.nn.functional.max_pool2d",
    "tf.nn.embedding_lookup": "torch.nn.functional.embedding",
    "tf.nn.batch_normalization": "torch.nn.functional.batch_norm",
    "tf.nn.ctc_loss": "torch.nn.functional.ctc_loss",
    "tf.random.Generator": "torch.Generator",
    "tf.random.stateless_uniform": "torch.rand with a seeded torch.Generator",
    "tf.train.Saver": "tf.train.Checkpoint",
    "tf.train.Example": "a dict of tensors",
    "tf.estimator": "Keras Model.fit or a custom loop",
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
        f"unison does not implement {full}. {advice} The supported tf.* names are listed in docs/tf_api.md."
    )
