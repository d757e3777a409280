"""The BOS² image loaders: MNIST from shared/data, the 20 CIFAR-10 images of the foolbox wheel."""

import shutil
import sys

import numpy as np
import pytest

from frontierbo.attack import data as attack_data
from frontierbo.attack.data import load_cifar10_samples, load_mnist, load_mnist_samples
from frontierbo.attack.experiment import CHANNELS
from frontierbo.data import data_available, resolve_data_path

needs_mnist = pytest.mark.skipif(
    not (
        data_available("mnist/mnist_test.npz") and data_available("mnist/mnist_train_first10k.npz")
    ),
    reason="shared MNIST files not found (set FRONTIERBO_DATA; frontierbo data fetch mnist-idx)",
)

# class counts from shared/data/mnist/README.md
TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
TRAIN_COUNTS = [1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978]
# labels in the foolbox file names = CIFAR-10 test labels 0..19
CIFAR_LABELS = [3, 8, 8, 0, 6, 6, 1, 6, 3, 1, 0, 9, 5, 7, 9, 8, 5, 7, 8, 6]


@needs_mnist
@pytest.mark.parametrize(("split", "counts"), [("test", TEST_COUNTS), ("train", TRAIN_COUNTS)])
def test_mnist_shapes_range_and_class_counts(split, counts):
    images, labels = load_mnist(split)
    assert images.shape == (10_000, 28, 28, 1) and images.dtype == np.float32
    assert images.shape[-1] == CHANNELS["mnist"]
    assert labels.shape == (10_000,) and labels.dtype == np.int64
    # black and white pixels both occur, so the range is exactly [-0.5, 0.5]
    assert images.min() == -0.5 and images.max() == 0.5
    assert np.bincount(labels, minlength=10).tolist() == counts


@needs_mnist
def test_mnist_pixel_convention_is_pixel_over_255_minus_half():
    images, _ = load_mnist("test")
    with np.load(resolve_data_path("mnist/mnist_test.npz")) as raw:
        pixels = raw["x_test"]
    np.testing.assert_allclose(images[..., 0], pixels / 255.0 - 0.5, atol=1e-7)


@needs_mnist
def test_mnist_train_file_is_grouped_by_class():
    # the reason training must shuffle
    _, labels = load_mnist("train")
    assert np.all(np.diff(labels) >= 0)


@needs_mnist
def test_mnist_checksum_mismatch_is_a_clear_error(tmp_path):
    copy = tmp_path / "mnist_test.npz"
    shutil.copyfile(resolve_data_path("mnist/mnist_test.npz"), copy)
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="sha256 mismatch"):
        load_mnist("test", path=copy)


def test_mnist_bad_split_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match="split must be one of"):
        load_mnist("validation")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_mnist("test", path=tmp_path / "nothing.npz")


def test_cifar10_samples_are_the_20_labelled_test_images():
    pytest.importorskip("foolbox")
    pytest.importorskip("PIL")
    images, labels = load_cifar10_samples()
    assert images.shape == (20, 32, 32, 3) and images.dtype == np.float32
    assert images.shape[-1] == CHANNELS["cifar10"]
    assert labels.dtype == np.int64 and labels.tolist() == CIFAR_LABELS
    assert images.min() >= -0.5 and images.max() <= 0.5
    # every value is k/255 - 0.5 for an integer k (8-bit PNGs, no resampling)
    k = (images.astype(np.float64) + 0.5) * 255.0
    np.testing.assert_allclose(k, np.round(k), atol=1e-4)
    # real photos: colour, not grey
    assert np.abs(images[..., 0] - images[..., 2]).mean() > 0.01


def test_cifar10_samples_without_foolbox_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "foolbox", None)  # makes `import foolbox` fail
    with pytest.raises(ImportError, match=r"frontierbo\[attack\]"):
        load_cifar10_samples()


@pytest.mark.data("mnist/mnist_test.npz")
def test_mnist_samples_of_foolbox_are_the_first_20_test_images():
    pytest.importorskip("foolbox")
    images, labels = load_mnist_samples()
    assert images.shape == (20, 28, 28, 1) and images.dtype == np.float32
    test_images, test_labels = load_mnist("test")
    np.testing.assert_array_equal(images, test_images[:20])
    np.testing.assert_array_equal(labels, test_labels[:20])


@pytest.mark.data(*(relative for relative, _, _ in attack_data.MNIST_TEST_IDX))
@pytest.mark.data("mnist/mnist_test.npz")
def test_mnist_test_split_reads_the_idx_files_without_the_npz(monkeypatch):
    expected = load_mnist("test")
    real = attack_data.data_available
    monkeypatch.setattr(
        attack_data, "data_available", lambda rel: rel != "mnist/mnist_test.npz" and real(rel)
    )
    images, labels = load_mnist("test")
    np.testing.assert_array_equal(images, expected[0])
    np.testing.assert_array_equal(labels, expected[1])
