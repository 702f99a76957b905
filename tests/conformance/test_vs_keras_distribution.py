"""``keras.distribution`` (Keras 3's distribution API) on unison against Keras 3.15 on TF 2.21, on one
process: meshes, layouts, layout maps, the data- and model-parallel descriptions and the global
distribution (restored after each test)."""

from __future__ import annotations

import pytest
from tf_oracle import same_as_tf

NAMES = (
    "keras:distribution.DeviceMesh",
    "keras:distribution.TensorLayout",
    "keras:distribution.LayoutMap",
    "keras:distribution.DataParallel",
    "keras:distribution.ModelParallel",
    "keras:distribution.list_devices",
    "keras:distribution.distribution",
    "keras:distribution.set_distribution",
)


@same_as_tf(*NAMES)
def test_distribution_descriptions(tf):
    d = tf.keras.distribution
    devices = d.list_devices("cpu")
    mesh = d.DeviceMesh(shape=(len(devices),), axis_names=["batch"], devices=devices)
    layout = d.TensorLayout(axes=("batch", None), device_mesh=mesh)
    layout_map = d.LayoutMap(mesh)
    layout_map["dense.*kernel"] = ("batch", None)
    layout_map["dense.*bias"] = ("batch",)
    data_parallel = d.DataParallel(devices=devices)
    model_parallel = d.ModelParallel(layout_map=layout_map, batch_dim_name="batch")
    before = d.distribution()
    try:
        d.set_distribution(data_parallel)
        current = d.distribution() is data_parallel
    finally:
        d.set_distribution(before)
    return (
        devices,
        tuple(mesh.shape),
        list(mesh.axis_names),
        layout.axes,
        layout.device_mesh is mesh,
        sorted(layout_map.keys()),
        layout_map["dense_1/kernel"].axes,
        layout_map["conv/kernel"],
        tuple(data_parallel.device_mesh.shape),
        list(data_parallel.device_mesh.axis_names),
        data_parallel.batch_dim_name,
        data_parallel.get_data_layout((8, 3)).axes,
        model_parallel.batch_dim_name,
        tuple(model_parallel.device_mesh.shape),
        model_parallel.get_data_layout((8, 3, 2)).axes,
        current,
        d.distribution() is before,
    )


@pytest.mark.parametrize("case", ["mesh_sizes", "empty_axis_names"])
@same_as_tf(*NAMES, edge=True)
def test_distribution_refuses_bad_descriptions(tf, case):
    d = tf.keras.distribution
    if case == "mesh_sizes":
        return d.DeviceMesh(shape=(2,), axis_names=["batch", "model"])
    return d.DeviceMesh(shape=(1,), axis_names=[])
