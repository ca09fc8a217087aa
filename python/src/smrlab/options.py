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
    # A reclaimer's tuning (--check-every, --bag-size, ...): the reclaimers that read it, which
    # are the only ones smrbench accepts it with; None for an option of every reclaimer.
    reclaimers: tuple[str, ...] | None = None

    @property
    def flag(self) -> str:
        """The command-line flag, e.g. ``key_range`` → ``--key-range``."""
        return "--" + self.key.replace("_", "-")


# smrbench's own description of its options and statistics (smrbench --list --json "options"
# and "statistics", generated from bench/option_table.cpp and bench/statistics.cpp): keys, types,
# ranges, choices, help, labels and units come from there, never from a copy kept here.
# tests/python/test_grid.py fails when this snapshot and the smrbench built from the same
# checkout disagree; regenerate it with
#   build/release/bench/smrbench --list --json | python3 -c 'import json, sys; d = \
#   json.load(sys.stdin); print(json.dumps({k: d[k] for k in ("options", "statistics")}, \
#   indent=1))' > python/src/smrlab/assets/smrbench_description.json
DESCRIPTION_PATH = Path(__file__).parent / "assets" / "smrbench_description.json"

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


def options_from_description(
    description: list[dict[str, Any]], command: str = "set"
) -> dict[str, Option]:
    """smrlab's options for one smrbench command ("set", the set benchmark; "threadtest";
    "layout"): every option smrbench describes for it that configures a run (not the ones of
    target output, which decide what smrbench prints), then smrlab's own."""
    options: dict[str, Option] = {}
    for row in description:
        if row["target"] == "output" or command not in row.get("commands", ["set"]):
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
            reclaimers=tuple(row["reclaimers"]) if row.get("reclaimers") is not None else None,
        )
    if command == "set":
        for option in _SMRLAB_OPTIONS:
            options[option.key] = option
    return options


def load_description(path: Path = DESCRIPTION_PATH) -> dict[str, list[dict[str, Any]]]:
    """The description stored with smrlab: {"options": [...], "statistics": [...]}."""
    return json.loads(path.read_text(encoding="utf-8"))


# smrbench's commands: the set benchmark (no subcommand), threadtest, layout and stamp. An
# experiment file names its command in [experiment] benchmark; each command takes its own options.
BENCHMARKS = ("set", "threadtest", "layout", "stamp")
OPTIONS_BY_BENCHMARK: dict[str, dict[str, Option]] = {
    benchmark: options_from_description(load_description()["options"], benchmark)
    for benchmark in BENCHMARKS
}
# The set benchmark's, which most of smrlab reads.
OPTIONS: dict[str, Option] = OPTIONS_BY_BENCHMARK["set"]
# The reclaimer of a run that names none (smrbench's default).
DEFAULT_RECLAIMER: str = next(
    str(row["default"]) for row in load_description()["options"] if row["key"] == "reclaimer"
)

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


# smrbench's refusals of a bad value (bench/option_table.cpp), worded the same here so that a
# grid value and a command-line value are refused alike; test_grid.py compares the two.
def value_text(value: Any) -> str:
    """A value as it would be typed on smrbench's command line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if not isinstance(value, float) else repr(value)


def bound_text(bound: float) -> str:
    """A range bound as smrbench prints it: an integer without a fraction."""
    return str(int(bound)) if float(bound).is_integer() else repr(float(bound))


def not_an_integer(value: Any) -> str:
    return f"expected a decimal integer (no leading zero, octal or hex), got '{value_text(value)}'"


def not_non_negative(value: Any) -> str:
    return f"expected a non-negative integer, got '{value_text(value)}'"


def not_a_finite_number(value: Any) -> str:
    return f"expected a finite decimal number, got '{value_text(value)}'"


def out_of_range(value: Any, minimum: float, maximum: float) -> str:
    return (
        f"expected a value in [{bound_text(minimum)}, {bound_text(maximum)}], "
        f"got '{value_text(value)}'"
    )


def not_one_of(value: Any, choices: tuple[str, ...]) -> str:
    return f"expected one of {', '.join(choices)}, got '{value_text(value)}'"
