"""The result store: insert, resume, no duplicates, failures, referenced files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from conftest import add_fake_run, fake_result
from smrlab.store import Failure, Store

K1 = '{"reclaimer":"debra","trial":0}'
K2 = '{"reclaimer":"debra","trial":1}'


def test_insert_and_query_columns(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        result = fake_result(reclaimer="qsbr", free="amortized", threads=8, throughput=2.5e6)
        assert store.add_run("e", '{"trial":0}', 0, result, ["smrbench", "--json"], 1.5)
        (run,) = store.runs("e")
    assert (run["reclaimer"], run["free"], run["threads"], run["throughput"]) == (
        "qsbr",
        "amortized",
        8,
        2.5e6,
    )
    assert run["insert_pct"] == 50 and run["validated"] == 1 and run["trial"] == 0
    assert run["result"]["config"]["reclaimer"] == "qsbr"
    # The columns people query need no quoting.
    db = sqlite3.connect(tmp_path / "r.db")
    assert db.execute(
        "SELECT reclaimer, free, insert_pct, erase_pct, peak_rss_bytes, "
        "garbage_peak, free_seconds, validated, timestamp FROM runs"
    ).fetchone()


def test_no_duplicates_and_resume(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        assert store.add_run("e", K1, 0, fake_result(), [])
        assert not store.add_run("e", K1, 0, fake_result(throughput=5.0), [])
        assert store.add_run("other", K1, 0, fake_result(), [])  # keys are per experiment
        assert store.stored_keys("e") == {K1}
        assert store.has_run("e", K1) and not store.has_run("e", K2)
        assert len(store.runs("e")) == 1 and store.runs("e")[0]["throughput"] == 1e6
    with Store(tmp_path / "r.db") as store:  # reopened: still there
        assert store.stored_keys("e") == {K1}
        assert store.experiments() == ["e", "other"]


def test_failures_recorded_replaced_and_cleared(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        failure = Failure("e", K1, 0, "timeout", "timed out after 5 s", None, "err", "", ["x"])
        store.add_failure(failure)
        store.add_failure(Failure("e", K1, 0, "exit", "exit status 1", 1, "boom", "", ["x"]))
        (row,) = store.failures("e")
        assert row["kind"] == "exit" and row["stderr"] == "boom"
        store.add_run("e", K1, 0, fake_result(), [])
        assert store.failures("e") == []


def test_files_are_referenced_relative_to_the_store(tmp_path: Path) -> None:
    data = tmp_path / "files" / "e" / "a.garbage"
    data.parent.mkdir(parents=True)
    data.write_text("x")
    with Store(tmp_path / "r.db") as store:
        store.add_run("e", K1, 0, fake_result(), [], files={"garbage_series": data})
        stored = store.db.execute("SELECT path FROM files").fetchone()[0]
        assert stored == "files/e/a.garbage"
        (entry,) = store.files("e", "garbage_series")
        assert entry["path"] == tmp_path / "files" / "e" / "a.garbage" and entry["exists"]


def test_fake_runs_helper(tmp_path: Path) -> None:
    with Store(tmp_path / "r.db") as store:
        add_fake_run(store, threads=1)
        add_fake_run(store, threads=2)
        assert len(store.runs()) == 2
