"""The victims' Keras weights ported weight for weight to torch (h5py only; TensorFlow is never
needed; ``frontierbo attack port-victim``):

- MNIST: the Carlini & Wagner CNN that the BayesOpt attack's and AutoZOOM's code ship
  (``cw_mnist.h5``, MIT, ``../shared/data/attack/README.md``) -> :class:`~frontierbo.attack.nets.CWMnistNet`;
- CIFAR-10: the Keras CNN of the ``cifar-10-model`` 7.4.0 wheel ->
  :class:`~frontierbo.attack.nets.KerasCifarNet`.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import torch

from frontierbo.attack.nets import CWMnistNet, KerasCifarNet
from frontierbo.attack.victims import BUILTIN_VICTIMS, load_victim
from frontierbo.data import file_sha256

#: the .h5 inside the cifar-10-model wheel
KERAS_CIFAR_MEMBER = "cifar_10_model/trained_models/cnn_model.h5"


def _open_keras_h5(source: str | os.PathLike):
    """An open h5py File for the .h5 itself or the one inside the wheel (a zip)."""
    import h5py  # only the port needs it

    source = Path(source)
    if zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as wheel:
            if KERAS_CIFAR_MEMBER not in wheel.namelist():
                raise FileNotFoundError(f"{source} has no member {KERAS_CIFAR_MEMBER}")
            return h5py.File(io.BytesIO(wheel.read(KERAS_CIFAR_MEMBER)), "r")
    return h5py.File(source, "r")


def _check_keras_config(h5) -> None:
    """Refuse a file whose layers are not the ones :class:`KerasCifarNet` reproduces."""
    layers = json.loads(h5.attrs["model_config"])["config"]["layers"]
    convs = [layer["config"] for layer in layers if layer["class_name"] == "Conv2D"]
    norms = [layer["config"] for layer in layers if layer["class_name"] == "BatchNormalization"]
    dense = [layer["config"] for layer in layers if layer["class_name"] == "Dense"]
    found = (
        tuple(c["filters"] for c in convs),
        {(c["padding"], c["activation"], tuple(c["kernel_size"])) for c in convs},
        {n["epsilon"] for n in norms},
        tuple((d["units"], d["activation"]) for d in dense),
    )
    expected = (
        KerasCifarNet.FILTERS,
        {("valid", "relu", (3, 3))},
        {KerasCifarNet.EPS},
        ((1024, "relu"), (512, "relu"), (10, "relu")),
    )
    if found != expected:
        raise ValueError(
            f"not the cifar-10-model 7.4.0 architecture: found {found}, expected {expected}"
        )


def port_keras_cifar(source: str | os.PathLike) -> dict:
    """The state dict of :class:`KerasCifarNet` from the Keras file (h5py only).

    ``source``: the ``cifar_10_model-7.4.0`` wheel (read as a zip, never installed) or the
    ``cnn_model.h5`` inside it. Conv kernels go from Keras's (kh, kw, in, out) to torch's
    (out, in, kh, kw); dense kernels from (in, out) to (out, in); both are cross-correlations.
    """
    with _open_keras_h5(source) as h5:
        _check_keras_config(h5)
        weights = h5["model_weights"]

        def tensor(layer: str, name: str) -> torch.Tensor:
            return torch.from_numpy(np.array(weights[layer][layer][f"{name}:0"], dtype=np.float32))

        state = {}
        for i in range(6):
            keras = "conv2d" if i == 0 else f"conv2d_{i}"
            state[f"convs.{i}.weight"] = tensor(keras, "kernel").permute(3, 2, 0, 1).contiguous()
            state[f"convs.{i}.bias"] = tensor(keras, "bias")
            keras = "batch_normalization" if i == 0 else f"batch_normalization_{i}"
            state[f"norms.{i}.weight"] = tensor(keras, "gamma")
            state[f"norms.{i}.bias"] = tensor(keras, "beta")
            state[f"norms.{i}.running_mean"] = tensor(keras, "moving_mean")
            state[f"norms.{i}.running_var"] = tensor(keras, "moving_variance")
            state[f"norms.{i}.num_batches_tracked"] = torch.tensor(0)
        for i in range(3):
            keras = "dense" if i == 0 else f"dense_{i}"
            state[f"dense{i}.weight"] = tensor(keras, "kernel").T.contiguous()
            state[f"dense{i}.bias"] = tensor(keras, "bias")
    return state


def port_cifar_victim(source: str | os.PathLike, out_dir: str | os.PathLike) -> dict:
    """Port the Keras CIFAR-10 model and write ``<out_dir>/cifar10_keras.pt``.

    Returns ``{path, sha256, bytes, source_sha256, accuracy_on_samples}``; the accuracy is on the
    20 CIFAR-10 test images shipped by foolbox (:func:`~frontierbo.attack.data.load_cifar10_samples`).
    """
    from frontierbo.attack.data import load_cifar10_samples

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / BUILTIN_VICTIMS["cifar10"][1]
    torch.save(port_keras_cifar(source), path)
    images, labels = load_cifar10_samples()
    victim = load_victim("cifar10", weights=path)
    source_path = Path(source)
    return {
        "path": str(path),
        "sha256": file_sha256(path),
        "bytes": path.stat().st_size,
        "source_sha256": file_sha256(source_path),
        "accuracy_on_samples": victim.accuracy(images, labels),
    }


#: (Keras layer, torch layer) of the C&W MNIST CNN, in order.
CW_MNIST_LAYERS = (
    ("conv2d_1", "conv1"),
    ("conv2d_2", "conv2"),
    ("conv2d_3", "conv3"),
    ("conv2d_4", "conv4"),
    ("dense_1", "fc1"),
    ("dense_2", "fc2"),
    ("dense_3", "fc3"),
)


def port_cw_mnist(source: str | os.PathLike) -> dict:
    """The state dict of :class:`CWMnistNet` from the C&W MNIST Keras file (h5py only).

    Conv kernels go from Keras's (kh, kw, in, out) to torch's (out, in, kh, kw). ``dense_1``'s
    rows are in Keras's NHWC flatten order (h, w, c); torch flattens NCHW (c, h, w), so its
    kernel is reshaped to (4, 4, 64, 200) and permuted to (c, h, w) before the transpose.
    """
    import h5py  # only the port needs it

    expected = CWMnistNet().state_dict()
    with h5py.File(Path(source), "r") as h5:
        if "model_weights" not in h5:
            raise ValueError(f"{source} is not a Keras HDF5 model file (no 'model_weights' group)")
        weights = h5["model_weights"]
        state = {}
        for keras, name in CW_MNIST_LAYERS:
            if keras not in weights:
                raise ValueError(f"{source} has no layer {keras!r}: not the C&W MNIST CNN")
            kernel = np.array(weights[keras][keras]["kernel:0"], dtype=np.float32)
            bias = np.array(weights[keras][keras]["bias:0"], dtype=np.float32)
            if keras.startswith("conv"):
                kernel = kernel.transpose(3, 2, 0, 1)
            elif keras == "dense_1":
                side = int(round((kernel.shape[0] / 64) ** 0.5))
                kernel = kernel.reshape(side, side, 64, -1).transpose(2, 0, 1, 3)
                kernel = kernel.reshape(64 * side * side, -1).T
            else:
                kernel = kernel.T
            state[f"{name}.weight"] = torch.from_numpy(np.ascontiguousarray(kernel))
            state[f"{name}.bias"] = torch.from_numpy(bias)
    shapes = {k: tuple(v.shape) for k, v in state.items()}
    if shapes != {k: tuple(v.shape) for k, v in expected.items()}:
        raise ValueError(f"{source}: the layer shapes {shapes} are not the C&W MNIST CNN's")
    return state


def port_victim(source: str | os.PathLike, out_dir: str | os.PathLike) -> dict:
    """``frontierbo attack port-victim``: the C&W MNIST CNN when ``source`` is a Keras file with
    its layers (``conv2d_1``), else the CIFAR-10 CNN (its wheel or ``cnn_model.h5``)."""
    import h5py

    source = Path(source)
    if not source.is_file():
        raise FileNotFoundError(f"source: no such file: {source}")
    if not zipfile.is_zipfile(source):
        with h5py.File(source, "r") as h5:
            if "conv2d_1" in h5.get("model_weights", {}):
                return port_mnist_victim(source, out_dir)
    return port_cifar_victim(source, out_dir)


def port_mnist_victim(source: str | os.PathLike, out_dir: str | os.PathLike) -> dict:
    """Port the C&W MNIST model and write ``<out_dir>/mnist_cw_authors.pt``.

    Returns ``{path, sha256, bytes, source_sha256, test_accuracy}``; the accuracy is on the
    MNIST test set when it is under a data root, else on the 20 test images foolbox ships
    (``measured_on`` says which).
    """
    from frontierbo.attack import data
    from frontierbo.attack.experiment import mnist_test_available

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / BUILTIN_VICTIMS["mnist"][1]
    torch.save(port_cw_mnist(source), path)
    full = mnist_test_available()
    images, labels = data.load_mnist("test") if full else data.load_mnist_samples()
    victim = load_victim("mnist", weights=path)
    return {
        "path": str(path),
        "sha256": file_sha256(path),
        "bytes": path.stat().st_size,
        "source_sha256": file_sha256(Path(source)),
        "test_accuracy": victim.accuracy(images, labels),
        "measured_on": f"{len(labels)} MNIST test images",
    }
