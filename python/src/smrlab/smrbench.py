"""Everything smrlab knows about the smrbench binary: where it is, what it supports, argv.

smrbench is the source of truth for names and options (``--list --json``; ``--help`` for a build
older than its option description), so experiments are checked against the binary actually used
rather than against a list here that would drift as reclaimers and options are added.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from smrlab.errors import UsageError
from smrlab.grid import Options
from smrlab.options import (
    NAMED_OPTIONS,
    OPTIONS,
    OPTIONS_BY_BENCHMARK,
    Option,
    options_from_description,
)

BUILD_HINT = "build it with cmake --workflow --preset smrbench"
RELATIVE_PATH = Path("build/release/bench/smrbench")


def repo_root() -> Path:
    """The smrlab repository holding this package (editable install) or the working directory.

    Defaults (binary, result store) are anchored here so ``smrlab`` behaves the same from any
    directory of the repository.
    """
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "CMakePresets.json").is_file() and (parent / "python").is_dir():
            return parent
    cwd = Path.cwd()
    for parent in (cwd, *cwd.parents):
        if (parent / "CMakePresets.json").is_file():
            return parent
    return cwd


def locate(explicit: str | None = None) -> Path:
    """Path of smrbench: --smrbench, else $SMRBENCH, else build/release under the repo root.

    The path is not checked here (a dry run can print commands without a build); call
    ``require`` before running anything.
    """
    if explicit:
        return Path(explicit)
    if os.environ.get("SMRBENCH"):
        return Path(os.environ["SMRBENCH"])
    return repo_root() / RELATIVE_PATH


def require(path: Path) -> Path:
    """Returns path if it is an executable file, else raises the documented UsageError."""
    if not path.exists():
        raise UsageError(f"smrbench not found at {path}; {BUILD_HINT}")
    if not path.is_file():
        raise UsageError(f"smrbench at {path} is not a regular file (give the smrbench binary)")
    if not os.access(path, os.X_OK):
        raise UsageError(
            f"smrbench at {path} is not executable (give the smrbench binary, or chmod +x it)"
        )
    return path


@dataclass
class Smrbench:
    """A smrbench binary and what it reports about itself (queried lazily, once)."""

    path: Path
    _help: str | None = field(default=None, repr=False)

    def _query(self, *args: str) -> str:
        try:
            result = subprocess.run(
                [str(self.path), *args],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except OSError as error:
            raise UsageError(f"cannot run smrbench at {self.path}: {error.strerror}") from None
        except subprocess.TimeoutExpired:
            raise UsageError(f"smrbench {' '.join(args)} did not answer in 60 s") from None
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise UsageError(f"smrbench {' '.join(args)} failed: {last}")
        return result.stdout

    @cached_property
    def listing(self) -> dict:
        """The parsed ``smrbench --list --json`` object."""
        try:
            return json.loads(self._query("--list", "--json"))
        except json.JSONDecodeError:
            raise UsageError(f"smrbench at {self.path}: --list --json is not JSON") from None

    @cached_property
    def help_text(self) -> str:
        """``smrbench --help`` output, used to see which options this build has."""
        return self._query("--help")

    def names(self, option: str) -> list[str]:
        """Available values of a named option (ds, reclaimer, alloc, free)."""
        entries = self.listing.get(NAMED_OPTIONS[option], [])
        names = []
        for entry in entries:
            if isinstance(entry, dict):
                if entry.get("available", True):
                    names.append(str(entry["name"]))
            else:
                names.append(str(entry))
        return names

    def valid_combination(self, ds: str, reclaimer: str) -> bool:
        """Whether smrbench runs this data structure with this reclaimer (its --list table)."""
        for entry in self.listing.get("combinations", []):
            if entry.get("ds") == ds and entry.get("reclaimer") == reclaimer:
                return bool(entry.get("valid"))
        return False

    @cached_property
    def options(self) -> dict[str, Option] | None:
        """This binary's own description of the set benchmark's options (``--list --json``
        "options"), as smrlab reads them; None for a build older than that description."""
        return self.options_for("set")

    def options_for(self, benchmark: str) -> dict[str, Option] | None:
        """As ``options``, for one smrbench command (set, threadtest, layout)."""
        rows = self.listing.get("options")
        return None if rows is None else options_from_description(rows, benchmark)

    @cached_property
    def can_check(self) -> bool:
        """Whether this build has ``--check``: it validates a command line, running nothing."""
        return any(row.get("key") == "check" for row in self.listing.get("options", []))

    def refusal(self, argv: list[str]) -> str | None:
        """The one line in which smrbench refuses the command line ``argv`` (run with
        ``--check``), or None if the run would start."""
        try:
            result = subprocess.run(
                [*argv, "--check"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"smrbench --check did not answer: {error}"
        if result.returncode == 0:
            return None
        lines = result.stderr.strip().splitlines() or [f"exit status {result.returncode}"]
        return lines[-1].removeprefix("smrbench: error: ")

    def has_option(self, key: str, benchmark: str = "set") -> bool:
        """Whether this build accepts the option: its description lists it (or, for an older
        build, smrbench --help mentions its flag)."""
        described = self.options_for(benchmark)
        if described is not None:
            return key in described and described[key].passed
        if benchmark != "set":
            return False  # a build without the description has no subcommands
        flag = OPTIONS[key].flag
        return any(
            token.startswith(flag) and token[len(flag) : len(flag) + 1] in ("", "=", ",")
            for token in self.help_text.replace(",", " , ").split()
        )


def command(
    binary: Path,
    options: Options,
    trial_seed: int,
    files: dict[str, Path] | None = None,
    benchmark: str = "set",
) -> list[str]:
    """The argv of one trial: one smrbench process, one trial, JSON on stdout.

    ``files`` maps path-valued options (timeline, garbage_series) to the paths to write. A
    ``benchmark`` other than the set benchmark is smrbench's subcommand of that name, which
    takes no seed (threadtest draws nothing at random, layout measures once).
    """
    described = OPTIONS_BY_BENCHMARK[benchmark]
    argv = [str(binary)] + ([] if benchmark == "set" else [benchmark])
    for key in sorted(options):
        option = described[key]
        value = options[key]
        if not option.passed or key == "seed":
            continue
        if option.kind == "path_flag":
            if value and files and key in files:
                argv += [option.flag, str(files[key])]
            continue
        if option.kind == "bool":
            if value:
                argv.append(option.flag)
            continue
        argv += [option.flag, _format(value)]
    if "trials" in described:
        argv += ["--trials", "1"]
    if "seed" in described:
        argv += ["--seed", str(trial_seed)]
    return [*argv, "--json", "--quiet"]


def _format(value: object) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)
