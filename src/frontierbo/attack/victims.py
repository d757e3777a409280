"""The attacked classifiers of the BOS² experiments (thesis Section 5.3) and their weights.

- :class:`CWMnistNet`: the Carlini–Wagner MNIST CNN (ZOO, AutoZOOM, GenAttack, BayesOpt and BOS²
  all attack it). Trained here by :func:`train_mnist_victim` with the C&W recipe on the 10,000
  MNIST training images that are available offline (the thesis's copy saw all 60,000).
- :class:`KerasCifarNet`: a pretrained CIFAR-10 CNN (6 conv + batch norm, dense 1024-512-10),
  ported weight for weight from the Keras file in the ``cifar-10-model`` 7.4.0 wheel by
  :func:`port_keras_cifar` (h5py only; TensorFlow is never needed). It stands in for the C&W
  CIFAR CNN, whose training set cannot be had offline. Its last dense layer has a ReLU, so its
  logits are never negative; their softmax is still a probability vector.
- :class:`Victim`: the numpy face of a module for the attacks: ``victim(x)`` maps attack-space
  images (n, H, W, C) in [-0.5, 0.5] to class probabilities (n, C), float64.

The modules take torch's NCHW layout; :class:`Victim` permutes the NHWC attack space and maps it
to the module's own input range (``INPUT_SCALES``).
"""

from __future__ import annotations

import io
import json
import os
import time
import zipfile
from importlib.resources import files
from itertools import pairwise
from pathlib import Path

import numpy as np

try:
    import torch
    import torch.nn.functional as F
    from torch import nn
except ModuleNotFoundError as err:  # the module is useless without torch
    raise ImportError(
        "frontierbo.attack.victims needs PyTorch; install the extra: pip install 'frontierbo[attack]'"
    ) from err

from frontierbo._validation import as_generator, check_int
from frontierbo.data import file_sha256, verify_sha256

#: attack space x in [-0.5, 0.5] -> a module's input: (x + offset) * scale.
INPUT_SCALES: dict[str, tuple[float, float]] = {
    "attack": (0.0, 1.0),  # [-0.5, 0.5] as is (the C&W models)
    "unit": (0.5, 1.0),  # [0, 1]
    "byte": (0.5, 255.0),  # [0, 255] (the Keras CIFAR-10 model: raw pixel values)
}

#: name -> (architecture, weight file in attack/weights/, input scale, input shape HWC)
BUILTIN_VICTIMS = {
    "mnist": ("cw-mnist", "mnist_cw.pt", "attack", (28, 28, 1)),
    "cifar10": ("keras-cifar10", "cifar10_keras.pt", "byte", (32, 32, 3)),
}

#: the .h5 inside the cifar-10-model wheel
KERAS_CIFAR_MEMBER = "cifar_10_model/trained_models/cnn_model.h5"


# --------------------------------------------------------------------------- architectures


