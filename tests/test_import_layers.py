"""The import graph points down the layers (tools/check_imports.py) and the checker catches breaks."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("check_imports", ROOT / "tools" / "check_imports.py")
check_imports = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_imports)


def test_frontierbo_has_no_upward_import_and_no_cycle():
    assert check_imports.violations() == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    src = tmp_path / "frontierbo"
    for name, text in files.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return src


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {
                "core/__init__.py": "from frontierbo.experiments import store\n",
                "experiments/__init__.py": "",
            },
            "upward import",
        ),
        (
            {"io.py": "def f():\n    from frontierbo.core import gp\n", "core/__init__.py": ""},
            "upward import",
        ),
        (
            {"po/__init__.py": "from frontierbo.ldp import x\n", "ldp/__init__.py": ""},
            "system po imports system ldp",
        ),
        (
            {
                "ldp/__init__.py": "from frontierbo.quantum import x\n",
                "quantum/__init__.py": "from frontierbo.ldp import y\n",
            },
            "import cycle",
        ),
        (
            {
                "core/gp.py": "from ..experiments import runner\n",
                "core/__init__.py": "",
                "experiments/__init__.py": "",
            },
            "upward import",
        ),
    ],
)
def test_checker_reports_upward_sideways_and_cyclic_imports(tmp_path, files, expected):
    problems = check_imports.violations(_tree(tmp_path, files))
    assert any(expected in line for line in problems), problems


def test_checker_accepts_downward_imports(tmp_path):
    files = {
        "core/__init__.py": "from frontierbo import io\nfrom .. import _validation\n",
        "io.py": "",
        "_validation.py": "",
        "po/__init__.py": "from frontierbo.core import x\n",
    }
    assert check_imports.violations(_tree(tmp_path, files)) == []
