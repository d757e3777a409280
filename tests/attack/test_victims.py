"""The BOS² victims: architectures (nets), the Keras port (keras_port, against a numpy Keras
forward pass), the numpy wrapper, training and the shipped weights (checksums, accuracies)."""

import json
import shutil
import zipfile
from itertools import pairwise

import numpy as np
import pytest

torch = pytest.importorskip("torch")
h5py = pytest.importorskip("h5py")

from frontierbo.attack import keras_port, nets, training  # noqa: E402
from frontierbo.attack import victims as V  # noqa: E402
from frontierbo.data import data_available, file_sha256  # noqa: E402

FILTERS = (64, 64, 128, 128, 64, 64)


# --------------------------------------------------------------------------- architectures


def n_params(module):
    return sum(p.numel() for p in module.parameters())


def test_cw_mnist_net_shapes_and_size():
    net = nets.CWMnistNet().eval()
    assert net(torch.zeros(5, 1, 28, 28)).shape == (5, 10)
    # hand count: convs 320 + 9248 + 18496 + 36928; 4x4x64 -> 200: 205000; 40200; 2010
    assert n_params(net) == 312_202
    cifar = nets.CWMnistNet(in_channels=3, image_size=32, filters=(64, 64, 128, 128), hidden=256)
    assert cifar.fc1.in_features == 5 * 5 * 128
    assert cifar(torch.zeros(2, 3, 32, 32)).shape == (2, 10)


def test_cw_mnist_net_dropout_only_in_training():
    torch.manual_seed(0)
    net = nets.CWMnistNet()
    x = torch.randn(4, 1, 28, 28)
    net.eval()
    assert torch.equal(net(x), net(x))
    net.train()
    assert not torch.equal(net(x), net(x))


def test_keras_cifar_net_shapes_size_and_nonnegative_logits():
    torch.manual_seed(0)
    net = nets.KerasCifarNet().eval()
    logits = net(torch.rand(3, 3, 32, 32) * 255)
    assert logits.shape == (3, 10)
    assert torch.all(logits >= 0)  # ReLU on the last dense layer
    # the wheel's README: 969k parameters (968,394 trainable + 1,024 moving statistics)
    assert n_params(net) == 968_394


# --------------------------------------------------------------------------- the Keras port


def keras_layers():
    conv = {"padding": "valid", "activation": "relu", "kernel_size": [3, 3]}
    layers = []
    for f in FILTERS:
        layers.append({"class_name": "Conv2D", "config": {**conv, "filters": f}})
        layers.append({"class_name": "BatchNormalization", "config": {"epsilon": 0.001}})
    for units in (1024, 512, 10):
        layers.append({"class_name": "Dense", "config": {"units": units, "activation": "relu"}})
    return layers


def synthetic_keras_weights(rng):
    """Random weights in Keras's layouts: conv (kh, kw, in, out), dense (in, out)."""
    weights, channels = {}, (3, *FILTERS)
    for i, (a, b) in enumerate(pairwise(channels)):
        suffix = "" if i == 0 else f"_{i}"
        weights[f"conv2d{suffix}"] = {
            "kernel": rng.normal(0, (2 / (9 * a)) ** 0.5, (3, 3, a, b)),
            "bias": rng.normal(0, 0.1, b),
        }
        weights[f"batch_normalization{suffix}"] = {
            "gamma": rng.uniform(0.5, 1.5, b),
            "beta": rng.normal(0, 0.1, b),
            "moving_mean": rng.uniform(0, 1, b),
            "moving_variance": rng.uniform(0.5, 2, b),
        }
    for i, (a, b) in enumerate([(64, 1024), (1024, 512), (512, 10)]):
        suffix = "" if i == 0 else f"_{i}"
        weights[f"dense{suffix}"] = {
            "kernel": rng.normal(0, (2 / a) ** 0.5, (a, b)),
            "bias": rng.normal(0, 0.1, b),
        }
    return weights


def write_keras_h5(path, weights, layers):
    with h5py.File(path, "w") as h5:
        h5.attrs["model_config"] = json.dumps(
            {"class_name": "Sequential", "config": {"layers": layers}}
        )
        group = h5.create_group("model_weights")
        for layer, tensors in weights.items():
            inner = group.create_group(layer).create_group(layer)
            for name, value in tensors.items():
                inner.create_dataset(f"{name}:0", data=np.asarray(value, dtype=np.float32))


