"""The MNIST victim's weights: :class:`~frontierbo.attack.nets.CWMnistNet` trained with the C&W
recipe (``frontierbo attack train-victim``)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from frontierbo._validation import as_generator, check_int
from frontierbo.attack.nets import CWMnistNet
from frontierbo.attack.victims import BUILTIN_VICTIMS
from frontierbo.data import file_sha256


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
    path = out / BUILTIN_VICTIMS["mnist-10k"][1]
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
