"""Select, export, merge: `smrlab run --only/--exclude`, `smrlab export` (CSV, JSON, Parquet,
the whole latency histogram), `smrlab merge` (no duplicates, provenance kept apart, files
copied) and figures drawn per machine."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import fake_result
from smrlab.cli import main
from smrlab.plots import build_plots
from smrlab.provenance import Identity
from smrlab.report import write_report
from smrlab.store import Store

TINY = """
[experiment]
name = "tiny"
[grid]
reclaimer = ["none", "debra"]
free = ["batch", "amortized"]
threads = [1, 2]
[fixed]
ds = "dgt_bst"
alloc = "glibc"
key_range = 512
duration = 0.05
trials = 1
"""


@pytest.mark.parametrize(
    ("selection", "count"),
    [
        ((), 8),
        (("--only", "reclaimer=debra"), 4),
        (("--only", "reclaimer=debra,none", "--only", "threads=2"), 4),
        (("--exclude", "free=amortized"), 4),
        (("--only", "reclaimer=debra", "--exclude", "threads=1"), 2),
    ],
)
def test_only_and_exclude_select_configurations(
    tmp_path: Path, fake_smrbench: Path, capsys, selection: tuple[str, ...], count: int
) -> None:
    experiment = tmp_path / "tiny.toml"
    experiment.write_text(TINY)
    argv = ["run", str(experiment), "--db", str(tmp_path / "r.db"), "--smrbench"]
    assert main([*argv, str(fake_smrbench), "--dry-run", *selection]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == count
    if "threads=2" in " ".join(selection):
        assert all("--threads 2" in line for line in lines)


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        (("--only", "reclaimr=debra"), "no configuration sets reclaimr"),
        (("--only", "reclaimer=hp"), "no configuration has reclaimer=hp \\(debra, none\\)"),
        (("--exclude", "threads"), "expected KEY=VALUE"),
        (("--only", "reclaimer=debra", "--exclude", "reclaimer=debra"), "leave no configuration"),
    ],
)
def test_a_selection_that_cannot_be_meant_is_refused(
    tmp_path: Path, fake_smrbench: Path, capsys, selection: tuple[str, ...], message: str
) -> None:
    experiment = tmp_path / "tiny.toml"
    experiment.write_text(TINY)
    argv = ["run", str(experiment), "--db", str(tmp_path / "r.db"), "--smrbench"]
    assert main([*argv, str(fake_smrbench), *selection]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert re.search(message, err)
    assert not (tmp_path / "r.db").exists()


HISTOGRAM = {"upper_ns": [15, 95, 1023], "counts": [4, 5, 1], "sum_ns": 2000}
MACHINE = {
    "cpu_model": "Example CPU",
    "sockets": 1,
    "cores": 2,
    "threads": 2,
    "threads_per_core": 1,
    "numa_nodes": 1,
    "caches": [{"level": 3, "type": "Unified", "size_bytes": 1 << 25, "shared_by": 2}],
    "memory_bytes": 1 << 30,
    "kernel": "6.1",
    "load_average": [0.1, 0.2, 0.3],
}


def _identity(host: str, build: str) -> Identity:
    from smrlab.provenance import machine_id

    machine = MACHINE | {"hostname": host}
    return Identity(machine_id(machine), build, machine, {"version": "1", "commit": "a" * 40})


def _result(identity: Identity, threads: int, histogram: dict | None = None) -> dict[str, Any]:
    result = fake_result(threads=threads, throughput=1e6 * threads)
    result["machine"], result["build"] = identity.machine, identity.build
    if histogram is not None:
        result["reclaimer"]["free_latency_histogram"] = histogram
    return result


def _fill(path: Path, identity: Identity, histogram: dict | None = None) -> None:
    with Store(path) as store:
        for threads in (1, 2):
            key = json.dumps({"threads": threads, "trial": 0})
            store.add_run(
                "exp", key, 0, _result(identity, threads, histogram), ["x"], identity=identity
            )


def test_export_writes_every_trial_with_the_whole_histogram(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    _fill(db, _identity("alpha", "b1"), HISTOGRAM)
    other = HISTOGRAM | {"upper_ns": [15, 2047], "counts": [7, 2]}
    with Store(db) as store:
        key = json.dumps({"threads": 4, "trial": 0})
        store.add_run(
            "exp",
            key,
            0,
            _result(_identity("alpha", "b1"), 4, other),
            ["x"],
            identity=_identity("alpha", "b1"),
        )
    for fmt in ("csv", "json", "parquet"):
        out = tmp_path / f"all.{fmt}"
        assert main(["export", "--db", str(db), "--format", fmt, "--out", str(out)]) == 0
        if fmt == "csv":
            with out.open() as file:
                rows = list(csv.DictReader(file))
        elif fmt == "json":
            rows = json.loads(out.read_text())
        else:
            import pyarrow.parquet as pq

            rows = pq.read_table(out).to_pylist()
        assert len(rows) == 3
        row = next(r for r in rows if str(r["threads"]) == "4")
        # Every bucket any trial used, 0 where this one used none.
        buckets = {k: int(v) for k, v in row.items() if k.startswith("free_latency_ns.le_")}
        assert buckets == {
            "free_latency_ns.le_15": 7,
            "free_latency_ns.le_95": 0,
            "free_latency_ns.le_1023": 0,
            "free_latency_ns.le_2047": 2,
        }
        assert row["machine.hostname"] == "alpha" and row["build_id"] == "b1"
        assert float(row["throughput_ops_per_s"]) == 4e6
        assert "reclaimer.garbage_peak" in row and not any(k.startswith("trials.") for k in row)


def test_export_refuses_parquet_without_pyarrow(tmp_path: Path, monkeypatch, capsys) -> None:
    db = tmp_path / "r.db"
    _fill(db, _identity("alpha", "b1"))
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    out = tmp_path / "x.parquet"
    assert main(["export", "--db", str(db), "--format", "parquet", "--out", str(out)]) == 2
    assert "pip install 'smrlab[parquet]'" in capsys.readouterr().err
    assert not out.exists()


def test_merge_keeps_machines_apart_and_adds_nothing_twice(tmp_path: Path, capsys) -> None:
    alpha, beta, merged = tmp_path / "a" / "a.db", tmp_path / "b" / "b.db", tmp_path / "m.db"
    _fill(alpha, _identity("alpha", "b1"))
    _fill(beta, _identity("beta", "b1"))
    recording = beta.parent / "files" / "exp" / "one.garbage"
    recording.parent.mkdir(parents=True)
    recording.write_text("recorded")
    with Store(beta) as store:
        key = json.dumps({"threads": 1, "trial": 0})
        ident = _identity("beta", "b1")
        store.db.execute(
            "INSERT INTO files (experiment, config_key, machine_id, build_id, kind, path) "
            "VALUES ('exp', ?, ?, 'b1', 'timeline', 'files/exp/one.garbage')",
            (key, ident.machine_id),
        )
        store.db.commit()
    assert main(["merge", str(alpha), str(beta), "--db", str(merged)]) == 0
    err = capsys.readouterr().err
    assert "2 runs added, 0 already here" in err and "1 files" in err
    assert main(["merge", str(alpha), str(beta), "--db", str(merged)]) == 0
    assert capsys.readouterr().err.count("0 runs added, 2 already here") == 2
    with Store(merged, write=False) as store:
        runs = store.runs("exp")
        assert len(runs) == 4  # each configuration on each machine
        (copied,) = store.files("exp")
        assert copied["exists"] and copied["path"].read_text() == "recorded"
        assert str(copied["path"]).startswith(str(tmp_path / "files" / "merged"))
        plots, _ = build_plots(store, "exp")
    names = {plot.name for plot in plots}
    assert any(name.endswith("-on-alpha") for name in names)
    assert any(name.endswith("-on-beta") for name in names)
    assert all("· on " in plot.title for plot in plots)
    with Store(merged, write=False) as store:
        page = write_report(store, tmp_path / "report")[0].read_text()
    # The tables too, once per machine: each with its own two configurations.
    assert page.count("<h3>On alpha</h3>") == page.count("<h3>On beta</h3>") == 1
    # Compared across the two machines' stores: matched on everything but the machine.
    assert main(["compare", "--db", str(alpha), "--against-db", str(beta), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["pairs"]) == 2
    assert main(["merge", str(merged), "--db", str(merged)]) == 2
    assert "is the store merged into" in capsys.readouterr().err


def test_smrbench_reports_every_bucket_of_the_free_latency(smrbench: Path) -> None:
    argv = [str(smrbench), "--ds", "dgt_bst", "--reclaimer", "debra", "--threads", "2"]
    argv += ["--key-range", "256", "--ops", "20000", "--time-frees-every", "1", "--json"]
    done = subprocess.run([*argv, "--quiet"], capture_output=True, text=True, check=True)
    reclaimer = json.loads(done.stdout)["reclaimer"]
    histogram = reclaimer["free_latency_histogram"]
    assert sum(histogram["counts"]) == reclaimer["free_calls"] > 0
    assert histogram["upper_ns"] == sorted(set(histogram["upper_ns"]))
    assert all(count > 0 for count in histogram["counts"])  # only buckets that were used
    # The reported percentiles are bucket bounds of this histogram (the max is exact).
    assert reclaimer["free_latency_ns"]["p50"] in histogram["upper_ns"] + [
        reclaimer["free_latency_ns"]["max"]
    ]
    assert histogram["sum_ns"] >= sum(histogram["counts"])


def test_a_workload_is_selected_by_its_name(tmp_path: Path, fake_smrbench: Path, capsys) -> None:
    experiment = tmp_path / "w.toml"
    experiment.write_text(TINY.replace("threads = [1, 2]", 'workload = ["50/50", "5/5"]'))
    argv = ["run", str(experiment), "--db", str(tmp_path / "r.db"), "--smrbench"]
    assert main([*argv, str(fake_smrbench), "--dry-run", "--only", "workload=5/5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and all("--insert 5 " in line for line in lines)
    assert main([*argv, str(fake_smrbench), "--dry-run", "--only", "workload=25/25"]) == 2
    assert "no configuration has workload=25/25 (5/5, 50/50)" in capsys.readouterr().err