def keras_forward(weights, x):
    """Keras semantics in numpy: NHWC input, 'valid' cross-correlation with (kh, kw, in, out)
    kernels, ReLU then BatchNorm(eps 1e-3), NHWC flatten, dense x @ (in, out)."""
    from numpy.lib.stride_tricks import sliding_window_view

    for i in range(6):
        suffix = "" if i == 0 else f"_{i}"
        conv, bn = weights[f"conv2d{suffix}"], weights[f"batch_normalization{suffix}"]
        windows = sliding_window_view(x, (3, 3), axis=(1, 2))  # (n, h, w, c, kh, kw)
        x = np.einsum("nhwcab,abco->nhwo", windows, conv["kernel"]) + conv["bias"]
        x = np.maximum(x, 0)
        x = (
            bn["gamma"] * (x - bn["moving_mean"]) / np.sqrt(bn["moving_variance"] + 1e-3)
            + bn["beta"]
        )
        if i in (1, 3):
            n, h, w, c = x.shape
            x = x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))
    x = x.reshape(len(x), -1)
    for name in ("dense", "dense_1", "dense_2"):
        x = np.maximum(x @ weights[name]["kernel"] + weights[name]["bias"], 0)
    return x


def test_port_reproduces_a_numpy_keras_forward_pass(tmp_path):
    # random (non-symmetric) kernels: a wrong kernel transpose or BN order would not agree
    rng = np.random.default_rng(0)
    weights = synthetic_keras_weights(rng)
    write_keras_h5(tmp_path / "model.h5", weights, keras_layers())
    net = nets.KerasCifarNet().eval()
    net.load_state_dict(keras_port.port_keras_cifar(tmp_path / "model.h5"))
    x = rng.uniform(0, 255, (4, 32, 32, 3))
    expected = keras_forward(weights, x)
    with torch.no_grad():
        got = net(torch.tensor(x, dtype=torch.float32).permute(0, 3, 1, 2)).numpy()
    assert np.abs(expected).max() > 1  # a non-trivial output
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max())


def test_port_first_conv_matches_direct_convolution_of_the_keras_kernel(tmp_path):
    rng = np.random.default_rng(1)
    weights = synthetic_keras_weights(rng)
    write_keras_h5(tmp_path / "model.h5", weights, keras_layers())
    state = keras_port.port_keras_cifar(tmp_path / "model.h5")
    x = rng.normal(size=(2, 32, 32, 3))
    kernel = weights["conv2d"]["kernel"]  # (kh, kw, in, out)
    # out[n, i, j, o] = sum_{a, b, c} x[n, i + a, j + b, c] kernel[a, b, c, o], loops by hand
    direct = np.zeros((2, 30, 30, 64))
    for a in range(3):
        for b in range(3):
            direct += np.einsum("nijc,co->nijo", x[:, a : a + 30, b : b + 30], kernel[a, b])
    got = torch.nn.functional.conv2d(
        torch.tensor(x, dtype=torch.float32).permute(0, 3, 1, 2), state["convs.0.weight"]
    )
    np.testing.assert_allclose(got.permute(0, 2, 3, 1).numpy(), direct, rtol=1e-4, atol=1e-4)


def test_port_reads_the_h5_inside_a_wheel_and_refuses_another_architecture(tmp_path):
    rng = np.random.default_rng(2)
    weights = synthetic_keras_weights(rng)
    write_keras_h5(tmp_path / "model.h5", weights, keras_layers())
    wheel = tmp_path / "cifar_10_model-7.4.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.write(tmp_path / "model.h5", keras_port.KERAS_CIFAR_MEMBER)
    from_h5, from_wheel = (
        keras_port.port_keras_cifar(tmp_path / "model.h5"),
        keras_port.port_keras_cifar(wheel),
    )
    assert all(torch.equal(from_h5[k], from_wheel[k]) for k in from_h5)

    layers = keras_layers()
    layers[1]["config"]["epsilon"] = 1e-5  # torch's default, not this model's
    write_keras_h5(tmp_path / "other.h5", weights, layers)
    with pytest.raises(ValueError, match="not the cifar-10-model"):
        keras_port.port_keras_cifar(tmp_path / "other.h5")


# --------------------------------------------------------------------------- the wrapper


class ChannelMeans(torch.nn.Module):
    """Logits = the per-channel means of an NCHW input: exposes the scaling and the layout."""

    def forward(self, x):
        return x.mean(dim=(2, 3))


