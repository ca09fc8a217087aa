"""One version for the library, smrbench and smrlab: the VERSION file's."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import smrlab
from conftest import REPO


def _version_file() -> str:
    return (REPO / "VERSION").read_text(encoding="utf-8").strip()


def test_the_python_package_has_the_version_files_version() -> None:
    # setuptools cannot read a file outside python/, so pyproject.toml repeats it.
    pyproject = tomllib.loads((REPO / "python" / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["version"] == _version_file()
    assert smrlab.__version__ == _version_file()


def test_smrbench_reports_the_version_files_version(smrbench: Path) -> None:
    ran = subprocess.run([str(smrbench), "--version"], capture_output=True, text=True, check=True)
    # "smrbench 1.2.0 (commit 0123456789; GNU 12.2.0, Release)": the version, then the build.
    assert ran.stdout.startswith(f"smrbench {_version_file()} (")
    assert ran.stdout.endswith(")\n")
