"""Where and with what a result was measured: the identity a stored result is keyed by.

smrbench reports a ``machine`` object (CPU, sockets, cores, NUMA nodes, caches, kernel,
virtualization, load, governor) and a ``build`` object (version, commit, compiler, flags,
build type, sanitizer) with every result and in ``--list --json``. From them smrlab derives two
short identities stored with each row:

* ``machine_id``: a digest of the machine's stable fields (host name, CPU, topology, caches,
  memory, kernel), not of what changes between runs (load, governor, the process's CPUs);
* ``build_id``: a digest of the smrbench binary's bytes, which changes with any change of the
  code, compiler or flags, and not with a rebuild that produced the same program.

A run skips a configuration only when a row with the same identity is stored, so a rebuilt
binary or another machine measures again unless ``--reuse-stored`` says otherwise; figures and
the report name the machines and builds their rows came from.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The fields of smrbench's machine object that identify a machine; the others describe one run.
MACHINE_IDENTITY_FIELDS = (
    "hostname",
    "cpu_model",
    "sockets",
    "cores",
    "threads",
    "threads_per_core",
    "numa_nodes",
    "caches",
    "memory_bytes",
    "kernel",
)

UNKNOWN = ""  # the identity of a row stored before smrlab recorded provenance


@dataclass(frozen=True)
class Identity:
    """The machine and build one smrlab run measures on, with their full descriptions."""

    machine_id: str
    build_id: str
    machine: dict[str, Any]
    build: dict[str, Any]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def machine_id(machine: dict[str, Any]) -> str:
    """The identity of a machine object; UNKNOWN for one from before smrbench described
    machines (it had only hardware_threads and cpus)."""
    if "cpu_model" not in machine:
        return UNKNOWN
    stable = {field: machine.get(field) for field in MACHINE_IDENTITY_FIELDS}
    return _digest(json.dumps(stable, sort_keys=True).encode())


def binary_id(path: Path) -> str:
    """The identity of a smrbench binary: a digest of its bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def identity(binary: Path, listing: dict[str, Any]) -> Identity:
    """The identity of runs of ``binary`` on this machine, from its ``--list --json``."""
    machine = listing.get("machine") or {}
    build = listing.get("build") or {}
    return Identity(machine_id(machine), binary_id(binary), machine, build)


def _size(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def _plural(count: Any, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def describe_machine(machine: dict[str, Any]) -> str:
    """One line a caption can carry: CPU, topology, last-level cache, kernel, virtualization."""
    if "cpu_model" not in machine:
        threads = machine.get("hardware_threads")
        return (
            f"an unrecorded machine ({threads} hardware threads)"
            if threads
            else "an unrecorded machine"
        )
    parts = [machine.get("cpu_model") or "unknown CPU"]
    parts.append(
        f"{_plural(machine.get('sockets'), 'socket')}, {_plural(machine.get('cores'), 'core')}"
        f" x {machine.get('threads_per_core')} threads, "
        f"{_plural(machine.get('numa_nodes'), 'NUMA node')}"
    )
    caches = [c for c in machine.get("caches") or [] if c.get("size_bytes")]
    if caches:
        last = max(caches, key=lambda c: (c.get("level") or 0, c["size_bytes"]))
        parts.append(f"L{last.get('level')} {_size(last['size_bytes'])}")
    if machine.get("kernel"):
        parts.append(f"Linux {machine['kernel']}")
    virtual = machine.get("virtualization") or {}
    if virtual.get("hypervisor"):
        parts.append(
            "virtual machine" + (f" ({virtual['system']})" if virtual.get("system") else "")
        )
    if virtual.get("container"):
        parts.append(f"in a {virtual['container']} container")
    if machine.get("hostname"):
        parts.insert(0, machine["hostname"] + ":")
        return parts[0] + " " + ", ".join(parts[1:])
    return ", ".join(parts)


def describe_build(build: dict[str, Any]) -> str:
    """One line: version, commit (and whether the tree differed), compiler, build type."""
    if not build:
        return "unrecorded build"
    commit = build.get("commit")
    at = f" at {commit[:10]}" if commit else " at an unknown commit"
    if build.get("dirty"):
        at += " with uncommitted changes"
    compiler = " ".join(filter(None, (build.get("compiler"), build.get("compiler_version"))))
    kind = build.get("build_type") or "no build type"
    if build.get("sanitizer"):
        kind += f", {build['sanitizer']} sanitizer"
    return f"smrbench {build.get('version', '?')}{at}, {compiler or 'unknown compiler'}, {kind}"


def caption(identities: list[dict[str, Any]]) -> str:
    """Where a figure's numbers come from, from ``Store.identities``: every machine and build
    its rows were measured on and with."""
    machines = list(dict.fromkeys(describe_machine(item["machine"]) for item in identities))
    builds = list(dict.fromkeys(describe_build(item["build"]) for item in identities))
    if not machines:
        return ""
    return f"Measured on {' | '.join(machines)}; with {' | '.join(builds)}."