def test_victim_maps_attack_space_to_the_module_input_nchw():
    x = np.zeros((2, 4, 4, 3), dtype=np.float32)
    x[..., 0], x[..., 1], x[..., 2] = -0.5, 0.0, 0.5
    raw = V.Victim(ChannelMeans(), (4, 4, 3), "byte")
    np.testing.assert_allclose(raw.logits(x), [[0.0, 127.5, 255.0]] * 2)
    unit = V.Victim(ChannelMeans(), (4, 4, 3), "unit")
    np.testing.assert_allclose(unit.logits(x), [[0.0, 0.5, 1.0]] * 2)
    assert raw.num_classes == 3


def test_victim_probabilities_are_a_float64_softmax_and_batching_does_not_matter():
    torch.manual_seed(0)
    module = nets.CWMnistNet()
    x = np.random.default_rng(0).uniform(-0.5, 0.5, (7, 28, 28, 1))
    small = V.Victim(module, (28, 28, 1), batch_size=3)
    big = V.Victim(module, (28, 28, 1), batch_size=500)
    p = small(x)
    assert p.dtype == np.float64 and p.shape == (7, 10)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(p, big(x), atol=1e-12)
    expected = torch.softmax(torch.tensor(small.logits(x)), dim=1).numpy()
    np.testing.assert_allclose(p, expected, atol=1e-12)
    np.testing.assert_array_equal(small.predict(x), p.argmax(axis=1))
    np.testing.assert_allclose(small(x[0]), p[:1], atol=1e-12)  # one image (H, W, C)
    with pytest.raises(ValueError, match=r"x must have shape \(n, 28, 28, 1\)"):
        small(np.zeros((2, 28, 28, 3)))
    with pytest.raises(ValueError, match="input_scale must be one of"):
        V.Victim(module, (28, 28, 1), "percent")


def test_softmax_of_relu_logits_is_a_probability_vector():
    class Zeros(torch.nn.Module):
        def forward(self, x):
            return torch.relu(-x.mean(dim=(1, 2, 3))[:, None].repeat(1, 4) - 1)

    p = V.Victim(Zeros(), (2, 2, 1))(np.zeros((1, 2, 2, 1)))
    np.testing.assert_allclose(p, [[0.25, 0.25, 0.25, 0.25]])


# --------------------------------------------------------------------------- shipped weights

MANIFEST = V.read_manifest()


@pytest.mark.parametrize("filename", sorted(MANIFEST))
def test_shipped_weights_match_the_manifest(filename):
    path = V.weights_dir() / filename
    assert file_sha256(path) == MANIFEST[filename]["sha256"]
    assert path.stat().st_size == MANIFEST[filename]["bytes"]


needs_mnist = pytest.mark.skipif(
    not data_available("mnist/mnist_test.npz"), reason="shared MNIST test file not found"
)


@needs_mnist
@pytest.mark.parametrize(
    "name, floor", [("mnist", 0.993), ("mnist-10k", 0.98)]
)  # the C&W victim of the thesis (its authors' weights), and ours trained on 10 000 images
def test_shipped_mnist_victims_accuracy_on_the_full_test_set(name, floor):
    from frontierbo.attack.data import load_mnist

    images, labels = load_mnist("test")
    victim = V.load_victim(name)
    accuracy = victim.accuracy(images, labels)
    assert victim.num_classes == 10
    assert accuracy >= floor
    # the manifest records the same number
    filename = V.BUILTIN_VICTIMS[name][1]
    assert accuracy == pytest.approx(MANIFEST[filename]["accuracy"]["value"], abs=1e-4)


CW_H5 = "attack/cw_mnist.h5"


