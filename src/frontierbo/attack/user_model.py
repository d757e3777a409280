"""A user's own torch classifier for ``frontierbo attack``, as a
:class:`~frontierbo.attack.victims.Victim`.

``--model`` is one of four forms, told apart by the file itself; the other flags only say what
the file cannot:

1. **TorchScript** (``torch.jit.save(torch.jit.script(model), "m.pt")`` or ``torch.jit.trace``):
   the file carries its own code and is read with ``torch.jit.load``; no other flag. The
   safest form: no Python code of the file runs.
2. **A state dict of a built-in architecture** (``torch.save(model.state_dict(), "m.pt")``) with
   ``--architecture cw-mnist|keras-cifar10``; read with ``weights_only=True`` (no code runs).
3. **A state dict of your own class** with ``--model-module net.py --model-class MyCNN``: the
   file ``net.py`` is imported (its code runs), ``MyCNN()`` is built without arguments and gets
   the weights (read with ``weights_only=True``).
4. **A whole module** (``torch.save(model, "m.pt")``): unpickling runs code the file names, so it
   is read with ``weights_only=False``, and only then: trusted files only. Every class it names
   must be importable: torch's own (``nn.Sequential``), an installed package's, or one defined in
   the file given with ``--model-module``; a class of the training script itself (pickled as
   ``__main__.MyCNN``) and one of ``net.py`` (pickled as ``net.MyCNN``) are looked up there.

Importing ``--model-module`` runs the file: a training script should keep its training under
``if __name__ == "__main__":``. Every failure is one ``ValueError`` / ``FileNotFoundError`` line
naming the flag and the form expected.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pickle
import re
import sys
import types
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path

try:
    import torch
    from torch import nn
except ModuleNotFoundError as err:  # the module is useless without torch
    raise ImportError(
        "frontierbo attack needs PyTorch for a model file; install the extra: "
        "pip install 'frontierbo[attack]'"
    ) from err

from frontierbo.attack.nets import ARCHITECTURES
from frontierbo.attack.victims import BUILTIN_VICTIMS, INPUT_SCALES, Victim

__all__ = ["FORMS", "load_torch_classifier", "model_form"]

#: The forms of ``--model``, for messages.
FORMS = (
    "TorchScript (torch.jit.save), a state dict with --architecture or with --model-module "
    "and --model-class, or a whole module saved with torch.save (docs/bos2-attack.md, "
    '"Attack your own model")'
)


def load_torch_classifier(
    path: str | os.PathLike,
    architecture: str | None = None,
    input_scale: str | None = None,
    *,
    model_module: str | os.PathLike | None = None,
    model_class: str | None = None,
    input_shape: tuple[int, int, int] | None = None,
    device: str = "cpu",
) -> Victim:
    """``path`` (any of the module doc's forms) as a :class:`Victim`.

    Args:
        architecture: a key of :data:`~frontierbo.attack.nets.ARCHITECTURES`: ``path`` is a
            state dict of that built-in net.
        input_scale: a key of :data:`~frontierbo.attack.victims.INPUT_SCALES`, the range the
            module expects; default: the architecture's own, else ``"attack"`` ([-0.5, 0.5]).
        model_module: a Python file defining the model's class (it is imported: its code runs).
        model_class: with ``model_module``: ``path`` is a state dict of this class, built as
            ``model_class()``.
        input_shape: (H, W, C) of one image; required unless ``architecture`` is given.
        device: torch device for inference.

    Raises:
        FileNotFoundError: ``path`` or ``model_module`` does not exist.
        ValueError: anything else, in one line naming the flag and the form expected.
    """
    path = _existing(path, "--model")
    if architecture is not None and architecture not in ARCHITECTURES:
        raise ValueError(
            f"--architecture must be one of {', '.join(ARCHITECTURES)}, got {architecture!r}"
        )
    if input_scale is not None and input_scale not in INPUT_SCALES:
        raise ValueError(
            f"--input-scale must be one of {', '.join(INPUT_SCALES)}, got {input_scale!r}"
        )
    if model_class is not None and model_module is None:
        raise ValueError(
            f"--model-class {model_class} needs --model-module FILE.py, the file that defines it"
        )
    if architecture is not None and model_module is not None:
        raise ValueError(
            "give --architecture (a built-in net) or --model-module (your own class), not both"
        )
    form, state = model_form(path)
    if form == "torchscript":
        _refuse_for(path, "is TorchScript, which carries its own code",
                    architecture=architecture, model_module=model_module)  # fmt: skip
        with warnings.catch_warnings():  # torch 2.9+ deprecates TorchScript; it still loads
            warnings.filterwarnings("ignore", "`torch.jit.load` is deprecated", DeprecationWarning)
            module = torch.jit.load(str(path), map_location="cpu")
    elif form == "state-dict" and architecture is not None:
        module = _with_state(ARCHITECTURES[architecture](), state, path,
                             f"--architecture {architecture}")  # fmt: skip
    elif form == "state-dict":
        if model_class is None and model_module is not None:
            raise ValueError(
                f"--model {path} is a state dict: name its class in --model-module "
                f"{model_module} with --model-class NAME"
            )
        if model_class is None:
            raise ValueError(
                f"--model {path} is a state dict: name its class with --architecture "
                f"({' or '.join(ARCHITECTURES)}, the built-in nets) or with --model-module "
                "FILE.py --model-class NAME (your own); or save the model as TorchScript"
            )
        cls = _user_class(_import_file(model_module), model_class, model_module)
        module = _with_state(_instantiate(cls, model_class), state, path,
                             f"--model-class {model_class}")  # fmt: skip
    else:
        _refuse_for(path, "holds a whole pickled module", architecture=architecture,
                    model_class=model_class)  # fmt: skip
        module = _unpickle(path, None if model_module is None else _import_file(model_module),
                           model_module)  # fmt: skip
    if architecture is not None:
        spec = next(spec for spec in BUILTIN_VICTIMS.values() if spec[0] == architecture)
        scale, shape = input_scale or spec[2], input_shape or spec[3]
    elif input_shape is None:
        raise ValueError("input_shape=(H, W, C) is required for a model that is not built in")
    else:
        scale, shape = input_scale or "attack", input_shape
    return _victim(module, tuple(shape), scale, device, path)


def model_form(path: str | os.PathLike) -> tuple[str, dict | None]:
    """Which form ``path`` holds: ``("torchscript", None)``, ``("state-dict", state)`` or
    ``("pickled", None)`` (a whole module, not unpickled yet). Reads nothing with
    ``weights_only=False``, so it runs no code of the file."""
    path = _existing(path, "--model")
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = {name.rsplit("/", 1)[-1] for name in archive.namelist()}
        if "constants.pkl" in names:  # what torch.load itself checks for TorchScript
            return "torchscript", None
        # the globals (classes, functions) a torch.save zip names beyond tensors and containers,
        # read without unpickling (torch >= 2.5)
        unsafe = getattr(torch.serialization, "get_unsafe_globals_in_checkpoint", None)
        if "data.pkl" in names and unsafe is not None and unsafe(str(path)):
            return "pickled", None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        if "GLOBAL" in str(exc):  # weights_only refused a global it names: a whole object
            return "pickled", None
        raise _not_torch(path, "not a pickle torch reads") from None
    except Exception as exc:  # noqa: BLE001 - any reader failure means: not a torch file we read
        raise _not_torch(path, _one_line(exc)) from None
    if (
        isinstance(state, Mapping)
        and state
        and all(isinstance(value, torch.Tensor) for value in state.values())
    ):
        return "state-dict", dict(state)
    if isinstance(state, Mapping):
        keys = ", ".join(map(str, list(state)[:5])) + (", ..." if len(state) > 5 else "")
        raise ValueError(
            f"--model {path} holds a dict that is not a state dict (keys: {keys or 'none'}; a "
            "state dict maps parameter names to tensors): save model.state_dict(), e.g. a "
            f"checkpoint's model entry; expected {FORMS}"
        )
    raise ValueError(
        f"--model {path} holds a {type(state).__name__}, not a model; expected {FORMS}"
    )


# --------------------------------------------------------------------------- pieces


def _not_torch(path: Path, why: str) -> ValueError:
    hint = "; the .py file goes to --model-module" if path.suffix == ".py" else ""
    return ValueError(
        f"--model {path} is not a torch file this command reads ({why}){hint}; expected {FORMS}"
    )


def _existing(path, flag: str) -> Path:
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"{flag} must be a file path, got {path!r}")
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{flag}: {path} is a directory, not a file")
    if not path.is_file():
        raise FileNotFoundError(f"{flag}: no such file: {path}")
    return path


def _one_line(exc: BaseException, limit: int = 160) -> str:
    """``exc`` as ``Type: message`` on one line, at most ``limit`` characters."""
    text = " ".join(str(exc).split()) or "(no message)"
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return f"{type(exc).__name__}: {text}"


def _refuse_for(path: Path, what: str, **given) -> None:
    """One error for the first flag in ``given`` that does not apply to this form."""
    for name, value in given.items():
        if value is not None:
            flag = "--" + name.replace("_", "-")
            raise ValueError(f"--model {path} {what}: {flag} does not apply to it; drop {flag}")


def _import_file(path) -> types.ModuleType:
    """The Python file ``path`` imported as a fresh module (its folder on ``sys.path`` meanwhile,
    for its own imports)."""
    path = _existing(path, "--model-module")
    if path.suffix != ".py":
        raise ValueError(f"--model-module must be a Python file (.py), got {path}")
    # a private name: a file called torch.py must not replace torch, and a later load must not
    # find this one by its file name (pickles naming it are mapped by _defined_in instead)
    name = "_frontierbo_model_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pickle and dataclasses look classes up there
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's code: report, don't crash
        del sys.modules[name]
        raise ValueError(
            f"--model-module {path}: importing it failed ({_one_line(exc)}); it must define the "
            'model class, with any training under `if __name__ == "__main__":`'
        ) from None
    finally:
        sys.path.remove(folder)
    module.__frontierbo_stem__ = path.stem
    return module


def _user_class(module: types.ModuleType, name: str, source) -> type:
    cls = getattr(module, name, None)
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        found = sorted(
            key for key, value in vars(module).items()
            if isinstance(value, type) and issubclass(value, nn.Module)
            and value.__module__ == module.__name__
        )  # fmt: skip
        raise ValueError(
            f"--model-class {name}: {source} defines no nn.Module class {name} (its own: "
            f"{', '.join(found) or 'none'})"
        )
    return cls


def _instantiate(cls: type, name: str) -> nn.Module:
    try:
        return cls()
    except Exception as exc:  # noqa: BLE001 - the user's constructor
        raise ValueError(
            f"--model-class {name}: {name}() failed ({_one_line(exc)}); the class must be "
            "buildable without arguments, or save the model as TorchScript"
        ) from None


def _with_state(module: nn.Module, state: dict, path: Path, what: str) -> nn.Module:
    """``module`` with the weights of ``state``; a mismatch is one line naming the keys."""
    try:
        result = module.load_state_dict(state, strict=False)
    except RuntimeError as exc:  # shapes that differ
        raise ValueError(f"--model {path} does not fit {what}: {_one_line(exc)}") from None
    problems = [
        f"{label} {', '.join(keys[:4])}{', ...' if len(keys) > 4 else ''} ({len(keys)})"
        for label, keys in (
            ("missing", result.missing_keys),
            ("unexpected", result.unexpected_keys),
        )
        if keys
    ]
    if problems:
        raise ValueError(f"--model {path} does not fit {what}: {'; '.join(problems)}")
    return module


def _defined_in(module: types.ModuleType | None, mod_name: str) -> bool:
    """Whether a pickled class's module name points at ``--model-module``: the training script
    (``__main__``) or the file's own name, bare or in a package."""
    if module is None:
        return False
    stem = module.__frontierbo_stem__
    return mod_name in ("__main__", stem) or mod_name.endswith("." + stem)


class _Unresolved(ValueError):
    """A class a pickled module names that cannot be found (one line: how to make it so)."""


def _resolve(mod_name: str, name: str, module: types.ModuleType | None, path: Path, source,
             find):  # fmt: skip
    """The class a pickle names: from ``--model-module`` when it points there, else by
    ``find`` (pickle's own lookup); or one error saying how to make it importable."""
    if _defined_in(module, mod_name) and hasattr(module, name):
        return getattr(module, name)
    where = f"--model {path} holds a whole module whose class {mod_name}.{name}"
    if module is not None and _defined_in(module, mod_name):
        raise _Unresolved(f"{where} is not defined in --model-module {source}")
    try:
        return find(mod_name, name)
    except (ModuleNotFoundError, AttributeError) as exc:
        if mod_name == "__main__":
            raise _Unresolved(
                f"{where} was defined in the training script: give that file with "
                "--model-module (it is imported: keep its training under `if __name__ == "
                '"__main__":`), or save TorchScript or a state dict instead'
            ) from None
        if isinstance(exc, AttributeError):
            raise _Unresolved(f"{where}: module {mod_name} has no {name}") from None
        raise _Unresolved(
            f"{where} needs the module {exc.name!r}, which is not importable: give the file that "
            f"defines {name} with --model-module, or add its folder to PYTHONPATH"
        ) from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed to import
        raise _Unresolved(f"{where}: importing {mod_name} failed ({_one_line(exc)})") from None


def _unpickle(path: Path, module: types.ModuleType | None, source) -> nn.Module:
    """A whole pickled module, read with ``weights_only=False`` (runs code: trusted files only),
    its classes looked up through :func:`_resolve`."""

    class Unpickler(pickle.Unpickler):
        def find_class(self, mod_name, name):
            find = super().find_class
            return _resolve(mod_name, name, module, path, source, find)

    mapping = types.ModuleType("frontierbo_model_pickle")
    mapping.Unpickler, mapping.load, mapping.__name__ = Unpickler, pickle.load, "pickle"
    try:
        model = torch.load(path, map_location="cpu", weights_only=False, pickle_module=mapping)
    except _Unresolved:
        raise
    except Exception as exc:  # noqa: BLE001 - the file's own code
        raise ValueError(f"--model {path}: unpickling failed ({_one_line(exc)})") from None
    if not isinstance(model, nn.Module):
        raise ValueError(
            f"--model {path} holds a {type(model).__name__}, not an nn.Module; expected {FORMS}"
        )
    return model


def _victim(module: nn.Module, shape: tuple, scale: str, device: str, path: Path) -> Victim:
    """The :class:`Victim`, its first forward pass (one zero image) turned into one line."""
    h, w, c = shape
    try:
        victim = Victim(module, shape, scale, device=device, name=str(path))
    except Exception as exc:  # noqa: BLE001 - the user's forward
        raise ValueError(
            f"--model {path} failed on one image of shape (1, {c}, {h}, {w}) (NCHW, the "
            f"--images' size, --input-scale {scale}): {_one_line(exc)}; the model must take "
            "NCHW images and return logits (n, classes)"
        ) from None
    if victim.num_classes < 2:
        raise ValueError(
            f"--model {path} returns {victim.num_classes} score per image; a classifier must "
            "return logits (n, classes) with at least 2 classes"
        )
    return victim
