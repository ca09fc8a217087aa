"""Exit status 0 if this checkout's smrlab and all its requirements are installed here.

scripts/bootstrap runs it with .venv/bin/python to decide whether `pip install -e python[test]`
is needed, so a bootstrap with nothing to do is fast, offline and silent. It compares against
python/pyproject.toml (not the installed metadata), so a dependency added there triggers an
install. Prints the first missing piece on stdout.
"""

import importlib.util
import sys
import tomllib
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent


def missing() -> str | None:
    """What is not installed as pyproject.toml asks, or None."""
    project = tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    try:
        from packaging.requirements import Requirement
    except ImportError:
        return "packaging (comes with matplotlib)"
    wanted = project["dependencies"] + project["optional-dependencies"]["test"]
    for text in wanted:
        requirement = Requirement(text)
        try:
            version = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            return requirement.name
        if not requirement.specifier.contains(version, prereleases=True):
            return f"{requirement.name} {requirement.specifier} (have {version})"
    try:
        if metadata.version("smrlab") != project["version"]:
            return "smrlab " + project["version"]
    except metadata.PackageNotFoundError:
        return "smrlab"
    spec = importlib.util.find_spec("smrlab")
    if spec is None or spec.origin is None or HERE not in Path(spec.origin).resolve().parents:
        return f"smrlab installed from {HERE} (editable)"
    return None


if __name__ == "__main__":
    what = missing()
    if what:
        print(what)
    sys.exit(1 if what else 0)