def _keras_forward(h5_path, x: np.ndarray) -> np.ndarray:
    """The C&W Keras model's logits computed in numpy the Keras way (NHWC, valid
    cross-correlation, 2x2 max pools, NHWC flatten): the oracle of the port."""
    import h5py

    with h5py.File(h5_path, "r") as h5:
        w = {k: {n: np.array(v) for n, v in h5["model_weights"][k][k].items()}
             for k in ("conv2d_1", "conv2d_2", "conv2d_3", "conv2d_4",
                       "dense_1", "dense_2", "dense_3")}  # fmt: skip

    def conv(a, layer):
        kernel, bias = w[layer]["kernel:0"], w[layer]["bias:0"]
        windows = np.lib.stride_tricks.sliding_window_view(a, (3, 3), axis=(1, 2))
        return np.maximum(np.einsum("nhwcij,ijco->nhwo", windows, kernel) + bias, 0)

    def pool(a):
        n, h, wd, c = a.shape
        return a[:, : h // 2 * 2, : wd // 2 * 2].reshape(n, h // 2, 2, wd // 2, 2, c).max((2, 4))

    a = pool(conv(conv(x.astype(np.float64), "conv2d_1"), "conv2d_2"))
    a = pool(conv(conv(a, "conv2d_3"), "conv2d_4")).reshape(len(x), -1)
    a = np.maximum(a @ w["dense_1"]["kernel:0"] + w["dense_1"]["bias:0"], 0)
    a = np.maximum(a @ w["dense_2"]["kernel:0"] + w["dense_2"]["bias:0"], 0)
    return a @ w["dense_3"]["kernel:0"] + w["dense_3"]["bias:0"]


@pytest.mark.skipif(not data_available(CW_H5), reason=f"shared {CW_H5} not found")
def test_cw_mnist_port_gives_the_keras_models_logits_and_the_shipped_weights(tmp_path):
    from frontierbo.attack.keras_port import port_cw_mnist
    from frontierbo.data import resolve_data_path

    h5 = resolve_data_path(CW_H5)
    state = port_cw_mnist(h5)
    shipped = V.load_state_dict(V.weights_dir() / V.BUILTIN_VICTIMS["mnist"][1])
    assert state.keys() == shipped.keys()
    assert all(torch.equal(state[k], shipped[k]) for k in state)  # the shipped file is this port
    x = np.random.default_rng(3).uniform(-0.5, 0.5, (4, 28, 28, 1))
    np.testing.assert_allclose(
        V.load_victim("mnist").logits(x), _keras_forward(h5, x), rtol=1e-4, atol=1e-4
    )
    with h5py.File(tmp_path / "empty.h5", "w"):
        pass
    with pytest.raises(ValueError, match="not a Keras HDF5 model file"):
        port_cw_mnist(tmp_path / "empty.h5")


def test_shipped_cifar_victim_classifies_the_20_foolbox_images():
    pytest.importorskip("foolbox")
    from frontierbo.attack.data import load_cifar10_samples

    images, labels = load_cifar10_samples()
    victim = V.load_victim("cifar10")
    np.testing.assert_array_equal(victim.predict(images), labels)
    assert np.all(victim.logits(images) >= 0)


def test_corrupted_or_missing_shipped_weights_are_clear_errors(tmp_path, monkeypatch):
    shutil.copy(V.weights_dir() / "manifest.json", tmp_path / "manifest.json")
    data = bytearray((V.weights_dir() / "mnist_cw_authors.pt").read_bytes())
    data[100] ^= 0xFF
    (tmp_path / "mnist_cw_authors.pt").write_bytes(bytes(data))
    monkeypatch.setattr(V, "weights_dir", lambda: tmp_path)
    with pytest.raises(ValueError, match="sha256 mismatch"):
        V.load_victim("mnist")
    with pytest.raises(FileNotFoundError, match="cifar10_keras.pt is missing"):
        V.load_victim("cifar10")
    with pytest.raises(ValueError, match="name must be one of"):
        V.load_victim("imagenet")


@pytest.mark.slow
@needs_mnist
def test_training_is_seeded(tmp_path):
    first = training.train_mnist_victim(tmp_path / "a", seed=5, epochs=1, progress=False)
    second = training.train_mnist_victim(tmp_path / "b", seed=5, epochs=1, progress=False)
    assert first["sha256"] == second["sha256"] and first["epochs"] == 1
    assert first["test_accuracy"] > 0.3  # one epoch of the C&W recipe: about 0.6


@pytest.mark.skipif(not data_available(CW_H5), reason=f"shared {CW_H5} not found")
def test_port_victim_command_remakes_the_shipped_mnist_weights_byte_for_byte(cli, tmp_path):
    from frontierbo.data import resolve_data_path

    status, text, err = cli(["attack", "port-victim", resolve_data_path(CW_H5), "--out", tmp_path])
    assert status == 0, err
    made = json.loads(text)
    assert made["sha256"] == MANIFEST["mnist_cw_authors.pt"]["sha256"]
    assert made["source_sha256"] == MANIFEST["mnist_cw_authors.pt"]["made_by"]["source_h5_sha256"]
    status, _, err = cli(["attack", "port-victim", tmp_path / "nothere.h5", "--out", tmp_path])
    assert status == 2 and "no such file" in err
