"""``frontierbo study optimize --command "python train.py --lr {lr}"``: a shell command as the
objective of a study.

The template is split into words once, like a shell would (``shlex``), and each word is filled
from the trial (``str.format``): ``{name}`` is a parameter (or a feature of a study of rows),
``{trial}`` the trial number, ``{row}`` the candidate row. The command then runs without a
shell, so a value can never become shell syntax (for pipes or variables run ``bash -c '...'``).
Its value is the last number it prints on standard output, or the last match of
``value_regex`` (its first group if it has one). A non-zero exit status, a timeout or no
number fails the trial (:class:`CommandFailed`, caught by ``Study.optimize``); a Ctrl-C kills
the running commands and abandons their trials, so their points may be asked again.
"""

from __future__ import annotations

import math
import re
import shlex
import string
import subprocess
import threading

#: A number as programs print them: 3, -0.5, 1e-3, .5, 2.
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
#: Seconds between checks for Ctrl-C while a command runs in a worker thread.
POLL_SECONDS = 0.2


class CommandFailed(RuntimeError):
    """The command exited with an error, timed out, or printed no value."""


class CommandObjective:
    """``objective(trial) -> float`` running ``template`` (module docstring)."""

    def __init__(self, template: str, fields: set[str], value_regex: str | None = None,
                 trial_timeout: float | None = None):  # fmt: skip
        if not isinstance(template, str) or not template.strip():
            raise ValueError("--command must be a command line, e.g. 'python train.py --lr {lr}'")
        try:
            self.words = shlex.split(template)
        except ValueError as exc:
            raise ValueError(f"--command cannot be split into words: {exc}") from None
        allowed = set(fields) | {"trial", "row"}
        for word in self.words:
            for name in _fields(word):
                if name not in allowed:
                    raise ValueError(
                        f"--command names {{{name}}}, which is no parameter; it may use "
                        + ", ".join(f"{{{n}}}" for n in sorted(allowed))
                    )
        try:
            self.pattern = None if value_regex is None else re.compile(value_regex)
        except re.error as exc:
            raise ValueError(f"--value-regex is not a regular expression: {exc}") from None
        self.trial_timeout = trial_timeout
        #: set by :meth:`interrupt` (Ctrl-C): running commands are killed, their trials abandoned
        self.stopping = threading.Event()
        #: why each failed trial failed, by trial number
        self.failures: dict[int, str] = {}

    def argv(self, trial) -> list[str]:
        values = {**trial.params, "trial": trial.number, "row": trial.row}
        return [word.format_map(values) for word in self.words]

    def interrupt(self) -> None:
        self.stopping.set()

    def __call__(self, trial) -> float:
        try:
            return self._run(trial)
        except CommandFailed as exc:
            self.failures[trial.number] = str(exc)
            raise

    def _run(self, trial) -> float:
        if self.stopping.is_set():
            raise KeyboardInterrupt
        argv = self.argv(trial)
        try:
            process = subprocess.Popen(
                argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        except OSError as exc:
            raise CommandFailed(f"cannot run {argv[0]!r}: {exc.strerror or exc}") from None
        try:
            out, err = self._wait(process)
        except BaseException:
            process.kill()
            process.communicate()
            raise
        if self.stopping.is_set():  # Ctrl-C reached the command too: not its failure
            raise KeyboardInterrupt
        if process.returncode != 0:
            last = err.strip().splitlines()[-1:] or ["(nothing on standard error)"]
            raise CommandFailed(f"exit status {process.returncode}: {last[0]}")
        return self.value(out)

    def _wait(self, process) -> tuple[str, str]:
        waited = 0.0
        while True:
            try:
                return process.communicate(timeout=POLL_SECONDS)
            except subprocess.TimeoutExpired:
                waited += POLL_SECONDS
            if self.stopping.is_set():
                raise KeyboardInterrupt
            if self.trial_timeout is not None and waited >= self.trial_timeout:
                raise CommandFailed(f"timed out after {self.trial_timeout:g} s")

    def value(self, out: str) -> float:
        """The value a command printed (module docstring)."""
        if self.pattern is None:
            found = NUMBER.findall(out)
            text = found[-1] if found else None
        else:
            matches = list(self.pattern.finditer(out))
            text = None if not matches else matches[-1].group(1 if self.pattern.groups else 0)
        if text is None:
            what = "no number" if self.pattern is None else "nothing matching --value-regex"
            raise CommandFailed(f"the command printed {what} on standard output")
        try:
            value = float(text)
        except ValueError:
            raise CommandFailed(f"the command's value {text!r} is not a number") from None
        if not math.isfinite(value):
            raise CommandFailed(f"the command's value is {text}")
        return value


def _fields(word: str) -> list[str]:
    try:
        return [name for _, name, _, _ in string.Formatter().parse(word) if name is not None]
    except ValueError as exc:
        raise ValueError(
            f"--command word {word!r}: {exc} (write {{{{ and }}}} for braces)"
        ) from None
