"""The user's workload as ``smrlab advise`` reads it: a ``[workload]`` table in a TOML file.

```toml
[workload]
ds = "hash_set"            # a structure smrbench has, or list | set | tree | queue
key_range = 100000         # keys are uniform in [0, key_range) (default: the structure's)
insert = 10                # percent of operations (contains: the rest)
erase = 10
threads = 8                # worker threads, or "4x" for 4 × this machine's CPUs
stalls = true              # threads may stall or be preempted inside an operation
memory_budget_nodes = 50000  # retired nodes the reclaimer may hold at most (default: none)
latency_sensitive = false  # rank ties by the free() latency tail
allocators = ["glibc", "jemalloc"]  # allocators to consider (default: glibc and jemalloc)
reclaimers = ["ebr", "hp"] # only these (default: every scheme safe on the structure)
```

Everything is checked here, before anything runs, and bad input is one ``UsageError`` line
naming the file and the key. Names (structures, allocators, reclaimers) are checked against
the smrbench that will run (``resolve``), since the binary is the source of truth for them.
"""

from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from smrlab.errors import UsageError
from smrlab.grid import _RELATIVE_THREADS_RE, _suggest

# What a user may call a structure, and the registry structure that stands for it: the one the
# studies measure that kind of structure with, and that every reclaimer family can run on where
# one exists (hm_list rather than harris_list: hazard pointers are safe on it).
KINDS = {
    "list": "hm_list",
    "sorted_list": "hm_list",
    "set": "hash_set",
    "hash_set": "hash_set",
    "hash_map": "hash_set",
    "map": "hash_set",
    "tree": "abtree",
    "ordered_set": "abtree",
    "ordered_map": "abtree",
    "queue": "ms_queue",
    "fifo": "ms_queue",
}
DEFAULT_ALLOCATORS = ("glibc", "jemalloc")

_KEYS = {
    "name": "a name for this advice (default: the file's name)",
    "ds": "the data structure",
    "key_range": "keys are uniform in [0, key_range)",
    "insert": "percent inserts",
    "erase": "percent erases",
    "threads": "worker threads, or 'Nx' for N times the CPUs",
    "stalls": "whether threads may stall inside operations",
    "memory_budget_nodes": "the retired nodes the reclaimer may hold",
    "latency_sensitive": "rank ties by the free() latency tail",
    "allocators": "allocators to consider",
    "reclaimers": "reclaimers to consider",
}
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


@dataclass(frozen=True)
class Workload:
    """A checked workload; ``ds`` is the name as given until ``resolve`` maps a kind."""

    name: str
    ds: str
    insert: int
    erase: int
    threads: int | str
    stalls: bool
    latency_sensitive: bool
    allocators: tuple[str, ...]
    key_range: int | None = None
    memory_budget_nodes: int | None = None
    reclaimers: tuple[str, ...] | None = None
    asked_ds: str = ""  # the ds the file named, when it was a kind mapped to a structure

    def as_dict(self) -> dict[str, Any]:
        """The workload as JSON shows it (lists, not tuples)."""
        out = asdict(self)
        out["allocators"] = list(self.allocators)
        out["reclaimers"] = None if self.reclaimers is None else list(self.reclaimers)
        return out