class CWMnistNet(nn.Module):
    """The C&W MNIST CNN (``carlini/nn_robust_attacks``), NCHW input in the attack space,
    returns logits (n, 10).

    Conv(32,3x3)-ReLU-Conv(32,3x3)-ReLU-MaxPool2-Conv(64,3x3)-ReLU-Conv(64,3x3)-ReLU-MaxPool2-
    Flatten-FC200-ReLU-Dropout(.5)-FC200-ReLU-FC10, 'valid' convolutions. ``filters`` /
    ``in_channels`` / ``image_size`` give the C&W CIFAR variant (64, 64, 128, 128, 256, 256 is
    its filter list with 3 channels and 32 pixels: pass ``filters=(64, 64, 128, 128)``,
    ``hidden=256``). Weights start as Keras's defaults (Glorot-uniform, zero bias), as in the
    C&W training script.
    """

    def __init__(
        self,
        in_channels: int = 1,
        image_size: int = 28,
        filters: tuple[int, int, int, int] = (32, 32, 64, 64),
        hidden: int = 200,
        num_classes: int = 10,
    ):
        super().__init__()
        f1, f2, f3, f4 = filters
        self.conv1 = nn.Conv2d(in_channels, f1, 3)
        self.conv2 = nn.Conv2d(f1, f2, 3)
        self.conv3 = nn.Conv2d(f2, f3, 3)
        self.conv4 = nn.Conv2d(f3, f4, 3)
        side = ((image_size - 4) // 2 - 4) // 2  # two valid 3x3 convs, pool, twice
        self.fc1 = nn.Linear(f4 * side * side, hidden)
        self.dropout = nn.Dropout(0.5)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, num_classes)
        for layer in (self.conv1, self.conv2, self.conv3, self.conv4, self.fc1, self.fc2, self.fc3):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        x = F.max_pool2d(F.relu(self.conv4(F.relu(self.conv3(x)))), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        x = F.relu(self.fc2(self.dropout(x)))
        return self.fc3(x)


class KerasCifarNet(nn.Module):
    """The Keras CNN of the ``cifar-10-model`` 7.4.0 wheel, in torch (eval mode reproduces it).

    Input: NCHW raw pixel values in [0, 255] (what the Keras model was trained on). Per block:
    Conv 3x3 'valid' -> ReLU -> BatchNorm(eps 1e-3); filters 64, 64, pool 2, 128, 128, pool 2,
    64, 64 (its last 1x1 pool is the identity); Flatten in Keras's NHWC order; Dense 1024 ReLU,
    Dropout .2, Dense 512 ReLU, Dropout .2, Dense 10 **ReLU**: the logits are never negative.
    """

    FILTERS = (64, 64, 128, 128, 64, 64)
    EPS = 1e-3  # Keras BatchNormalization's default, as in the model's config

    def __init__(self):
        super().__init__()
        channels = (3, *self.FILTERS)
        self.convs = nn.ModuleList(nn.Conv2d(a, b, 3) for a, b in pairwise(channels))
        self.norms = nn.ModuleList(nn.BatchNorm2d(b, eps=self.EPS) for b in self.FILTERS)
        self.dense0 = nn.Linear(64, 1024)  # 32 -> 28 -> 14 -> 10 -> 5 -> 1: a 1x1x64 map
        self.dense1 = nn.Linear(1024, 512)
        self.dense2 = nn.Linear(512, 10)
        self.dropout = nn.Dropout(0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for index, (conv, norm) in enumerate(zip(self.convs, self.norms, strict=True)):
            x = norm(F.relu(conv(x)))
            if index in (1, 3):
                x = F.max_pool2d(x, 2)
        # Keras flattens NHWC: (h, w, c) order, which the dense kernel's rows follow.
        x = torch.flatten(x.permute(0, 2, 3, 1), 1)
        x = self.dropout(F.relu(self.dense0(x)))
        x = self.dropout(F.relu(self.dense1(x)))
        return F.relu(self.dense2(x))


ARCHITECTURES = {"cw-mnist": CWMnistNet, "keras-cifar10": KerasCifarNet}


# --------------------------------------------------------------------------- the numpy wrapper


class Victim:
    """A classifier seen as the attacks see it: attack-space images in, probabilities out.

    ``victim(x)``: ``x`` of shape (n, H, W, C) (or one image (H, W, C)), float in [-0.5, 0.5]
    -> float64 (n, C), the softmax of the module's logits computed in float64 (the objective
    (5.2) takes logs of them). Runs in eval mode under ``torch.inference_mode`` in batches of
    ``batch_size``. The input is mapped to the module's range by ``INPUT_SCALES[input_scale]``
    and permuted to NCHW. The CIFAR-10 victim's logits are ReLU'd (never negative): several
    classes can share the logit 0, but the softmax is still a probability vector (sums to 1).

    Args:
        module: a torch module, NCHW input, returning logits (n, C).
        input_shape: (H, W, C) of one image.
        input_scale: a key of :data:`INPUT_SCALES`.
        batch_size: images per forward pass (>= 1).
        device: a torch device string; ``"cpu"`` by default.
        name: a label for logs.
    """

    def __init__(
        self,
        module: nn.Module,
        input_shape: tuple[int, int, int],
        input_scale: str = "attack",
        *,
        batch_size: int = 500,
        device: str = "cpu",
        name: str = "victim",
    ):
        if input_scale not in INPUT_SCALES:
            raise ValueError(
                f"input_scale must be one of {sorted(INPUT_SCALES)}, got {input_scale!r}"
            )
        if len(tuple(input_shape)) != 3:
            raise ValueError(f"input_shape must be (H, W, C), got {input_shape!r}")
        self.input_shape = tuple(int(v) for v in input_shape)
        self.input_scale = input_scale
        self.batch_size = check_int(batch_size, "batch_size", low=1)
        self.device = torch.device(device)
        self.module = module.to(self.device).eval()
        self.name = name
        self.num_classes = int(self.logits(np.zeros((1, *self.input_shape))).shape[1])

    def _batch(self, x) -> np.ndarray:
        arr = np.asarray(x, dtype=np.float32)
        if arr.shape == self.input_shape:
            arr = arr[None]
        if arr.ndim != 4 or arr.shape[1:] != self.input_shape:
            raise ValueError(
                f"x must have shape (n, {', '.join(map(str, self.input_shape))}) (NHWC, attack "
                f"space), got {arr.shape}"
            )
        return arr

    def module_logits(self, x: torch.Tensor) -> torch.Tensor:
        """The module's logits for an attack-space NHWC tensor on ``device``, differentiable
        (the white-box reference attack uses it; the black-box attacks never do)."""
        offset, scale = INPUT_SCALES[self.input_scale]
        return self.module(((x + offset) * scale).permute(0, 3, 1, 2))

    def logits(self, x) -> np.ndarray:
        """The module's logits (n, C), float64."""
        arr = self._batch(x)
        out = []
        with torch.inference_mode():
            for start in range(0, arr.shape[0], self.batch_size):
                chunk = torch.from_numpy(arr[start : start + self.batch_size]).to(self.device)
                out.append(self.module_logits(chunk).double().cpu().numpy())
        return np.concatenate(out)

    def __call__(self, x) -> np.ndarray:
        z = self.logits(x)
        z -= z.max(axis=1, keepdims=True)  # stable softmax in float64
        p = np.exp(z)
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, x) -> np.ndarray:
        """Predicted labels (n,), int64."""
        return np.argmax(self.logits(x), axis=1).astype(np.int64)

    def accuracy(self, x, labels) -> float:
        """Fraction of ``x`` classified as ``labels``."""
        return float(np.mean(self.predict(x) == np.asarray(labels)))


# --------------------------------------------------------------------------- loading weights


def weights_dir() -> Path:
    """The folder of the shipped weights (``frontierbo/attack/weights``)."""
    return Path(str(files("frontierbo.attack") / "weights"))


def read_manifest(folder: str | os.PathLike | None = None) -> dict:
    """The weights' ``manifest.json``: {file: {sha256, bytes, made_by, accuracy, ...}}."""
    path = Path(folder or weights_dir()) / "manifest.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: the package was installed without its weights folder "
            "(package-data 'attack/weights/*'); reinstall frontierbo"
        )
    return json.loads(path.read_text())


