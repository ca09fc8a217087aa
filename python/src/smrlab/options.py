"""The smrbench options an experiment file may set, with their types.

Experiment files name options with ``_`` where the command line has ``-``. Knowing each option's
type here lets ``smrlab`` reject a bad experiment file before running anything, with a message
that names the key, instead of a smrbench error in the middle of a long run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Kind = Literal["str", "int", "float", "bool", "threads", "prefill", "path_flag"]


@dataclass(frozen=True)
class Option:
    """One option: its TOML key, value kind, allowed values and the range of numbers."""

    key: str
    kind: Kind
    help: str
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    # Options smrlab interprets itself instead of passing them through (trials, workload).
    passed: bool = True

    @property
    def flag(self) -> str:
        """The command-line flag, e.g. ``key_range`` → ``--key-range``."""
        return "--" + self.key.replace("_", "-")


# smrbench's own description of its options (smrbench --list --json "options", generated from
# bench/option_table.cpp): keys, types, ranges, choices and help come from there, never from a
# copy kept here. tests/python/test_grid.py fails when this snapshot and the smrbench built from
# the same checkout disagree; regenerate it with
#   build/release/bench/smrbench --list --json | python3 -c 'import json, sys; \
#   print(json.dumps(json.load(sys.stdin)["options"], indent=1))' \
#   > python/src/smrlab/assets/smrbench_options.json
DESCRIPTION_PATH = Path(__file__).parent / "assets" / "smrbench_options.json"

# Where smrlab reads a value in a form of its own before passing it on.
_KINDS: dict[str, Kind] = {
    "threads": "threads",  # also "Nx": N x the CPUs
    "prefill": "prefill",  # auto | none | a number of keys
    "timeline": "path_flag",  # true: smrlab picks the file per trial
    "garbage_series": "path_flag",
}
_HELP = {
    "threads": 'worker threads: an integer, or "Nx" = N × the CPUs',
    "timeline": "record a timeline file per trial (smrlab picks the path)",
    "garbage_series": "record a garbage-series file per trial (smrlab picks the path)",
    "seed": "base seed; trial i runs with seed + i",
    "trials": "trials, each one smrbench process",
}
# smrbench options smrlab interprets itself instead of passing them on.
_NOT_PASSED = {"trials"}
# Options of smrlab alone.
_SMRLAB_OPTIONS = [
    Option(
        "workload",
        "str",
        '"I/E": insert and erase percentages together, e.g. "50/50"',
        passed=False,
    ),
]


def options_from_description(description: list[dict[str, Any]]) -> dict[str, Option]:
    """smrlab's options: every option smrbench describes that configures a run (not the ones
    of target output, which decide what smrbench prints), then smrlab's own."""
    options: dict[str, Option] = {}
    for row in description:
        if row["target"] == "output":
            continue
        key = row["key"]
        options[key] = Option(
            key,
            _KINDS.get(key, row["type"]),
            _HELP.get(key, row["help"]),
            choices=tuple(row["choices"]) if row.get("choices") else None,
            minimum=row["minimum"],
            maximum=row["maximum"],
            passed=key not in _NOT_PASSED,
        )
    for option in _SMRLAB_OPTIONS:
        options[option.key] = option
    return options


def load_description(path: Path = DESCRIPTION_PATH) -> list[dict[str, Any]]:
    """The option description stored with smrlab."""
    return json.loads(path.read_text(encoding="utf-8"))


OPTIONS: dict[str, Option] = options_from_description(load_description())

# Options whose value is a name smrbench --list knows, and the --list --json field holding them.
NAMED_OPTIONS = {
    "ds": "data_structures",
    "reclaimer": "reclaimers",
    "alloc": "allocators",
    "free": "free",
}

# smrbench's defaults for the options the store keeps in columns, used only for planning
# (timeouts, labels); the stored columns always come from smrbench's own JSON "config".
DEFAULT_DURATION_S = 1.0
DEFAULT_SEED = 1
