"""Bilinear resizing of the BOS² latent space (eq. (5.3) of the thesis)."""

from __future__ import annotations

import numpy as np
import pytest

from frontierbo.attack.resize import (
    INIT_SIDES,
    downsample,
    interpolation_matrix,
    latent_dimensions,
    side_of,
    upsample,
)


def test_dimension_lists_of_the_thesis():
    assert latent_dimensions(1) == (36, 64, 100, 144, 196, 256, 324)
    assert latent_dimensions(3) == (108, 192, 300, 432, 588, 768, 972)
    assert latent_dimensions(1, INIT_SIDES) == (36, 196, 324)
    assert latent_dimensions(3, INIT_SIDES) == (108, 588, 972)
    assert side_of(588, 3) == 14
    with pytest.raises(ValueError, match="s\\^2 \\* channels"):
        side_of(100, 3)


def test_interpolation_weights_by_hand():
    # 3 -> 5 with aligned corners: positions 0, 0.5, 1, 1.5, 2
    expected = [[1, 0, 0], [0.5, 0.5, 0], [0, 1, 0], [0, 0.5, 0.5], [0, 0, 1]]
    np.testing.assert_allclose(interpolation_matrix(3, 5), expected)
    A = interpolation_matrix(6, 28)
    assert np.all(A >= 0) and np.allclose(A.sum(axis=1), 1.0)


@pytest.mark.parametrize("latent, image", [((6, 6, 1), (28, 28, 1)), ((18, 18, 3), (32, 32, 3))])
def test_upsampling_shapes_bounds_constants_and_channels(latent, image):
    rng = np.random.default_rng(0)
    z = rng.uniform(-1, 1, size=latent)
    u = upsample(z.reshape(-1), image)
    assert u.shape == image
    assert u.min() >= z.min() - 1e-12 and u.max() <= z.max() + 1e-12
    np.testing.assert_allclose(upsample(np.full(latent, 0.37), image), 0.37)
    if latent[2] > 1:
        only_green = np.zeros(latent)
        only_green[..., 1] = z[..., 1]
        out = upsample(only_green, image)
        assert np.all(out[..., 0] == 0) and np.all(out[..., 2] == 0)


def test_affine_fields_are_reproduced_exactly_both_ways():
    s, H = 6, 28
    grid = lambda n: np.arange(n) / (n - 1)  # noqa: E731
    affine = lambda n: (0.2 + 0.5 * grid(n)[:, None] - 0.3 * grid(n)[None, :])[..., None]  # noqa: E731
    np.testing.assert_allclose(upsample(affine(s), (H, H, 1)), affine(H), atol=1e-12)
    np.testing.assert_allclose(downsample(affine(H), s), affine(s), atol=1e-12)


def test_matches_torch_interpolate_when_torch_is_installed():
    torch = pytest.importorskip("torch")
    z = np.random.default_rng(1).uniform(-1, 1, size=(14, 14, 3))
    ref = (
        torch.nn.functional.interpolate(
            torch.tensor(z.transpose(2, 0, 1)[None]),
            size=(32, 32),
            mode="bilinear",
            align_corners=True,
        )[0]
        .numpy()
        .transpose(1, 2, 0)
    )
    np.testing.assert_allclose(upsample(z, (32, 32, 3)), ref, atol=1e-12)