def load_workload(path: Path) -> tuple[Workload, str]:
    """Reads and checks a workload file; returns the workload and the file's text."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such workload file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"{path}: cannot read the workload file: {error}") from None
    return parse_workload(text, path), text


def parse_workload(text: str, path: Path = Path("<string>")) -> Workload:
    """Checks workload TOML text (see the module's docstring for the keys)."""

    def fail(message: str) -> UsageError:
        return UsageError(f"{path}: {message}")

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise fail(f"invalid TOML: {error}") from None
    extra = [key for key in document if key != "workload"]
    if extra:
        raise fail(f"unknown table [{extra[0]}] (a workload file has one [workload] table)")
    table = document.get("workload")
    if not isinstance(table, dict):
        raise fail("missing [workload] table (see smrlab advise --help)")
    for key in table:
        if key not in _KEYS:
            raise fail(f"unknown key '{key}' in [workload]{_suggest(key, _KEYS)}")
    if "ds" not in table:
        raise fail("[workload] needs ds: the data structure (or list, set, tree, queue)")

    stem = "".join(c if c in _NAME_CHARS else "_" for c in path.stem).strip("_")
    name = table.get("name", stem or "workload")
    if not isinstance(name, str) or not name or not set(name) <= _NAME_CHARS:
        raise fail("[workload] name must be letters, digits, '_', '-' or '.'")
    ds = _string(table, "ds", fail)
    insert = _integer(table, "insert", 50, 0, 100, fail)
    erase = _integer(table, "erase", 50, 0, 100, fail)
    if insert + erase > 100:
        raise fail(f"[workload] insert {insert} + erase {erase} is over 100 percent")
    return Workload(
        name=name,
        ds=ds,
        insert=insert,
        erase=erase,
        threads=_threads(table.get("threads", "1x"), fail),
        stalls=_boolean(table, "stalls", fail),
        latency_sensitive=_boolean(table, "latency_sensitive", fail),
        allocators=_names(table, "allocators", fail) or DEFAULT_ALLOCATORS,
        key_range=_integer(table, "key_range", None, 1, 1 << 40, fail),
        memory_budget_nodes=_integer(table, "memory_budget_nodes", None, 1, 1 << 62, fail),
        reclaimers=_names(table, "reclaimers", fail),
    )


def resolve(workload: Workload, listing: dict[str, Any], path: Path) -> Workload:
    """Maps a kind of structure to the registry's, and checks every name against what this
    smrbench has (``--list --json``)."""
    structures = listing.get("data_structures", [])
    ds, asked = workload.ds, ""
    if ds not in structures and ds in KINDS:
        ds, asked = KINDS[ds], ds
    if ds not in structures:
        raise UsageError(
            f"{path}: [workload] ds: {ds!r} is not a structure of this smrbench "
            f"({', '.join(structures)}; or {', '.join(sorted(set(KINDS) - set(structures)))})"
        )
    allocators = [a["name"] for a in listing.get("allocators", []) if a.get("available", True)]
    for alloc in workload.allocators:
        if alloc not in allocators:
            raise UsageError(
                f"{path}: [workload] allocators: {alloc!r} is not available in this smrbench "
                f"(available: {', '.join(allocators)})"
            )
    known = [r["name"] for r in listing.get("reclaimers", [])]
    for reclaimer in workload.reclaimers or ():
        if reclaimer not in known:
            raise UsageError(
                f"{path}: [workload] reclaimers: {reclaimer!r} is not a reclaimer of this "
                f"smrbench{_suggest(reclaimer, known)}"
            )
    return Workload(**{**asdict(workload), "ds": ds, "asked_ds": asked})


def _string(table: dict[str, Any], key: str, fail: Any) -> str:
    value = table[key]
    if not isinstance(value, str) or not value:
        raise fail(f"[workload] {key} must be a non-empty string")
    return value


def _integer(
    table: dict[str, Any], key: str, default: int | None, low: int, high: int, fail: Any
) -> int | None:
    if key not in table:
        return default
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise fail(f"[workload] {key} must be a whole number from {low} to {high}: {value!r}")
    return value


def _boolean(table: dict[str, Any], key: str, fail: Any) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise fail(f"[workload] {key} must be true or false: {value!r}")
    return value


def _threads(value: Any, fail: Any) -> int | str:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 4096:
        return value
    if isinstance(value, str) and _RELATIVE_THREADS_RE.match(value):
        return value
    raise fail(f"[workload] threads must be 1 to 4096 or 'Nx' (N times the CPUs): {value!r}")


def _names(table: dict[str, Any], key: str, fail: Any) -> tuple[str, ...] | None:
    if key not in table:
        return None
    value = table[key]
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(item, str) and item for item in value)
    ):
        raise fail(f"[workload] {key} must be a non-empty list of names")
    return tuple(dict.fromkeys(value))
