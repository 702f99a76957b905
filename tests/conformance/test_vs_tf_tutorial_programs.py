"""What TF's own guides (tensor, variable, autodiff) print and compute, compared with TensorFlow.

Each test is a few lines taken from a TensorFlow guide that a new user runs first; unison had
printed or computed them differently.
"""

from __future__ import annotations

import numpy as np
import pytest
from tf_oracle import same_as_tf


@same_as_tf("constant")
def test_printed_matrix_starts_on_its_own_line(tf):
    # guide/tensor: print(rank_2_tensor) shows "tf.Tensor(\n[[1. 2.]..." (TF's numpy_text)
    t = tf.constant([[1, 2], [3, 4]], dtype=tf.float16)
    return str(t), repr(t), str(tf.constant([1.5, 2.0])), repr(tf.constant(2.5))


@same_as_tf("Variable")
def test_printed_variable(tf):
    # guide/variable: print("A variable:", my_variable)
    matrix = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    return repr(matrix), str(matrix), repr(tf.Variable(1.0)), repr(tf.Variable([1, 2], name="v"))


@same_as_tf("sparse.SparseTensor")
def test_printed_sparse_tensor(tf):
    # guide/tensor: print(sparse_tensor, "\n")
    sparse = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
    return str(sparse), repr(sparse)


@same_as_tf("convert_to_tensor")
def test_variable_converted_to_a_tensor(tf):
    # guide/variable: print("Viewed as a tensor:", tf.convert_to_tensor(my_variable))
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape() as tape:
        t = tf.convert_to_tensor(v)
        y = tf.reduce_sum(t * t)
    v.assign([[0.0, 0.0], [0.0, 0.0]])
    return str(t), t, tape.gradient(y, v), str(tf.convert_to_tensor(v, dtype=tf.float32))


@same_as_tf("keras:Sequential", dialects=("keras",))
def test_model_names_and_summary_of_the_regression_tutorial(tf):
    # keras/regression: the first model's summary says Model: "sequential"; Keras 3 rules a line
    # between rows and writes "0 (unbuilt)" for a Dense layer not built yet
    import contextlib
    import io

    tf.keras.backend.clear_session()
    model = tf.keras.Sequential([tf.keras.layers.Dense(4), tf.keras.layers.Dropout(0.2), tf.keras.layers.Dense(1)])
    unbuilt = io.StringIO()
    with contextlib.redirect_stdout(unbuilt):
        model.summary()
    model.build((None, 3))
    built = io.StringIO()
    with contextlib.redirect_stdout(built):
        model.summary()
    # customization/custom_layers: a block made with super().__init__(name='') keeps that name
    empty = tf.keras.Sequential(name="").name
    tf.keras.backend.clear_session()
    return model.name, tf.keras.Sequential().name, unbuilt.getvalue(), built.getvalue(), empty


@same_as_tf("keras:layers.Normalization", dialects=("keras", "tf_keras"))
def test_adapted_normalization_statistics_have_the_inputs_rank(tf):
    # keras/regression: print(normalizer.mean.numpy()) prints [[...]] (shape (1, 9)); the
    # one-feature normalizer of horsepower (axis=None) has shape (1,)
    features = np.linspace(0.0, 2.0, 20, dtype="float32").reshape(10, 2) ** 2
    normalizer = tf.keras.layers.Normalization(axis=-1)
    normalizer.adapt(features)
    horsepower = tf.keras.layers.Normalization(input_shape=[1], axis=None)
    horsepower.adapt(features[:, 0])
    images = tf.keras.layers.Normalization(axis=-1)
    images.adapt(features.reshape(5, 2, 2))
    return (
        normalizer.mean.numpy(),
        normalizer.variance.numpy(),
        horsepower.mean.numpy(),
        images.mean.numpy(),
        normalizer(features[:3]),
    )


