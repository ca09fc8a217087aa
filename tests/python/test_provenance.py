"""Provenance: the machine and build objects smrbench reports, and the identities smrlab keys
stored results by."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from smrlab.provenance import (
    UNKNOWN,
    binary_id,
    describe_build,
    describe_machine,
    identity,
    machine_id,
)

MACHINE = {
    "cpu_model": "Example CPU 9000",
    "sockets": 2,
    "cores": 4,
    "threads": 8,
    "threads_per_core": 2,
    "numa_nodes": 2,
    "caches": [
        {"level": 1, "type": "Data", "size_bytes": 49152, "shared_by": 2},
        {"level": 3, "type": "Unified", "size_bytes": 33554432, "shared_by": 4},
    ],
    "memory_bytes": 1 << 30,
    "kernel": "6.1.0-18-amd64",
    "hostname": "twosocket",
    "virtualization": {"hypervisor": True, "system": "QEMU Standard PC", "container": None},
    "load_average": [0.5, 0.25, 0.1],
    "governor": "performance",
    "hardware_threads": 8,
    "cpus": 8,
}
BUILD = {
    "version": "1.2.0",
    "commit": "0123456789abcdef0123456789abcdef01234567",
    "dirty": True,
    "compiler": "GNU",
    "compiler_version": "12.2.0",
    "flags": "-O3 -DNDEBUG",
    "build_type": "Release",
    "sanitizer": None,
}


def test_a_machine_is_known_by_its_stable_fields_only() -> None:
    base = machine_id(MACHINE)
    assert len(base) == 16
    # What changes between two runs on one machine changes nothing.
    busy = MACHINE | {"load_average": [9.0, 9.0, 9.0], "governor": "powersave", "cpus": 2}
    assert machine_id(busy) == base
    # Another kernel or another host is another machine.
    assert machine_id(MACHINE | {"kernel": "6.8.0"}) != base
    assert machine_id(MACHINE | {"hostname": "other"}) != base
    # A result from before smrbench described machines has no identity.
    assert machine_id({"hardware_threads": 8, "cpus": 8}) == UNKNOWN


def test_a_binary_is_known_by_its_bytes(tmp_path: Path) -> None:
    one, same, other = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    one.write_bytes(b"program")
    same.write_bytes(b"program")
    other.write_bytes(b"program!")
    assert binary_id(one) == binary_id(same) != binary_id(other)


def test_descriptions_read_as_one_line() -> None:
    assert describe_machine(MACHINE) == (
        "twosocket: Example CPU 9000, 2 sockets, 4 cores x 2 threads, 2 NUMA nodes, "
        "L3 32 MiB, Linux 6.1.0-18-amd64, virtual machine (QEMU Standard PC)"
    )
    assert describe_machine({"hardware_threads": 4}) == (
        "an unrecorded machine (4 hardware threads)"
    )
    assert describe_build(BUILD) == (
        "smrbench 1.2.0 at 0123456789 with uncommitted changes, GNU 12.2.0, Release"
    )
    assert describe_build({}) == "unrecorded build"
    assert describe_build(BUILD | {"commit": None, "dirty": None, "sanitizer": "address"}) == (
        "smrbench 1.2.0 at an unknown commit, GNU 12.2.0, Release, address sanitizer"
    )


def test_smrbench_reports_this_machine_and_its_build(smrbench: Path, tmp_path: Path) -> None:
    listing = json.loads(
        subprocess.run(
            [str(smrbench), "--list", "--json"], capture_output=True, text=True, check=True
        ).stdout
    )
    machine, build = listing["machine"], listing["build"]
    assert machine["threads"] >= machine["cpus"] >= 1
    assert machine["cpus"] == len(os.sched_getaffinity(0))
    assert machine["sockets"] >= 1 and machine["cores"] >= 1 and machine["numa_nodes"] >= 1
    assert machine["kernel"] == os.uname().release
    assert build["build_type"] == "Release" and build["sanitizer"] is None
    assert build["compiler"] and build["compiler_version"] and "-O" in build["flags"]
    found = identity(smrbench, listing)
    assert found.machine_id == machine_id(machine) != UNKNOWN
    assert found.build_id == binary_id(smrbench)
    # Every result carries the same objects.
    result = json.loads(
        subprocess.run(
            [
                *(str(smrbench), "--ds", "dgt_bst", "--reclaimer", "none", "--threads", "1"),
                *("--key-range", "64", "--ops", "100", "--json", "--quiet"),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert result["build"] == build
    assert machine_id(result["machine"]) == found.machine_id
    threadtest = json.loads(
        subprocess.run(
            [
                *(str(smrbench), "threadtest", "--threads", "1", "--json", "--quiet"),
                *("--ops", "100"),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert threadtest["build"] == build and "cpu_model" in threadtest["machine"]


def test_the_report_and_each_figure_name_their_machines_and_builds(tmp_path: Path) -> None:
    from conftest import fake_result
    from smrlab.plots import build_plots
    from smrlab.provenance import Identity
    from smrlab.report import write_report
    from smrlab.store import Store

    laptop = MACHINE | {"hostname": "laptop"}
    here = Identity(machine_id(MACHINE), "b1", MACHINE, BUILD)
    there = Identity(machine_id(laptop), "b2", laptop, BUILD | {"dirty": False})
    with Store(tmp_path / "r.db") as store:
        for trial, where in enumerate((here, there)):
            for threads in (1, 2):
                result = fake_result(threads=threads) | {"machine": where.machine}
                result["build"] = where.build
                key = json.dumps({"threads": threads, "trial": trial})
                assert store.add_run("exp", key, trial, result, ["smrbench"], identity=where)
        plots, _ = build_plots(store, "exp")
        # One set of figures per machine, each captioned with its own machine and build.
        for host, dirty in (("twosocket", True), ("laptop", False)):
            mine = [plot for plot in plots if plot.title.endswith(f"· on {host}")]
            assert mine and all(
                plot.provenance.startswith(f"Measured on {host}: Example CPU 9000")
                and ("with uncommitted changes" in plot.provenance) == dirty
                for plot in mine
            )
        page = write_report(store, tmp_path / "report")[0].read_text()
    header = page[page.index("<h2>Provenance</h2>") : page.index("<nav>")]
    assert header.count("<tr>") == 3  # a heading and one row per machine and build
    assert "laptop: Example CPU 9000" in header and ">b2<" in header
    assert page.count('class="provenance">Measured on') == len(plots)


def test_numa_policy_and_placement_are_applied_and_reported(smrbench: Path) -> None:
    base = [str(smrbench), "--ds", "dgt_bst", "--reclaimer", "none", "--key-range", "64"]
    base += ["--ops", "100", "--json", "--quiet"]
    cpus = sorted(os.sched_getaffinity(0))
    threads = len(cpus) + 1  # one more than the CPUs: the order wraps around
    for policy in ("none", "local", "interleave"):
        done = subprocess.run(
            [*base, "--numa", policy, "--pin", "compact", "--threads", str(threads)],
            capture_output=True,
            text=True,
            check=True,
        )
        result = json.loads(done.stdout)
        numa = result["numa"]
        assert numa["policy"] == policy and numa["nodes"] == result["machine"]["numa_nodes"]
        # Here one node: the policy is set where the kernel lets it, and changes nothing.
        assert numa["applied"] or "one NUMA node" in numa["note"]
        placement = result["placement"]
        assert placement["pin"] == "compact" and len(placement["worker_cpus"]) == threads
        assert set(placement["worker_cpus"]) == set(cpus)
        assert placement["worker_cpus"][-1] == placement["worker_cpus"][0]
    refused = subprocess.run(
        [*base, "--numa", "everywhere"], capture_output=True, text=True, check=False
    )
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert "--numa" in refused.stderr and refused.stdout == ""


def test_prefill_by_the_main_thread_or_the_workers(smrbench: Path) -> None:
    base = [str(smrbench), "--threads", "2", "--ops", "500", "--json", "--quiet"]
    for ds, asked, ran in (
        ("stm_list", "auto", "main"),  # the allocator/STM paper's setup
        ("dgt_bst", "auto", "workers"),  # setbench's
        ("dgt_bst", "main", "main"),
        ("stm_list", "workers", "workers"),
    ):
        done = subprocess.run(
            [*base, "--ds", ds, "--key-range", "512", "--prefill-by", asked],
            capture_output=True,
            text=True,
            check=True,
        )
        result = json.loads(done.stdout)
        assert result["config"]["prefill_by"] == ran, (ds, asked)
        assert result["validated"]  # the main thread's keys are counted in the key sum
        # One thread stops at the target exactly; two may both add the last key.
        size = result["trials"][0]["prefill_size"]
        assert size == 256 if ran == "main" else 256 <= size <= 257
        assert result["trials"][0]["prefill_main_keys"] == (size if ran == "main" else 0)
    queue = subprocess.run(
        [*base, "--ds", "ms_queue", "--insert", "50", "--erase", "50", "--prefill-by", "main"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert queue.returncode == 2 and "--prefill-by main" in queue.stderr
