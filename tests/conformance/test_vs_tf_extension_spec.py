"""``tf.experimental.ExtensionTypeSpec``: each extension type's ``Spec``, against TensorFlow 2.21."""

from __future__ import annotations

from tf_oracle import same_as_tf


def _types(tf):
    # explicit annotation dicts: `from __future__ import annotations` would make them strings
    class Masked(tf.experimental.ExtensionType):
        __annotations__ = {"values": tf.Tensor, "mask": tf.Tensor}

    class Labelled(tf.experimental.ExtensionType):
        __annotations__ = {"inner": Masked, "label": str}

    return Masked, Labelled


@same_as_tf("experimental.ExtensionTypeSpec", "type_spec_from_value")
def test_extension_type_spec(tf):
    Masked, Labelled = _types(tf)
    m = Masked([1.0, 2.0, 3.0], [True, False, True])
    spec = tf.type_spec_from_value(m)
    made = Masked.Spec(values=tf.TensorSpec([3], tf.float32), mask=tf.TensorSpec([3], tf.bool))
    nested = tf.type_spec_from_value(Labelled(m, "x"))
    return (
        repr(spec).split(".")[-2:],  # "Masked", "Spec(values=TensorSpec(...), mask=...)"
        isinstance(spec, tf.experimental.ExtensionTypeSpec),
        isinstance(spec, tf.TypeSpec),
        spec.value_type is Masked,
        repr(spec.values),
        repr(spec.mask),
        made == spec,
        m._type_spec == spec,
        type(spec).from_value(m) == spec,
        repr(nested.inner) == repr(spec),
        nested.label,
        issubclass(Masked.Spec, tf.experimental.ExtensionTypeSpec),
    )


@same_as_tf("experimental.ExtensionTypeSpec", edge=True)
def test_extension_type_spec_compatibility_and_errors(tf):
    Masked, _ = _types(tf)
    spec = tf.type_spec_from_value(Masked([1.0, 2.0, 3.0], [True, False, True]))
    loose = Masked.Spec(values=tf.TensorSpec([None], tf.float32), mask=tf.TensorSpec([None], tf.bool))
    out = [
        spec.is_compatible_with(Masked([4.0, 5.0, 6.0], [False, False, False])),
        spec.is_compatible_with(Masked([1.0, 2.0], [True, False])),  # another shape
        spec.is_compatible_with(Masked([1, 2, 3], [True, False, True])),  # another dtype
        loose.is_compatible_with(Masked([1.0, 2.0], [True, False])),
        loose == spec,
    ]
    try:
        Masked.Spec(values=3, mask=tf.TensorSpec([3], tf.bool))
    except TypeError as error:
        out.append(str(error))
    return out
