"""The project's Python (the package, its tests, the scripts, the mutation harness) passes ruff's
checks and is formatted as ruff formats it, with the package's settings (python/pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    ROOT / "python" / "src",
    ROOT / "tests" / "python",
    ROOT / "scripts",
    ROOT / "scripts" / "mutants",  # no .py ending: named, or ruff would pass it over
]


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *map(str, SOURCES)],
        cwd=ROOT / "python",
        capture_output=True,
        text=True,
        check=False,
    )


def test_ruff_check_passes() -> None:
    result = ruff("check", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_leaves_every_file_as_it_is() -> None:
    result = ruff("format", "--check", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