@same_as_tf("math.subtract")
def test_operators_between_tensors_and_arrays(tf):
    # A loss written against numpy labels: (model(x) - y_np) ** 2 in a tape; TF converts the array
    # to the tensor's dtype on either side (torch raised for array - tensor and lost the gradient
    # of tensor - array)
    w = tf.Variable([1.0, 2.0])
    labels = np.array([0.0, 1.0])  # float64, as numpy makes them
    with tf.GradientTape() as tape:
        prediction = w * 2.0
        loss = tf.reduce_sum((prediction - labels) ** 2) + tf.reduce_sum((labels - prediction) ** 2)
    t = tf.constant([1.0, 2.0])
    ints = tf.constant([1, 2])
    return (
        loss,
        tape.gradient(loss, w),
        np.array([3, 4], dtype=np.int32) + t,
        np.array([3.0, 4.0]) * t,
        np.array([3.0, 4.0]) / t,
        np.array([1.5, 2.0]) + ints,
        t < np.array([1.5, 1.5]),
        np.array([1.5, 1.5]) >= t,
        t + [1, 2],
        (3.0, 4.0) - t,
        np.array([[1.0, 2.0]]) @ tf.constant([[1.0], [1.0]]),
    )


@same_as_tf("convert_to_tensor", edge=True)
def test_a_pandas_dataframe_converts_through_numpy(tf):
    # guide/core/quickstart_core: dataset_tf = tf.convert_to_tensor(dataset, dtype=tf.float32)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"mpg": [18.0, 15.5], "cylinders": [8, 4]})
    return tf.convert_to_tensor(frame, dtype=tf.float32), tf.convert_to_tensor(frame), tf.constant(frame["cylinders"])


@same_as_tf("train.list_variables")
def test_checkpoint_write_lists_no_save_counter(tf):
    # guide/intro_to_modules: checkpoint.write(chkp_path); tf.train.list_variables(chkp_path)
    import tempfile

    folder = tempfile.mkdtemp()
    checkpoint = tf.train.Checkpoint(step=tf.Variable(3))
    written = tf.train.list_variables(checkpoint.write(folder + "/written"))
    saved = tf.train.list_variables(checkpoint.save(folder + "/saved"))
    again = tf.train.list_variables(checkpoint.write(folder + "/again"))
    return written, saved, again


@same_as_tf("keras:Model", dialects=("keras",))
def test_evaluate_return_dict_orders_metrics_by_name(tf):
    # structured_data/preprocessing_layers prints model.evaluate(..., return_dict=True):
    # {'accuracy': ..., 'loss': ...} in Keras 3; the list form keeps the loss first
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.compile("sgd", "mse", metrics=["mae", "accuracy"])
    x, y = np.ones((4, 2), "float32"), np.ones((4, 1), "float32")
    as_dict = model.evaluate(x, y, verbose=0, return_dict=True)
    on_batch = model.test_on_batch(x, y, return_dict=True)
    return list(as_dict), as_dict, list(on_batch), model.evaluate(x, y, verbose=0)


@same_as_tf("keras:layers.Dense", dialects=("keras",))
def test_layer_weights_are_named_as_keras_3_names_them(tf):
    # guide/autodiff: for var, g in zip(layer.trainable_variables, grad): print(f'{var.name}, ...')
    tf.keras.backend.clear_session()
    layer = tf.keras.layers.Dense(2, activation="relu")
    layer(tf.constant([[1.0, 2.0, 3.0]]))
    names = [v.name for v in layer.trainable_variables]
    paths = [v.path for v in layer.trainable_variables]
    tf.keras.backend.clear_session()
    return names, paths, tf.Variable(3.0, name="x0").name


@same_as_tf("Tensor")
def test_set_shape_checks_and_get_shape_reads(tf):
    # structured_data/time_series: split_window calls inputs.set_shape([None, self.input_width, None])
    window = tf.zeros([3, 7, 19])
    window.set_shape([None, 7, None])
    window.set_shape(None)
    window.set_shape(tf.TensorShape([3, 7, 19]))
    return window.get_shape().as_list(), window.get_shape().rank


@same_as_tf("Tensor", edge=True)
@pytest.mark.parametrize("shape", [[3, 3], [2], [None, None, None]])
def test_set_shape_refuses_an_incompatible_shape(tf, shape):
    tf.zeros([2, 3]).set_shape(shape)


