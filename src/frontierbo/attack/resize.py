"""The latent space of BOS² (eq. (5.3) of the thesis): bilinear resizing with
``align_corners=True`` between an ``s x s x c`` latent field and the ``H x W x c`` image.

``torch.nn.functional.interpolate(mode="bilinear", align_corners=True)`` on each channel, in
NumPy: output pixel ``i`` of ``n_out`` reads input position ``i (n_in - 1) / (n_out - 1)`` and
interpolates linearly between its two neighbours. Each axis is one ``(n_out, n_in)`` matrix of
convex weights, so ``Up(z) = A_H z A_W^T`` per channel: it keeps ``[-1, 1]`` bounds, maps a constant
to the same constant, reproduces affine functions of the grid coordinates exactly and never mixes
channels. ``Down`` (Alg. 7 line 2, BayesOpt's ``downsample_projection``) is the same map to the
smaller size (plain bilinear sampling, no anti-aliasing, as ``interpolate`` does).

Arrays are ``(height, width, channels)``.
"""

from __future__ import annotations

import numpy as np

from frontierbo._validation import check_int

#: Latent side lengths of the thesis (Section 5.3): d = s^2 c for s in SIDES; d_init uses
#: INIT_SIDES.
SIDES = (6, 8, 10, 12, 14, 16, 18)
INIT_SIDES = (6, 14, 18)


def latent_dimensions(channels: int, sides=SIDES) -> tuple[int, ...]:
    """``d = s^2 c`` for each side ``s`` (MNIST c = 1: 36..324; CIFAR-10 c = 3: 108..972)."""
    channels = check_int(channels, "channels", low=1)
    return tuple(s * s * channels for s in sides)


def side_of(d: int, channels: int) -> int:
    """The side ``s`` of a latent dimension ``d = s^2 c``."""
    d, channels = check_int(d, "d", low=1), check_int(channels, "channels", low=1)
    s = int(round((d / channels) ** 0.5))
    if s * s * channels != d:
        raise ValueError(
            f"d must be s^2 * channels for an integer s, got d={d}, channels={channels}"
        )
    return s


def interpolation_matrix(n_in: int, n_out: int) -> np.ndarray:
    """``(n_out, n_in)`` weights of 1-D linear interpolation with aligned corners."""
    n_in, n_out = check_int(n_in, "n_in", low=1), check_int(n_out, "n_out", low=1)
    A = np.zeros((n_out, n_in))
    if n_in == 1 or n_out == 1:
        A[:, 0] = 1.0
        return A
    pos = np.arange(n_out) * (n_in - 1) / (n_out - 1)
    left = np.minimum(np.floor(pos).astype(int), n_in - 2)
    frac = pos - left
    A[np.arange(n_out), left] = 1.0 - frac
    A[np.arange(n_out), left + 1] += frac
    return A


def resize(field, height: int, width: int) -> np.ndarray:
    """``field`` (h, w, c) bilinearly resized to (height, width, c), channel by channel."""
    field = np.asarray(field, dtype=float)
    if field.ndim != 3:
        raise ValueError(f"field must have shape (height, width, channels), got {field.shape}")
    A_h = interpolation_matrix(field.shape[0], height)
    A_w = interpolation_matrix(field.shape[1], width)
    return np.einsum("hi,ijc,wj->hwc", A_h, field, A_w, optimize=True)


def upsample(z, shape: tuple[int, int, int]) -> np.ndarray:
    """``Up``: a flat or (s, s, c) latent vector to the image ``shape`` (H, W, c)."""
    height, width, channels = shape
    z = np.asarray(z, dtype=float)
    if z.ndim == 1:
        s = side_of(z.size, channels)
        z = z.reshape(s, s, channels)
    if z.ndim != 3 or z.shape[2] != channels:
        raise ValueError(f"z must be flat or (s, s, {channels}), got shape {z.shape}")
    return resize(z, height, width)


def downsample(u, side: int) -> np.ndarray:
    """``Down``: an image-shaped perturbation (H, W, c) to the latent (side, side, c)."""
    side = check_int(side, "side", low=1)
    return resize(u, side, side)


def downsample_many(U, side: int) -> np.ndarray:
    """``Down`` of a stack of perturbations (n, H, W, c), flattened: shape (n, side^2 c), in the
    (s, s, c) order that :func:`upsample` reads a flat latent vector in."""
    U = np.asarray(U, dtype=float)
    if U.ndim != 4:
        raise ValueError(f"U must have shape (n, height, width, channels), got {U.shape}")
    side = check_int(side, "side", low=1)
    A_h = interpolation_matrix(U.shape[1], side)
    A_w = interpolation_matrix(U.shape[2], side)
    return np.einsum("hi,nijc,wj->nhwc", A_h, U, A_w, optimize=True).reshape(U.shape[0], -1)