def _shipped_weights(filename: str) -> Path:
    path = weights_dir() / filename
    entry = read_manifest().get(filename)
    if entry is None:
        raise KeyError(f"{filename!r} is not listed in {weights_dir() / 'manifest.json'}")
    if not path.is_file():
        raise FileNotFoundError(f"shipped weight file {path} is missing; reinstall frontierbo")
    try:
        verify_sha256(path, entry["sha256"])
    except ValueError as err:  # its hint (verify=False) is for data files, not shipped weights
        raise ValueError(
            f"shipped weights {filename}: sha256 mismatch against manifest.json (expected "
            f"{entry['sha256']}, got {file_sha256(path)}); reinstall frontierbo, or pass "
            "weights=<your state dict>"
        ) from err
    return path


def load_state_dict(path: str | os.PathLike) -> dict:
    """A state dict saved with ``torch.save`` (loaded with ``weights_only=True``: no code runs)."""
    state = torch.load(Path(path), map_location="cpu", weights_only=True)
    if not isinstance(state, dict):
        raise TypeError(f"{path} does not hold a state dict (got {type(state).__name__})")
    return state


def load_victim(
    name: str, weights: str | os.PathLike | None = None, *, device: str = "cpu"
) -> Victim:
    """The built-in victim ``"mnist"`` (C&W CNN) or ``"cifar10"`` (ported Keras CNN).

    Args:
        name: ``"mnist"`` or ``"cifar10"``.
        weights: a state-dict file for the same architecture; default: the shipped weights,
            whose sha256 is checked against ``attack/weights/manifest.json``.
        device: torch device for inference.

    Raises:
        ValueError: an unknown name, or a shipped file whose sha256 does not match.
        FileNotFoundError: the shipped weights or the manifest are missing.
    """
    if name not in BUILTIN_VICTIMS:
        raise ValueError(f"name must be one of {sorted(BUILTIN_VICTIMS)}, got {name!r}")
    architecture, filename, scale, shape = BUILTIN_VICTIMS[name]
    path = _shipped_weights(filename) if weights is None else Path(weights)
    module = ARCHITECTURES[architecture]()
    module.load_state_dict(load_state_dict(path))
    return Victim(module, shape, scale, device=device, name=name)


