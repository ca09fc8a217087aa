"""The smrbench options an experiment file may set, with their types.

Experiment files name options with ``_`` where the command line has ``-``. Knowing each option's
type here lets ``smrlab`` reject a bad experiment file before running anything, with a message
that names the key, instead of a smrbench error in the middle of a long run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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


_OPTIONS = [
    Option("ds", "str", "data structure (smrbench --list)"),
    Option("reclaimer", "str", "reclamation scheme (smrbench --list)"),
    Option("free", "str", "batch | amortized", choices=("batch", "amortized")),
    Option("free_k", "int", "amortized: nodes freed per operation", minimum=1, maximum=2**20),
    Option(
        "free_catchup_div",
        "int",
        "amortized: catch-up divisor (0: off)",
        minimum=0,
        maximum=2**30,
    ),
    Option("alloc", "str", "allocator (smrbench --list)"),
    Option(
        "pool_nodes",
        "int",
        "bounded pool of N blocks on top of alloc (0: none)",
        minimum=0,
        maximum=2**32,
    ),
    Option(
        "on_empty",
        "str",
        "with pool_nodes: yield | spin | fail when the pool is empty",
        choices=("yield", "spin", "fail"),
    ),
    Option(
        "threads",
        "threads",
        'worker threads: an integer, or "Nx" = N × the CPUs',
        minimum=1,
        maximum=4096,
    ),
    Option("key_range", "int", "keys are uniform in [0, N)", minimum=1, maximum=2**40),
    Option("insert", "int", "percent inserts", minimum=0, maximum=100),
    Option("erase", "int", "percent erases", minimum=0, maximum=100),
    Option(
        "workload",
        "str",
        '"I/E": insert and erase percentages together, e.g. "50/50"',
        passed=False,
    ),
    Option("duration", "float", "measured seconds per trial", minimum=0.001, maximum=86400),
    Option("ops", "int", "operations per thread instead of --duration", minimum=0, maximum=2**40),
    Option(
        "trials", "int", "trials, each one smrbench process", minimum=1, maximum=1000, passed=False
    ),
    Option("prefill", "prefill", "auto | none | a number of keys"),
    Option("seed", "int", "base seed; trial i runs with seed + i", minimum=0),
    Option("pin", "str", "none | compact | scatter", choices=("none", "compact", "scatter")),
    Option("stall", "bool", "one extra thread stays inside an operation"),
    Option(
        "stall_hold",
        "bool",
        "as stall, holding the structure's first node (hm_list, hash_set, ms_queue)",
    ),
    Option("allow_unsafe", "bool", "run a combination smrbench calls unsafe"),
    Option(
        "bag_size", "int", "scan-based reclaimers: retire-list length", minimum=1, maximum=2**32
    ),
    Option(
        "advance_every",
        "int",
        "ebr, nebr: operations between advances",
        minimum=1,
        maximum=2**30,
    ),
    Option(
        "check_every",
        "int",
        "debra, qsbr: operations between checks",
        minimum=1,
        maximum=2**30,
    ),
    Option(
        "epoch_freq",
        "int",
        "rcu, he, ibr, wfe: allocations per epoch increment",
        minimum=1,
        maximum=2**30,
    ),
    Option(
        "token_check_every",
        "int",
        "token_periodic: frees between checks",
        minimum=1,
        maximum=2**30,
    ),
    Option("hp_scan_factor", "int", "hp: scan at factor x hazard slots", minimum=0, maximum=2**20),
    Option(
        "wfe_fast_attempts",
        "int",
        "wfe: fast-path attempts before help",
        minimum=1,
        maximum=2**20,
    ),
    Option("signal", "int", "nbr, nbrplus: neutralization signal number", minimum=1, maximum=64),
    Option(
        "nbr_low_watermark",
        "int",
        "nbrplus: low watermark (0: half the high)",
        minimum=0,
        maximum=2**32,
    ),
    Option(
        "nbr_high_watermark",
        "int",
        "nbrplus: high watermark (0: bag size)",
        minimum=0,
        maximum=2**32,
    ),
    Option("restart_from_head", "bool", "hm_list: every read phase from the head"),
    Option(
        "buckets", "int", "hash_set: buckets (default: key range / 2)", minimum=1, maximum=2**40
    ),
    Option("timeline", "path_flag", "record a timeline file per trial (smrlab picks the path)"),
    Option(
        "timeline_min_ns",
        "int",
        "timeline: shortest free call recorded",
        minimum=0,
        maximum=2**40,
    ),
    Option("timeline_capacity", "int", "timeline: events per thread", minimum=1, maximum=2**28),
    Option("garbage_series", "path_flag", "record a garbage-series file per trial"),
    Option(
        "sample_ms",
        "int",
        "sample RSS, allocator bytes and garbage every N ms (0: off)",
        minimum=0,
        maximum=3600000,
    ),
]

OPTIONS: dict[str, Option] = {option.key: option for option in _OPTIONS}

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
