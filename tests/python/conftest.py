"""Fixtures: the real smrbench (tests skip with a reason if it is not built), a fake smrbench
for failure modes the real one rarely shows (crash, hang, garbage output), synthetic results."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # specfiles.py

REPO = Path(__file__).resolve().parents[2]
SMRBENCH = REPO / "build" / "release" / "bench" / "smrbench"


@pytest.fixture
def smrbench() -> Path:
    """The release smrbench; skips the test if it is not built."""
    path = Path(os.environ.get("SMRBENCH", SMRBENCH))
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.skip(f"smrbench not built at {path} (cmake --workflow --preset smrbench)")
    return path


@pytest.fixture(scope="session")
def load_measure_script():
    """Imports scripts/measure/NAME.py as module NAME (the scripts are not a package)."""

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(
            name, REPO / "scripts" / "measure" / f"{name}.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
        return module

    return load


FAKE_LISTING = {
    "allocators": [
        {"name": "glibc", "available": True},
        {"name": "jemalloc", "available": True},
        {"name": "tbbmalloc", "available": False},
    ],
    "combinations": [
        {"ds": "dgt_bst", "reclaimer": r, "valid": True}
        for r in ("none", "debra", "crash", "hang", "garbage", "invalid", "badinput")
    ]
    + [
        {"ds": "lazylist", "reclaimer": "none", "valid": True},
        {"ds": "lazylist", "reclaimer": "debra", "valid": False},
    ],
    "data_structures": ["dgt_bst", "lazylist"],
    "free": ["batch", "amortized"],
    "pin": ["none"],
    "reclaimers": [
        {"name": r} for r in ("none", "debra", "crash", "hang", "garbage", "invalid", "badinput")
    ],
}

FAKE_SCRIPT = r'''#!{python}
"""A stand-in smrbench: behaviour is chosen by --reclaimer (crash, hang, garbage, invalid)."""
import json, os, sys, time
args = sys.argv[1:]
if "--list" in args:
    print(json.dumps({listing}))
    sys.exit(0)
if "--check" in args:  # a stand-in whose checks all pass: its faults show when trials run
    sys.exit(0)
if "--help" in args:
    print("Options:\n  --ds TEXT\n  --reclaimer TEXT\n  --free TEXT\n  --alloc TEXT\n"
          "  --threads INT\n  --key-range INT\n  --insert INT\n  --erase INT\n"
          "  --duration FLOAT\n  --trials INT\n  --seed UINT\n  --stall\n  --json\n  --quiet\n"
          "  --garbage-series TEXT\n")
    sys.exit(0)
opts = {{}}
i = 0
while i < len(args):
    if args[i] in ("--json", "--quiet", "--stall"):
        opts[args[i][2:]] = True; i += 1
    else:
        opts[args[i][2:].replace("-", "_")] = args[i + 1]; i += 2
with open({log!r}, "a") as log:
    log.write(json.dumps({{"pid": os.getpid(), "args": args}}) + "\n")
reclaimer = opts.get("reclaimer", "debra")
if reclaimer == "crash":
    print("smrbench: segmentation fault in trial 0", file=sys.stderr); sys.exit(1)
if reclaimer == "hang":
    time.sleep(60)
if reclaimer == "garbage":
    print("this is not JSON"); sys.exit(0)
if reclaimer == "badinput":
    print("smrbench: --free: 'sometimes' is not batch or amortized", file=sys.stderr); sys.exit(2)
threads = int(opts.get("threads", 2))
valid = reclaimer != "invalid"
if "garbage_series" in opts:
    with open(opts["garbage_series"], "w") as out:
        header = {{"format": "smrlab-garbage-series", "version": 1, "config": {{}},
                  "trial": 0, "points": 2}}
        out.write(json.dumps(header) + "\ntime_ns,epoch,garbage\n1,1,5\n2,2,7\n")
config = {{"ds": opts.get("ds", "dgt_bst"), "reclaimer": reclaimer,
          "free": opts.get("free", "batch"), "alloc": opts.get("alloc", "glibc"),
          "threads": threads, "key_range": int(opts.get("key_range", 200000)),
          "insert": int(opts.get("insert", 50)), "erase": int(opts.get("erase", 50)),
          "contains": 0, "duration": float(opts.get("duration", 1)),
          "seed": int(opts.get("seed", 1)), "stall": "stall" in opts}}
result = {{"smrbench_version": 1, "config": config,
          "allocator": {{"name": config["alloc"], "version": "1"}},
          "machine": {{"hardware_threads": 2}},
          "throughput_ops_per_s": 1e6 * threads, "throughput_min_ops_per_s": 1e6 * threads,
          "throughput_max_ops_per_s": 1e6 * threads, "validated": valid,
          "peak_rss_bytes": 10 << 20, "median_trial": 0,
          "reclaimer": {{"name": reclaimer, "garbage_peak": 100, "free_seconds": 0.01,
                        "epochs": 5, "free_calls": 10,
                        "free_latency_ns": {{"p50": 10, "p99": 100, "p999": 1000, "max": 5000}}}},
          "trials": [{{"trial": 0, "validated": valid,
                      "validation": {{"error": "" if valid else "key sum 10 != expected 12"}}}}]}}
print(json.dumps(result))
sys.exit(0 if valid else 1)
'''


def write_fake_smrbench(path: Path, listing: dict[str, Any]) -> Path:
    """Writes a fake smrbench script at ``path`` whose --list --json is ``listing``; the argv
    of each trial it runs is appended to <path>.log."""
    path.write_text(
        FAKE_SCRIPT.format(python=sys.executable, listing=listing, log=str(path) + ".log")
    )
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.fixture
def fake_smrbench(tmp_path: Path) -> Path:
    """A fake smrbench script with FAKE_LISTING (write_fake_smrbench)."""
    return write_fake_smrbench(tmp_path / "fake-smrbench", FAKE_LISTING)


def fake_result(
    *,
    ds: str = "dgt_bst",
    reclaimer: str = "debra",
    free: str = "batch",
    alloc: str = "jemalloc",
    threads: int = 2,
    throughput: float = 1e6,
    rss: int = 64 << 20,
    insert: int = 50,
    erase: int = 50,
    stall: bool = False,
    stall_hold: bool = False,
    free_calls: int = 1000,
    latency: dict[str, int] | None = None,
    hardware_threads: int = 4,
    seed: int = 1,
    pool_nodes: int | None = None,
    on_empty: str = "yield",
    status: str = "ok",
    remote_frees: int | None = None,
    allocator_counters: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A result object shaped like smrbench --json (docs/smrbench.md). Without ``pool_nodes``
    it has no pool fields at all, as results from before the pool existed."""
    latency = latency or {"p50": 20, "p99": 400, "p999": 3000, "max": 90000}
    counters = {
        "name": reclaimer,
        "family": "epoch",
        "garbage_bounded": False,
        "allocated": 10,
        "retired": 10,
        "freed": 9,
        "garbage_peak": 5000,
        "garbage_end": 1,
        "epochs": 42,
        "free_seconds": 0.05,
        "free_calls": free_calls,
        "free_latency_ns": latency,
        "remote_frees": remote_frees,
    }
    result = {
        "smrbench_version": 1,
        "config": {
            "ds": ds,
            "reclaimer": reclaimer,
            "free": free,
            "alloc": alloc,
            "threads": threads,
            "key_range": 20000,
            "insert": insert,
            "erase": erase,
            "contains": 100 - insert - erase,
            "duration": 1.0,
            "stall": stall,
            "seed": seed,
            "trials": 1,
            "prefill_target": 10000,
        },
        "allocator": {"name": alloc, "version": "5.3.0", "counters": allocator_counters},
        "machine": {"hardware_threads": hardware_threads, "cpus": hardware_threads},
        "throughput_ops_per_s": throughput,
        "exec_time_per_op_ns": 1e9 / throughput,
        "cpu_time_per_op_ns": 1e9 / throughput * threads,
        "cpus_used": min(threads, hardware_threads),
        "throughput_min_ops_per_s": throughput,
        "throughput_max_ops_per_s": throughput,
        "validated": True,
        "peak_rss_bytes": rss,
        "median_trial": 0,
        "reclaimer": counters,
        "trials": [
            {
                "trial": 0,
                "validated": True,
                "operations": int(throughput),
                "measured_seconds": 1.0,
                "reclaimer": counters,
            }
        ],
    }
    if stall_hold:
        result["config"]["stall_hold"] = True
    if pool_nodes is not None:
        result["config"] |= {"pool_nodes": pool_nodes, "on_empty": on_empty if pool_nodes else None}
        result["status"] = status
    return result


def add_fake_run(store, experiment: str = "exp", trial: int = 0, **kwargs: Any) -> None:
    """Stores a fake result under a config key built from its options."""
    result = fake_result(**kwargs)
    config = result["config"]
    options = {
        k: config[k]
        for k in ("ds", "reclaimer", "free", "alloc", "threads", "insert", "erase", "stall")
    }
    if "pool_nodes" in config:
        options |= {"pool_nodes": config["pool_nodes"], "on_empty": config["on_empty"]}
    key = json.dumps({**options, "trial": trial}, sort_keys=True, separators=(",", ":"))
    assert store.add_run(experiment, key, trial, result, ["smrbench"])