def load_torch_classifier(
    path: str | os.PathLike,
    architecture: str | None = None,
    input_scale: str | None = None,
    *,
    input_shape: tuple[int, int, int] | None = None,
    device: str = "cpu",
) -> Victim:
    """A user's own torch classifier as a :class:`Victim`.

    Two kinds of file:

    - ``architecture`` given (``"cw-mnist"`` or ``"keras-cifar10"``): ``path`` holds a state dict
      for that built-in architecture; it is loaded with ``weights_only=True`` (safe).
    - ``architecture=None``: ``path`` holds a whole ``nn.Module`` saved with ``torch.save``.
      Unpickling a module runs code from the file, so it is loaded with ``weights_only=False``,
      and only then: pass only files you trust. ``input_shape`` (H, W, C) is required; the module
      must take NCHW input and return logits.

    Args:
        input_scale: a key of :data:`INPUT_SCALES` (the module's input range); default: the
            architecture's own (``"attack"`` for a full module).
    """
    if architecture is None:
        if input_shape is None:
            raise ValueError("input_shape=(H, W, C) is required for a full-module file")
        module = torch.load(Path(path), map_location="cpu", weights_only=False)
        if not isinstance(module, nn.Module):
            raise TypeError(
                f"{path} holds a {type(module).__name__}, not an nn.Module; for a state dict pass "
                f"architecture= one of {sorted(ARCHITECTURES)}"
            )
        return Victim(module, input_shape, input_scale or "attack", device=device, name=str(path))
    if architecture not in ARCHITECTURES:
        raise ValueError(
            f"architecture must be one of {sorted(ARCHITECTURES)} or None, got {architecture!r}"
        )
    name = next(key for key, spec in BUILTIN_VICTIMS.items() if spec[0] == architecture)
    _, _, default_scale, default_shape = BUILTIN_VICTIMS[name]
    module = ARCHITECTURES[architecture]()
    module.load_state_dict(load_state_dict(path))
    return Victim(
        module,
        input_shape or default_shape,
        input_scale or default_scale,
        device=device,
        name=str(path),
    )


# --------------------------------------------------------------------------- the Keras port


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


# --------------------------------------------------------------------------- MNIST training


