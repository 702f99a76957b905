"""``tf.data.Dataset.from_tensor_slices`` of pandas columns (TF's structured-data tutorials pass
``dict(dataframe)``): each column keeps numpy's dtype, as in TF, while Python lists take TF's
float32/int32 defaults."""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf


@same_as_tf("data.Dataset", edge=True)
def test_pandas_columns_keep_their_dtypes(tf):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"age": np.array([30, 41, 52]), "fare": [7.25, 8.05, 71.28], "sex": ["m", "f", "m"]})
    ds = tf.data.Dataset.from_tensor_slices((dict(frame), frame.pop("age")))
    features, label = next(iter(ds))
    lists = next(iter(tf.data.Dataset.from_tensor_slices(([1, 2], [0.5, 1.5]))))
    return (
        {
            key: str(value.dtype).replace("torch.", "").replace("<dtype: '", "").rstrip("'>")
            for key, value in features.items()
            if key != "sex"  # a string column: numpy objects in unison, tf.string in TF; its value below
        },
        str(label.dtype).replace("torch.", "").replace("<dtype: '", "").rstrip("'>"),
        [str(v.dtype).replace("torch.", "").replace("<dtype: '", "").rstrip("'>") for v in lists],
        float(features["fare"]),
        np.asarray(features["sex"]).item(),
    )
