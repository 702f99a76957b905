"""The names of TF's SavedModel format: tags, signature keys, method names, file and folder names.

They are TF's values (``tf.saved_model.SERVING == "serve"``), for programs that pass them to
``save``/``load`` or build signature maps; which files unison itself writes is documented in
``docs/tf_core.md``.

Example:
    >>> import unison as tf
    >>> tf.saved_model.SERVING, tf.saved_model.PREDICT_METHOD_NAME
    ('serve', 'tensorflow/serving/predict')
"""

ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
SAVED_MODEL_SCHEMA_VERSION = 1
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"

# tags
SERVING = "serve"
TRAINING = "train"
GPU = "gpu"
TPU = "tpu"

# signature inputs, outputs and method names of TF Serving's classify, predict and regress APIs
CLASSIFY_INPUTS = "inputs"
CLASSIFY_METHOD_NAME = "tensorflow/serving/classify"
CLASSIFY_OUTPUT_CLASSES = "classes"
CLASSIFY_OUTPUT_SCORES = "scores"
PREDICT_INPUTS = "inputs"
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_OUTPUTS = "outputs"
REGRESS_INPUTS = "inputs"
REGRESS_METHOD_NAME = "tensorflow/serving/regress"
REGRESS_OUTPUTS = "outputs"