@same_as_tf("keras:Sequential", dialects=("keras", "tf_keras"))
def test_a_sequential_whose_first_layer_is_a_model_with_an_input_shape_is_built(tf):
    # images/classification: Sequential([data_augmentation, layers.Rescaling(1./255), ...]) where
    # data_augmentation = Sequential([layers.RandomFlip("horizontal", input_shape=(h, w, 3)), ...])
    layers = tf.keras.layers
    augmentation = tf.keras.Sequential([layers.RandomFlip("horizontal", input_shape=(8, 8, 3)), layers.RandomZoom(0.1)])
    model = tf.keras.Sequential(
        [augmentation, layers.Rescaling(1.0 / 255), layers.Conv2D(2, 3), layers.Flatten(), layers.Dense(3)]
    )
    return model.built, model.count_params(), [tuple(w.shape) for w in model.weights], tuple(model.output_shape)


@same_as_tf("keras:models.load_model", edge=True, dialects=("keras",))
@pytest.mark.parametrize("name", ["my_model.keras", "my_model"])
def test_load_model_of_a_missing_file_is_a_value_error(tf, name):
    # keras/save_and_load: tf.keras.models.load_model('my_model.keras') before the model was saved
    import os
    import tempfile

    tf.keras.models.load_model(os.path.join(tempfile.mkdtemp(), name))


@same_as_tf("constant", edge=True)
@pytest.mark.parametrize("rows", [[[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]], [[1, 2], 3]])
def test_a_ragged_list_is_a_value_error(tf, rows):
    # guide/tensor: try: tensor = tf.constant(ragged_list) except Exception as e: print(f"{type(e).__name__}: {e}")
    tf.constant(rows)


@same_as_tf("io.parse_single_example", "io.parse_example", "data.TFRecordDataset", "py_function")
def test_the_tfrecord_tutorial_round_trip(tf):
    # tutorials/load_data/tfrecord: Examples serialized in a py_function, written with
    # tf.data.experimental.TFRecordWriter, read back and parsed one by one and in batches
    import os
    import tempfile

    def _bytes_feature(value):
        if hasattr(value, "numpy"):
            value = value.numpy()
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))

    def _float_feature(value):
        return tf.train.Feature(float_list=tf.train.FloatList(value=[float(value)]))

    def _int64_feature(value):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(value)]))

    def serialize_example(feature0, feature1, feature2, feature3):
        feature = {
            "feature0": _int64_feature(feature0),
            "feature1": _int64_feature(feature1),
            "feature2": _bytes_feature(feature2),
            "feature3": _float_feature(feature3),
        }
        return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()

    def tf_serialize_example(f0, f1, f2, f3):
        tf_string = tf.py_function(serialize_example, (f0, f1, f2, f3), tf.string)
        return tf.reshape(tf_string, ())

    n = 12
    feature1 = np.arange(n) % 5
    feature2 = np.array([b"cat", b"dog", b"chicken", b"horse", b"goat"])[feature1]
    features = (np.arange(n) % 2, feature1, feature2, np.linspace(-1.0, 1.0, n))
    serialized = tf.data.Dataset.from_tensor_slices(features).map(tf_serialize_example)
    description = {
        "feature0": tf.io.FixedLenFeature([], tf.int64, default_value=0),
        "feature1": tf.io.FixedLenFeature([], tf.int64, default_value=0),
        "feature2": tf.io.FixedLenFeature([], tf.string, default_value=""),
        "feature3": tf.io.FixedLenFeature([], tf.float32, default_value=0.0),
    }
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "test.tfrecord")
        tf.data.experimental.TFRecordWriter(path).write(serialized)
        raw = tf.data.TFRecordDataset([path])
        one = [
            (int(p["feature0"]), int(p["feature1"]), p["feature2"].numpy(), float(p["feature3"]))
            for p in raw.map(lambda r: tf.io.parse_single_example(r, description))
        ]
        batches = [
            {k: np.asarray(v.numpy()).tolist() for k, v in sorted(b.items())}
            for b in raw.batch(5).map(lambda r: tf.io.parse_example(r, description))
        ]
    return one, batches
