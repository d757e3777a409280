"""The images of the BOS² experiments (thesis Section 5.3;
docs/decisions.md#bos-offline-images-and-victims), in the attack space.

Attack space: float32 NHWC images with pixel values ``x = pixel / 255 - 0.5`` in [-0.5, 0.5], the
input range of the Carlini–Wagner victims. Both loaders return that convention.

- MNIST: the real test set (10,000 images) and the first 10,000 training images (the other
  50,000 could not be obtained offline; ``shared/data/mnist/README.md``). Found with
  :func:`frontierbo.data.resolve_data_path` (``$FRONTIERBO_DATA``, ``../shared/data`` or the
  user cache) and checked against the README's sha256 before they are read. The test set is
  ``mnist/mnist_test.npz``, or else the original IDX files that ``frontierbo data fetch
  mnist-idx`` downloads.
- MNIST samples: the 20 real MNIST test images (indices 0–19, byte-identical to the test set's)
  that the ``foolbox`` wheel ships, :func:`load_mnist_samples`; the BOS² reproduction's
  substitute when the test set is absent.
- CIFAR-10: the 20 real test images (test indices 0–19) that the ``foolbox`` wheel ships as PNGs;
  no package ships more of CIFAR-10 (``shared/data/cifar10-README.md``).
"""

from __future__ import annotations

import gzip
import os
import re

import numpy as np

from frontierbo.data import KNOWN_SHA256, data_available, resolve_data_path, verify_sha256

#: The MNIST files, their sha256 from the dataset registry (``frontierbo data list``).
MNIST_FILES: dict[str, tuple[str, str, str, str]] = {
    # split: (relative path, sha256, images key, labels key)
    "test": (
        "mnist/mnist_test.npz",
        KNOWN_SHA256["mnist/mnist_test.npz"],
        "x_test",
        "y_test",
    ),
    "train": (
        "mnist/mnist_train_first10k.npz",
        KNOWN_SHA256["mnist/mnist_train_first10k.npz"],
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

#: The original IDX files of the test set (``frontierbo data fetch mnist-idx``): the fallback of
#: ``load_mnist("test")`` when ``mnist/mnist_test.npz`` is absent; (path, sha256, header bytes).
MNIST_TEST_IDX = (
    (
        "mnist/t10k-images-idx3-ubyte.gz",
        KNOWN_SHA256["mnist/t10k-images-idx3-ubyte.gz"],
        16,
    ),
    (
        "mnist/t10k-labels-idx1-ubyte.gz",
        KNOWN_SHA256["mnist/t10k-labels-idx1-ubyte.gz"],
        8,
    ),
)

# foolbox names its samples <dataset>_{index:02d}_{label}.png; cifar100_* must not match cifar10.
_FOOLBOX_SAMPLE = r"^{}_(\d{{2}})_(\d)\.png$"


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

    Without ``path``, the test split falls back to the original IDX files
    (:data:`MNIST_TEST_IDX`, ``frontierbo data fetch mnist-idx``) when the ``.npz`` is absent;
    they hold the same arrays.

    Raises:
        ValueError: an unknown split, or a sha256 mismatch (the message names both hashes).
        FileNotFoundError: the file is not found (the message says where it looked).
    """
    if split not in MNIST_FILES:
        raise ValueError(f"split must be one of {sorted(MNIST_FILES)}, got {split!r}")
    relative, sha256, x_key, y_key = MNIST_FILES[split]
    npz_absent = split == "test" and path is None and not data_available(relative)
    if npz_absent and all(data_available(rel) for rel, _, _ in MNIST_TEST_IDX):
        return _load_mnist_test_idx(verify)
    file = resolve_data_path(relative, path)
    if verify:
        verify_sha256(file, sha256)
    with np.load(file) as archive:
        pixels, labels = archive[x_key], archive[y_key]
    images = to_attack_space(pixels)[..., None]
    return images, labels.astype(np.int64)


def _load_mnist_test_idx(verify: bool) -> tuple[np.ndarray, np.ndarray]:
    """The test set from the IDX files: gzip, a big-endian header, then raw uint8."""
    arrays = []
    for relative, sha256, header in MNIST_TEST_IDX:
        file = resolve_data_path(relative)
        if verify:
            verify_sha256(file, sha256)
        with gzip.open(file, "rb") as fh:
            arrays.append(np.frombuffer(fh.read(), dtype=np.uint8, offset=header))
    pixels, labels = arrays
    images = to_attack_space(pixels.reshape(-1, 28, 28))[..., None]
    return images, labels.astype(np.int64)


def _foolbox_samples(dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """The 20 ``<dataset>_NN_<label>.png`` samples of the foolbox wheel, in index order, as
    uint8 arrays and int64 labels."""
    try:
        from importlib.resources import files

        from PIL import Image

        folder = files("foolbox") / "data"
    except ModuleNotFoundError as err:  # foolbox or PIL missing
        raise ImportError(
            f"the {dataset} samples need the packages foolbox (it ships 20 real {dataset} test "
            "images) and Pillow; install the extra: pip install 'frontierbo[attack]'"
        ) from err
    pattern = re.compile(_FOOLBOX_SAMPLE.format(dataset))
    found = {}
    for entry in folder.iterdir():
        match = pattern.match(entry.name)
        if match:
            found[int(match.group(1))] = (entry, int(match.group(2)))
    if sorted(found) != list(range(20)):
        raise FileNotFoundError(
            f"expected the 20 files {dataset}_00_*.png … {dataset}_19_*.png in {folder}, found "
            f"indices {sorted(found)}; reinstall foolbox 3.3.x"
        )
    images, labels = [], []
    mode = "L" if dataset == "mnist" else "RGB"
    for index in range(20):
        entry, label = found[index]
        with entry.open("rb") as fh, Image.open(fh) as image:
            images.append(np.asarray(image.convert(mode), dtype=np.uint8))
        labels.append(label)
    return np.stack(images), np.asarray(labels, dtype=np.int64)


def load_mnist_samples() -> tuple[np.ndarray, np.ndarray]:
    """The 20 real MNIST test images (indices 0–19) shipped in the ``foolbox`` wheel.

    They are byte-identical to the first 20 images of the test set (checked against
    ``mnist/mnist_test.npz``), so test index ``i`` names the same image in both.

    Returns:
        ``(images, labels)``: float32 ``(20, 28, 28, 1)`` in [-0.5, 0.5] and int64 ``(20,)``.

    Raises:
        ImportError: foolbox or Pillow is not installed (``pip install frontierbo[attack]``).
    """
    pixels, labels = _foolbox_samples("mnist")
    return to_attack_space(pixels)[..., None], labels


def load_cifar10_samples() -> tuple[np.ndarray, np.ndarray]:
    """The 20 real CIFAR-10 test images (indices 0–19) shipped in the ``foolbox`` wheel.

    Returns:
        ``(images, labels)``: float32 ``(20, 32, 32, 3)`` in [-0.5, 0.5] (RGB, NHWC) and int64
        ``(20,)``, in test-index order; labels index :data:`CIFAR10_CLASSES`.

    Raises:
        ImportError: foolbox or Pillow is not installed (``pip install frontierbo[attack]``).
    """
    pixels, labels = _foolbox_samples("cifar10")
    return to_attack_space(pixels), labels
