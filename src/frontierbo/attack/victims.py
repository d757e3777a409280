"""The BOS² victims as the attacks see them, and their weights (thesis Section 5.3).

- :class:`Victim`: the numpy face of a module for the attacks: ``victim(x)`` maps attack-space
  images (n, H, W, C) in [-0.5, 0.5] to class probabilities (n, C), float64. The modules take
  torch's NCHW layout; :class:`Victim` permutes the NHWC attack space and maps it to the module's
  own input range (``INPUT_SCALES``).
- :func:`load_victim`: a built-in victim (:mod:`frontierbo.attack.nets`) with the shipped
  weights, checked against ``attack/weights/manifest.json`` (a user's own classifier:
  :func:`frontierbo.attack.user_model.load_torch_classifier`). The weights were ported by
  :mod:`frontierbo.attack.keras_port` (``mnist``, ``cifar10``) or trained by
  :mod:`frontierbo.attack.training` (``mnist-10k``).
"""

from __future__ import annotations

import json
import os
from importlib.resources import files
from pathlib import Path

import numpy as np

try:
    import torch
    from torch import nn
except ModuleNotFoundError as err:  # the module is useless without torch
    raise ImportError(
        "frontierbo.attack.victims needs PyTorch; install the extra: pip install 'frontierbo[attack]'"
    ) from err

from frontierbo._validation import check_int
from frontierbo.attack.nets import ARCHITECTURES
from frontierbo.data import file_sha256, verify_sha256

#: attack space x in [-0.5, 0.5] -> a module's input: (x + offset) * scale.
INPUT_SCALES: dict[str, tuple[float, float]] = {
    "attack": (0.0, 1.0),  # [-0.5, 0.5] as is (the C&W models)
    "unit": (0.5, 1.0),  # [0, 1]
    "byte": (0.5, 255.0),  # [0, 255] (the Keras CIFAR-10 model: raw pixel values)
}

#: name -> (architecture, weight file in attack/weights/, input scale, input shape HWC).
#: ``mnist``: the C&W CNN with the weights the BayesOpt attack's and AutoZOOM's code ship
#: (99.41 %); ``mnist-10k``: the same CNN trained here on 10 000 images (98.35 %);
#: ``cifar10``: the ported Keras CNN (``attack/weights/manifest.json`` says how each was made).
BUILTIN_VICTIMS = {
    "mnist": ("cw-mnist", "mnist_cw_authors.pt", "attack", (28, 28, 1)),
    "mnist-10k": ("cw-mnist", "mnist_cw.pt", "attack", (28, 28, 1)),
    "cifar10": ("keras-cifar10", "cifar10_keras.pt", "byte", (32, 32, 3)),
}
#: victim name -> the dataset whose images it classifies.
VICTIM_DATASET = {"mnist": "mnist", "mnist-10k": "mnist", "cifar10": "cifar10"}


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
    """A built-in victim: ``"mnist"`` (the C&W CNN, its authors' weights), ``"mnist-10k"``
    (the C&W CNN trained here on 10 000 images) or ``"cifar10"`` (ported Keras CNN).

    Args:
        name: a key of :data:`BUILTIN_VICTIMS`.
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
