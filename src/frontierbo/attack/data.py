"""The images of the BOS² experiments (spec bos2-attack.md §5.1, §7.1), in the attack space.

Attack space: float32 NHWC images with pixel values ``x = pixel / 255 - 0.5`` in [-0.5, 0.5], the
input range of the Carlini–Wagner victims (spec §1). Both loaders return that convention.

- MNIST: the real test set (10,000 images) and the first 10,000 training images (the other
  50,000 could not be obtained offline; ``shared/data/mnist/README.md``). Found with
  :func:`frontierbo.data.resolve_data_path` (``$FRONTIERBO_DATA`` or ``../shared/data``) and
  checked against the README's sha256 before they are read.
- CIFAR-10: the 20 real test images (test indices 0–19) that the ``foolbox`` wheel ships as PNGs;
  no package ships more of CIFAR-10 (``shared/data/cifar10-README.md``).
"""

from __future__ import annotations

import os
import re

import numpy as np

from frontierbo.data import resolve_data_path, verify_sha256

#: sha256 of the MNIST files (shared/data/mnist/README.md), keyed by path below the data root.
MNIST_FILES: dict[str, tuple[str, str, str, str]] = {
    # split: (relative path, sha256, images key, labels key)
    "test": (
        "mnist/mnist_test.npz",
        "b8d30bd15bf8aec9eb69ca5b88ee72078b29f27777d7b2a2d53a588f90a19fec",
        "x_test",
        "y_test",
    ),
    "train": (
        "mnist/mnist_train_first10k.npz",
        "07a577c142018b7eb35478bcfa454563bd16edf66fffcaa6db5ffdf437ed70c3",
        "x_train",
        "y_train",
    ),
}

CIFAR10_CLASSES = (
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
)

# foolbox names its samples cifar10_{index:02d}_{label}.png; cifar100_* must not match.
_CIFAR10_SAMPLE = re.compile(r"^cifar10_(\d{2})_(\d)\.png$")


def to_attack_space(pixels) -> np.ndarray:
    """uint8 pixels (0–255) to float32 attack-space values ``pixel / 255 - 0.5``."""
    return (np.asarray(pixels, dtype=np.float32) / np.float32(255.0)) - np.float32(0.5)


def load_mnist(
    split: str = "test", path: str | os.PathLike | None = None, *, verify: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """MNIST images and labels in the attack space.

    Args:
        split: ``"test"`` (the full 10,000-image test set) or ``"train"`` (the first 10,000
            training images, **grouped by class**: shuffle before training on them).
        path: an explicit ``.npz`` path (same keys as the shared file); default: searched by
            :func:`frontierbo.data.resolve_data_path`.
        verify: check the file's sha256 against the shared README's, also for an explicit
            ``path``; pass ``verify=False`` for your own re-packed file.

    Returns:
        ``(images, labels)``: float32 ``(n, 28, 28, 1)`` in [-0.5, 0.5] and int64 ``(n,)`` in 0..9.

    Raises:
        ValueError: an unknown split, or a sha256 mismatch (the message names both hashes).
        FileNotFoundError: the file is not found (the message says where it looked).
    """
    if split not in MNIST_FILES:
        raise ValueError(f"split must be one of {sorted(MNIST_FILES)}, got {split!r}")
    relative, sha256, x_key, y_key = MNIST_FILES[split]
    file = resolve_data_path(relative, path)
    if verify:
        verify_sha256(file, sha256)
    with np.load(file) as archive:
        pixels, labels = archive[x_key], archive[y_key]
    images = to_attack_space(pixels)[..., None]
    return images, labels.astype(np.int64)


def load_cifar10_samples() -> tuple[np.ndarray, np.ndarray]:
    """The 20 real CIFAR-10 test images (indices 0–19) shipped in the ``foolbox`` wheel.

    Returns:
        ``(images, labels)``: float32 ``(20, 32, 32, 3)`` in [-0.5, 0.5] (RGB, NHWC) and int64
        ``(20,)``, in test-index order; labels index :data:`CIFAR10_CLASSES`.

    Raises:
        ImportError: foolbox or Pillow is not installed (``pip install frontierbo[attack]``).
    """
    try:
        from importlib.resources import files

        from PIL import Image

        folder = files("foolbox") / "data"
    except ModuleNotFoundError as err:  # foolbox or PIL missing
        raise ImportError(
            "load_cifar10_samples needs the packages foolbox (it ships the 20 CIFAR-10 test "
            "images) and Pillow; install the extra: pip install 'frontierbo[attack]'"
        ) from err
    found = {}
    for entry in folder.iterdir():
        match = _CIFAR10_SAMPLE.match(entry.name)
        if match:
            found[int(match.group(1))] = (entry, int(match.group(2)))
    if sorted(found) != list(range(20)):
        raise FileNotFoundError(
            f"expected the 20 files cifar10_00_*.png … cifar10_19_*.png in {folder}, found "
            f"indices {sorted(found)}; reinstall foolbox 3.3.x"
        )
    images, labels = [], []
    for index in range(20):
        entry, label = found[index]
        with entry.open("rb") as fh, Image.open(fh) as image:
            images.append(np.asarray(image.convert("RGB"), dtype=np.uint8))
        labels.append(label)
    return to_attack_space(np.stack(images)), np.asarray(labels, dtype=np.int64)