def _accuracy(module: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> float:
    module.eval()
    with torch.inference_mode():
        hits = sum(
            int((module(images[s : s + 1000]).argmax(1) == labels[s : s + 1000]).sum())
            for s in range(0, len(labels), 1000)
        )
    return hits / len(labels)


def _nchw(images: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(images.transpose(0, 3, 1, 2)))


def train_mnist_victim(
    out_dir: str | os.PathLike,
    seed: int = 0,
    epochs: int = 50,
    batch_size: int = 128,
    patience: int | None = None,
    progress: bool = True,
) -> dict:
    """Train :class:`CWMnistNet` with the C&W recipe and write ``mnist_cw.pt``
    (docs/decisions.md#bos-victim-training-recipe-from-the-cw-code).

    Recipe (C&W / GenAttack ``train_models.py``): SGD, lr 0.01, momentum 0.9, Nesterov, Keras
    time decay ``lr_t = 0.01 / (1 + 1e-6 t)`` with t the number of updates so far, batch 128,
    cross-entropy on the logits, dropout .5 in training. Data: the first 10,000 MNIST training
    images, reshuffled every epoch (the file is grouped by class). torch's Nesterov update equals
    Keras's for a constant lr; the decay changes lr by < 0.4 % over 50 epochs here.

    Args:
        out_dir: folder for ``mnist_cw.pt`` (a state dict).
        seed: seeds torch (initialisation, dropout) and the numpy shuffling Generator.
        epochs: most epochs (>= 1).
        batch_size: images per update (>= 1).
        patience: stop once the test accuracy has not improved for this many epochs (None: run
            all ``epochs``). This looks at the test set, so it selects on it; the weights kept
            are those of the last epoch run.
        progress: print one line per epoch.

    Returns:
        ``{path, sha256, bytes, epochs, test_accuracy, train_accuracy, seed, seconds, history}``;
        accuracies in eval mode, test on the 10,000 MNIST test images.
    """
    from frontierbo.attack.data import load_mnist

    epochs = check_int(epochs, "epochs", low=1)
    batch_size = check_int(batch_size, "batch_size", low=1)
    if patience is not None:
        patience = check_int(patience, "patience", low=1)
    rng = as_generator(seed)
    torch.manual_seed(seed)
    x_train, y_train = load_mnist("train")
    x_test, y_test = load_mnist("test")
    x_train, y_train = _nchw(x_train), torch.from_numpy(y_train)
    x_test, y_test = _nchw(x_test), torch.from_numpy(y_test)

    model = CWMnistNet()
    optimiser = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda t: 1.0 / (1.0 + 1e-6 * t))
    history, best, stale, start = [], -1.0, 0, time.perf_counter()
    for epoch in range(1, epochs + 1):
        model.train()
        order = torch.from_numpy(rng.permutation(len(y_train)))
        total = 0.0
        for s in range(0, len(order), batch_size):
            batch = order[s : s + batch_size]
            loss = F.cross_entropy(model(x_train[batch]), y_train[batch])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item() * len(batch)
        test_acc = _accuracy(model, x_test, y_test)
        history.append(
            {
                "epoch": epoch,
                "loss": total / len(order),
                "test_accuracy": test_acc,
                "seconds": time.perf_counter() - start,
            }
        )
        if progress:
            print(json.dumps(history[-1]), flush=True)
        best, stale = (test_acc, 0) if test_acc > best else (best, stale + 1)
        if patience is not None and stale >= patience:
            break

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / BUILTIN_VICTIMS["mnist"][1]
    torch.save(model.state_dict(), path)
    return {
        "path": str(path),
        "sha256": file_sha256(path),
        "bytes": path.stat().st_size,
        "epochs": len(history),
        "test_accuracy": history[-1]["test_accuracy"],
        "train_accuracy": _accuracy(model, x_train, y_train),
        "seed": seed,
        "seconds": time.perf_counter() - start,
        "history": history,
    }
