"""The architectures of the BOS² victims (thesis Section 5.3), torch modules with NCHW input.

- :class:`CWMnistNet`: the Carlini–Wagner MNIST CNN (ZOO, AutoZOOM, GenAttack, BayesOpt and BOS²
  all attack it), trained here by :func:`frontierbo.attack.training.train_mnist_victim`.
- :class:`KerasCifarNet`: the pretrained CIFAR-10 CNN of the ``cifar-10-model`` 7.4.0 wheel,
  ported by :mod:`frontierbo.attack.keras_port`. It stands in for the C&W CIFAR CNN, whose
  training set cannot be had offline.
"""

from __future__ import annotations

from itertools import pairwise

import torch
import torch.nn.functional as F
from torch import nn


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
